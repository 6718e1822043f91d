#include "actors/chat_template/parser.h"

#include <set>

#include "actors/chat_template/expression_parser.h"
#include "actors/chat_template/lexer.h"
#include "actors/chat_template/template_error.h"

namespace zinfer::chat {
namespace {

using namespace ast;
using T = Token::Type;

const std::set<std::string> kEndTags = {"elif", "else", "endif", "endfor", "endset", "endmacro",
                                        "endfilter", "endgeneration"};
// Jinja tags we know of but do not implement: named so that the error says "unsupported", not "unknown".
const std::set<std::string> kUnsupportedTags = {"include", "extends", "import", "from", "block", "call",
                                                "raw", "with", "autoescape", "do", "trans"};

class Parser : public ExpressionParser {
 public:
  using ExpressionParser::ExpressionParser;

  Body parse() {
    std::string end_tag;
    Body body = parse_body({}, end_tag);
    return body;
  }

 private:
  // ---- statements ----

  // Parses until one of `end_tags` (left unconsumed after its name; stored in `found`) or the end.
  Body parse_body(const std::set<std::string>& end_tags, std::string& found) {
    Body body;
    while (true) {
      const Token& t = cur();
      if (t.type == T::End) {
        if (!end_tags.empty()) {
          std::string closing = *end_tags.begin();
          for (const auto& tag : end_tags)
            if (tag.rfind("end", 0) == 0) closing = tag;
          fail("unexpected end of template: missing '{% " + closing + " %}'");
        }
        return body;
      }
      if (t.type == T::Text) {
        body.push_back(std::make_unique<Text>(pos(), t.text));
        advance();
      } else if (t.type == T::VariableBegin) {
        advance();
        const Position p = pos();
        auto value = parse_tuple_expression();
        if (cur().type != T::VariableEnd) fail("expected '}}', got " + describe(cur()));
        advance();
        body.push_back(std::make_unique<Print>(p, std::move(value)));
      } else if (t.type == T::BlockBegin) {
        advance();
        if (cur().type != T::Name) fail("expected a tag name after '{%', got " + describe(cur()));
        const std::string tag = cur().text;
        if (end_tags.count(tag)) {
          found = tag;
          advance();
          return body;
        }
        body.push_back(parse_statement());
      } else {
        fail("unexpected " + describe(t));
      }
    }
  }

  StmtPtr parse_statement() {
    const NestingGuard guard(*this);
    const Position p = pos();
    const std::string tag = advance().text;
    if (tag == "if") return parse_if(p);
    if (tag == "for") return parse_for(p);
    if (tag == "set") return parse_set(p);
    if (tag == "macro") return parse_macro(p);
    if (tag == "filter") return parse_filter_block(p);
    if (tag == "generation") {
      auto scope = std::make_unique<Scope>(p);
      expect_block_end();
      std::string found;
      scope->body = parse_body({"endgeneration"}, found);
      expect_block_end();
      return scope;
    }
    if (tag == "break" || tag == "continue") {
      if (loop_depth_ == 0) throw TemplateError("'" + tag + "' outside of a loop", p.line, p.column);
      expect_block_end();
      if (tag == "break") return std::make_unique<Break>(p);
      return std::make_unique<Continue>(p);
    }
    if (kUnsupportedTags.count(tag)) throw TemplateError("unsupported tag '" + tag + "'", p.line, p.column);
    if (kEndTags.count(tag)) throw TemplateError("unexpected tag '" + tag + "'", p.line, p.column);
    throw TemplateError("unknown tag '" + tag + "'", p.line, p.column);
  }

  StmtPtr parse_if(Position p) {
    auto node = std::make_unique<If>(p);
    ExprPtr condition = parse_tuple_expression();
    while (true) {
      expect_block_end();
      std::string found;
      Body body = parse_body({"elif", "else", "endif"}, found);
      node->branches.emplace_back(std::move(condition), std::move(body));
      if (found == "elif") {
        condition = parse_tuple_expression();
        continue;
      }
      if (found == "else") {
        expect_block_end();
        node->else_body = parse_body({"endif"}, found);
      }
      expect_block_end();
      return node;
    }
  }

  StmtPtr parse_for(Position p) {
    auto node = std::make_unique<For>(p);
    const bool parenthesized = accept_op("(");
    do {
      node->targets.push_back(expect_name("a loop variable name"));
    } while (accept_op(","));
    if (parenthesized) expect_op(")");
    if (!accept_name("in")) fail("expected 'in' in for loop, got " + describe(cur()));
    node->iterable = parse_tuple_expression(/*with_condition=*/false);
    if (accept_name("if")) node->filter = parse_expression();
    if (is_name("recursive")) fail("unsupported construct: recursive for loop");
    expect_block_end();
    ++loop_depth_;
    std::string found;
    node->body = parse_body({"else", "endfor"}, found);
    --loop_depth_;
    if (found == "else") {
      expect_block_end();
      node->else_body = parse_body({"endfor"}, found);  // break/continue here would leave the outer loop
    }
    expect_block_end();
    return node;
  }

  Target parse_target() {
    Target target;
    target.pos = pos();
    target.name = expect_name("a variable name");
    if (accept_op(".")) target.attribute = expect_name("an attribute name");
    return target;
  }

  StmtPtr parse_set(Position p) {
    std::vector<Target> targets;
    do {
      targets.push_back(parse_target());
    } while (accept_op(","));
    if (accept_op("=")) {
      auto node = std::make_unique<Set>(p);
      node->targets = std::move(targets);
      node->value = parse_tuple_expression();
      expect_block_end();
      return node;
    }
    if (targets.size() != 1) fail("expected '=' after the assignment targets");
    if (is_op("|")) fail("unsupported construct: filtered block set");
    expect_block_end();
    auto node = std::make_unique<BlockSet>(p);
    node->target = std::move(targets[0]);
    std::string found;
    node->body = parse_body({"endset"}, found);
    expect_block_end();
    return node;
  }

  StmtPtr parse_macro(Position p) {
    auto node = std::make_unique<Macro>(p);
    node->name = expect_name("a macro name");
    expect_op("(");
    while (!is_op(")")) {
      std::string param = expect_name("a parameter name");
      ExprPtr default_value;
      if (accept_op("=")) default_value = parse_expression();
      node->params.emplace_back(std::move(param), std::move(default_value));
      if (!accept_op(",")) break;
    }
    expect_op(")");
    expect_block_end();
    const int saved_depth = loop_depth_;
    loop_depth_ = 0;  // a macro body is not inside the caller's loop
    std::string found;
    node->body = parse_body({"endmacro"}, found);
    loop_depth_ = saved_depth;
    expect_block_end();
    return node;
  }

  StmtPtr parse_filter_block(Position p) {
    auto node = std::make_unique<FilterBlock>(p);
    do {
      node->filters.push_back(parse_filter(nullptr));
    } while (accept_op("|"));
    expect_block_end();
    std::string found;
    node->body = parse_body({"endfilter"}, found);
    expect_block_end();
    return node;
  }

  int loop_depth_ = 0;
};

}  // namespace

Body parse_template(const std::string& source) { return Parser(tokenize(source)).parse(); }

}  // namespace zinfer::chat
