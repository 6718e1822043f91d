// Renders a parsed template: walks the statements, evaluates expressions, and keeps Jinja's
// scoping (a for-loop body is a fresh scope each iteration, `if` is not a scope, macros see the
// template's top-level variables). One Interpreter is one render; the syntax tree is shared.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "actors/chat_template/ast.h"
#include "actors/chat_template/builtins.h"
#include "actors/chat_template/value.h"

namespace zinfer::chat {

class Interpreter {
 public:
  // `context`: the template's variables (messages, add_generation_prompt, bos_token, ...).
  explicit Interpreter(Dict context);
  // Empties the namespaces the render assigned into: `{% set ns.me = ns %}` makes a cycle of
  // shared pointers that would otherwise outlive the render.
  ~Interpreter();
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  std::string render(const ast::Body& program);

  // Used by macros: renders `body` in a fresh scope (child of the top-level scope) holding `vars`.
  std::string render_in_new_scope(const ast::Body& body, std::vector<std::pair<std::string, Value>> vars);
  Value eval(const ast::Expr& expr);

 private:
  struct Frame {
    std::vector<std::pair<std::string, Value>> vars;
    Frame* parent = nullptr;
    Value* find(const std::string& name);
    void set(const std::string& name, Value value);
  };
  enum class Flow { Normal, Break, Continue };

  Flow render_body(const ast::Body& body, std::string& out);
  Flow render_stmt(const ast::Stmt& stmt, std::string& out);
  Flow render_if(const ast::If& node, std::string& out);
  Flow render_for(const ast::For& node, std::string& out);
  void render_set(const ast::Set& node);
  void assign(const ast::Target& target, Value value);

  Value eval_inner(const ast::Expr& expr);
  Value lookup(const std::string& name);
  CallArgs eval_args(const ast::Args& args);
  Value eval_binary(const ast::Binary& node);
  bool eval_compare(const ast::Compare& node);
  Value apply_filter(const ast::Filter& node, const Value& operand);

  // A render is bounded in work and in text, so that no template (a model's, or a request's under
  // --trust-request-chat-template) can hang or exhaust the tokenizer stage: each statement,
  // expression and loop iteration is a step, and no string (the output included) may pass
  // kMaxTemplateText bytes nor a list kMaxTemplateItems items (builtins.h); making a value costs
  // steps by its size. Real templates take thousands of steps (tens of thousands for a thousand
  // messages) and render kilobytes; a conversation at the context limit stays far inside both.
  static constexpr int64_t kMaxSteps = 1'000'000;
  void spend(const ast::Position& pos);
  Value checked_size(Value value, const ast::Position& pos);

  static constexpr int kMaxCallDepth = 100;
  int64_t steps_ = 0;
  std::vector<std::weak_ptr<Namespace>> assigned_namespaces_;
  std::unordered_set<const Namespace*> assigned_seen_;
  Frame root_;
  Frame* frame_ = &root_;
  int call_depth_ = 0;
};

}  // namespace zinfer::chat
