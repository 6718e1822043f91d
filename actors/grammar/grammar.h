// A context-free grammar over bytes, the one form every source (JSON Schema, regex, choice, GBNF)
// compiles to. Front ends describe rules as expression trees (Expr: byte sets, sequences,
// alternations, rule references, bounded or unbounded repetition); GrammarBuilder lowers them to
// the flat Grammar the pushdown automaton runs: every rule a list of alternatives, every
// alternative a run of elements (a byte set to consume or a rule to enter) closed by an end marker.
#pragma once

#include <bitset>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace zinfer::grammar {

using ByteSet = std::bitset<256>;

inline constexpr uint32_t kUnbounded = std::numeric_limits<uint32_t>::max();

struct Expr {
  enum class Kind : uint8_t { kBytes, kSeq, kAlt, kRule, kRepeat };
  Kind kind = Kind::kSeq;
  ByteSet bytes;              // kBytes
  std::vector<Expr> items;    // kSeq, kAlt; kRepeat: the one repeated item
  uint32_t rule = 0;          // kRule
  uint32_t min = 0, max = 0;  // kRepeat; max may be kUnbounded

  static Expr empty() { return Expr{}; }
  static Expr byte(uint8_t b);
  static Expr byte_range(uint8_t lo, uint8_t hi);
  static Expr byte_set(const ByteSet& set);
  static Expr literal(std::string_view bytes);
  static Expr seq(std::vector<Expr> items);
  static Expr alt(std::vector<Expr> items);
  static Expr ref(uint32_t rule);
  static Expr repeat(Expr item, uint32_t min, uint32_t max);
  static Expr optional(Expr item) { return repeat(std::move(item), 0, 1); }
  static Expr star(Expr item) { return repeat(std::move(item), 0, kUnbounded); }
  static Expr plus(Expr item) { return repeat(std::move(item), 1, kUnbounded); }
};

struct Element {
  // kRepeat: a counted repetition of a rule that always consumes input; the automaton keeps the
  // count in the stack frame instead of unrolling x{m,n} into n rules.
  enum class Kind : uint8_t { kBytes, kRule, kRepeat, kEnd };
  Kind kind;
  uint32_t arg;  // kBytes: index into Grammar::byte_sets; kRule: rule id; kRepeat: index into repeats
};

struct Repeat {
  uint32_t rule;
  uint32_t min, max;  // max is finite
};

struct Grammar {
  struct Rule {
    std::string name;
    std::vector<uint32_t> alternatives;  // each the index of its first element in `elements`
  };
  std::vector<Element> elements;
  std::vector<ByteSet> byte_sets;
  std::vector<Repeat> repeats;
  std::vector<Rule> rules;
  uint32_t root = 0;
};

class GrammarBuilder {
 public:
  // A rule that can be referenced before it is defined (recursion, $ref).
  uint32_t declare(std::string name);
  void define(uint32_t rule, Expr body);
  uint32_t add(std::string name, Expr body);
  bool defined(uint32_t rule) const { return rule < bodies_.size() && bodies_[rule].has_value; }
  // Lowers every rule; throws GrammarError for a rule declared but never defined, for left
  // recursion (the automaton expands rules depth first and would not terminate) and for a grammar
  // above the size limit.
  Grammar build(uint32_t root) &&;

 private:
  struct Body {
    std::string name;
    Expr expr;
    bool has_value = false;
  };
  std::vector<Body> bodies_;
};

// Human-readable dump of the lowered grammar in GBNF-like notation (tests, error messages).
std::string to_string(const Grammar& grammar);

}  // namespace zinfer::grammar
