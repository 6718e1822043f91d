#include "actors/grammar/grammar.h"

#include <functional>
#include <set>
#include <unordered_map>

#include "actors/grammar/errors.h"

namespace zinfer::grammar {

Expr Expr::byte(uint8_t b) { return byte_range(b, b); }

Expr Expr::byte_range(uint8_t lo, uint8_t hi) {
  ByteSet set;
  for (unsigned b = lo; b <= hi; ++b) set.set(b);
  return byte_set(set);
}

Expr Expr::byte_set(const ByteSet& set) {
  Expr e;
  e.kind = Kind::kBytes;
  e.bytes = set;
  return e;
}

Expr Expr::literal(std::string_view bytes) {
  std::vector<Expr> items;
  items.reserve(bytes.size());
  for (char c : bytes) items.push_back(byte(static_cast<uint8_t>(c)));
  return seq(std::move(items));
}

Expr Expr::seq(std::vector<Expr> items) {
  if (items.size() == 1) return std::move(items[0]);
  Expr e;
  e.kind = Kind::kSeq;
  e.items = std::move(items);
  return e;
}

Expr Expr::alt(std::vector<Expr> items) {
  if (items.size() == 1) return std::move(items[0]);
  Expr e;
  e.kind = Kind::kAlt;
  e.items = std::move(items);
  return e;
}

Expr Expr::ref(uint32_t rule) {
  Expr e;
  e.kind = Kind::kRule;
  e.rule = rule;
  return e;
}

Expr Expr::repeat(Expr item, uint32_t min, uint32_t max) {
  Expr e;
  e.kind = Kind::kRepeat;
  e.items.push_back(std::move(item));
  e.min = min;
  e.max = max;
  return e;
}

uint32_t GrammarBuilder::declare(std::string name) {
  bodies_.push_back(Body{std::move(name), Expr{}, false});
  return static_cast<uint32_t>(bodies_.size() - 1);
}

void GrammarBuilder::define(uint32_t rule, Expr body) {
  bodies_.at(rule).expr = std::move(body);
  bodies_[rule].has_value = true;
}

uint32_t GrammarBuilder::add(std::string name, Expr body) {
  const uint32_t id = declare(std::move(name));
  define(id, std::move(body));
  return id;
}

namespace {

// Far above any schema or grammar a request carries; it bounds the memory a hostile one can take.
constexpr size_t kMaxElements = 4'000'000;

// Repetitions up to this many are unrolled (a few rules); longer ones are counted.
constexpr uint32_t kMaxUnrolled = 4;

class Lowering {
 public:
  // `bodies` (indexed by declared rule) tell whether a referenced rule can match nothing.
  Lowering(size_t declared, const std::vector<const Expr*>& bodies) : alts_(declared), bodies_(bodies) {}

  uint32_t new_rule(std::string name) {
    names_.push_back(std::move(name));
    alts_.emplace_back();
    return static_cast<uint32_t>(alts_.size() - 1);
  }
  void set_names(std::vector<std::string> names) { names_ = std::move(names); }

  void lower_rule(uint32_t rule, const Expr& body) {
    if (body.kind == Expr::Kind::kAlt) {
      for (const Expr& alt : body.items) lower_alternative(rule, alt);
    } else {
      lower_alternative(rule, body);
    }
  }

  Grammar finish(uint32_t root) {
    Grammar g;
    g.root = root;
    g.rules.resize(alts_.size());
    for (size_t r = 0; r < alts_.size(); ++r) {
      g.rules[r].name = names_[r];
      for (const auto& alt : alts_[r]) {
        g.rules[r].alternatives.push_back(static_cast<uint32_t>(g.elements.size()));
        for (const Element& e : alt) g.elements.push_back(e);
        g.elements.push_back(Element{Element::Kind::kEnd, 0});
      }
    }
    g.byte_sets = std::move(sets_);
    g.repeats = std::move(repeats_);
    return g;
  }

 private:
  void lower_alternative(uint32_t rule, const Expr& e) {
    std::vector<Element> seq;
    const std::string context = names_[rule];  // a copy: new rules grow names_
    append(seq, e, context);
    count_ += seq.size() + 1;
    if (count_ > kMaxElements) throw GrammarError("grammar", "the grammar is too large (over 4M elements)");
    alts_[rule].push_back(std::move(seq));
  }

  uint32_t set_index(const ByteSet& set) {
    auto [it, inserted] = set_ids_.try_emplace(set, static_cast<uint32_t>(sets_.size()));
    if (inserted) sets_.push_back(set);
    return it->second;
  }

  Element atom(const Expr& e, const std::string& context) {
    if (e.kind == Expr::Kind::kBytes) return Element{Element::Kind::kBytes, set_index(e.bytes)};
    if (e.kind == Expr::Kind::kRule) return Element{Element::Kind::kRule, e.rule};
    if ((e.kind == Expr::Kind::kSeq || e.kind == Expr::Kind::kAlt) && e.items.size() == 1)
      return atom(e.items[0], context);
    const uint32_t aux = new_rule(context + "_");
    lower_rule(aux, e);
    return Element{Element::Kind::kRule, aux};
  }

  void append(std::vector<Element>& seq, const Expr& e, const std::string& context) {
    switch (e.kind) {
      case Expr::Kind::kBytes:
      case Expr::Kind::kRule:
        seq.push_back(atom(e, context));
        return;
      case Expr::Kind::kSeq:
        for (const Expr& item : e.items) append(seq, item, context);
        return;
      case Expr::Kind::kAlt:
        seq.push_back(atom(e, context));
        return;
      case Expr::Kind::kRepeat:
        append_repeat(seq, e, context);
        return;
    }
  }

  // x{m,n}: m copies of x, then a chain of nested optionals O_k ::= x O_(k-1) | "" so that each
  // count is reached one way only (no ambiguity for the automaton to carry). x*: S ::= x S | "".
  void append_repeat(std::vector<Element>& seq, const Expr& e, const std::string& context) {
    if (e.max == 0) return;
    if (e.max != kUnbounded && e.max < e.min)
      throw GrammarError("repetition", "repetition {" + std::to_string(e.min) + "," + std::to_string(e.max) +
                                           "} has its maximum below its minimum");
    if (e.min > kMaxElements || (e.max != kUnbounded && e.max > kMaxElements))
      throw GrammarError("repetition", "repetition count " + std::to_string(e.max) + " is too large");
    const bool long_count = e.max == kUnbounded ? e.min > kMaxUnrolled : e.max > kMaxUnrolled;
    if (long_count && consumes(e.items[0])) {
      // Counted: x{m,n} as one element; x{m,} as x{m,m} then x*.
      Element x = atom(e.items[0], context);
      if (x.kind != Element::Kind::kRule) {
        const uint32_t wrap = new_rule(context + "_item");
        alts_[wrap].push_back({x});
        x = Element{Element::Kind::kRule, wrap};
      }
      const uint32_t counted_max = e.max == kUnbounded ? e.min : e.max;
      repeats_.push_back(Repeat{x.arg, e.min, counted_max});
      seq.push_back(Element{Element::Kind::kRepeat, static_cast<uint32_t>(repeats_.size() - 1)});
      if (e.max == kUnbounded) append_repeat(seq, Expr::star(e.items[0]), context);
      return;
    }
    const Element x = atom(e.items[0], context);
    for (uint32_t i = 0; i < e.min; ++i) seq.push_back(x);
    if (e.max == kUnbounded) {
      const uint32_t star = new_rule(context + "_star");
      alts_[star].push_back({x, Element{Element::Kind::kRule, star}});
      alts_[star].push_back({});
      count_ += 5;
      seq.push_back(Element{Element::Kind::kRule, star});
      return;
    }
    uint32_t chain = kUnbounded;
    for (uint32_t k = 1; k <= e.max - e.min; ++k) {
      const uint32_t opt = new_rule(context + "_opt");
      if (chain == kUnbounded) alts_[opt].push_back({x});
      else alts_[opt].push_back({x, Element{Element::Kind::kRule, chain}});
      alts_[opt].push_back({});
      count_ += 5;
      if (count_ > kMaxElements) throw GrammarError("grammar", "the grammar is too large (over 4M elements)");
      chain = opt;
    }
    if (chain != kUnbounded) seq.push_back(Element{Element::Kind::kRule, chain});
  }

  // Whether every match of e consumes at least one byte (rules followed through their bodies;
  // a rule met again on the way counts as possibly empty).
  bool consumes(const Expr& e) {
    switch (e.kind) {
      case Expr::Kind::kBytes: return true;
      case Expr::Kind::kSeq:
        for (const Expr& item : e.items)
          if (consumes(item)) return true;
        return false;
      case Expr::Kind::kAlt:
        for (const Expr& item : e.items)
          if (!consumes(item)) return false;
        return !e.items.empty();
      case Expr::Kind::kRepeat: return e.min > 0 && consumes(e.items[0]);
      case Expr::Kind::kRule: {
        if (e.rule >= bodies_.size() || !bodies_[e.rule] || visiting_.count(e.rule)) return false;
        visiting_.insert(e.rule);
        const bool result = consumes(*bodies_[e.rule]);
        visiting_.erase(e.rule);
        return result;
      }
    }
    return false;
  }

  std::vector<std::vector<std::vector<Element>>> alts_;
  const std::vector<const Expr*>& bodies_;
  std::set<uint32_t> visiting_;
  std::vector<Repeat> repeats_;
  std::vector<std::string> names_;
  std::vector<ByteSet> sets_;
  std::unordered_map<ByteSet, uint32_t> set_ids_;
  size_t count_ = 0;
};

// The automaton expands rule references depth first; a rule that can reach itself without
// consuming a byte (left recursion, directly or through nullable prefixes) would expand forever.
void reject_left_recursion(const Grammar& g) {
  const size_t n = g.rules.size();
  std::vector<char> nullable(n, 0);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < n; ++r) {
      if (nullable[r]) continue;
      for (uint32_t start : g.rules[r].alternatives) {
        bool all = true;
        for (uint32_t p = start; g.elements[p].kind != Element::Kind::kEnd; ++p) {
          const Element& e = g.elements[p];
          const bool empty_ok = e.kind == Element::Kind::kRule     ? nullable[e.arg]
                                : e.kind == Element::Kind::kRepeat ? g.repeats[e.arg].min == 0
                                                                   : false;
          if (!empty_ok) {
            all = false;
            break;
          }
        }
        if (all) {
          nullable[r] = 1;
          changed = true;
          break;
        }
      }
    }
  }
  std::vector<std::vector<uint32_t>> corner(n);
  for (size_t r = 0; r < n; ++r)
    for (uint32_t start : g.rules[r].alternatives)
      for (uint32_t p = start;; ++p) {
        const Element& e = g.elements[p];
        if (e.kind == Element::Kind::kRule) {
          corner[r].push_back(e.arg);
          if (!nullable[e.arg]) break;
        } else if (e.kind == Element::Kind::kRepeat) {
          corner[r].push_back(g.repeats[e.arg].rule);  // its rule always consumes
          if (g.repeats[e.arg].min > 0) break;
        } else {
          break;
        }
      }
  std::vector<char> color(n, 0);  // 0 unvisited, 1 on the path, 2 done
  std::function<void(uint32_t)> visit = [&](uint32_t r) {
    color[r] = 1;
    for (uint32_t next : corner[r]) {
      if (color[next] == 1)
        throw GrammarError(g.rules[next].name, "rule '" + g.rules[next].name +
                                                   "' is left-recursive (it can reach itself without consuming input)");
      if (color[next] == 0) visit(next);
    }
    color[r] = 2;
  };
  for (uint32_t r = 0; r < n; ++r)
    if (color[r] == 0) visit(r);
}

}  // namespace

Grammar GrammarBuilder::build(uint32_t root) && {
  std::vector<const Expr*> bodies;
  for (const Body& b : bodies_) bodies.push_back(b.has_value ? &b.expr : nullptr);
  Lowering lowering(bodies_.size(), bodies);
  std::vector<std::string> names;
  for (const Body& b : bodies_) names.push_back(b.name);
  lowering.set_names(std::move(names));
  for (size_t r = 0; r < bodies_.size(); ++r) {
    if (!bodies_[r].has_value)
      throw GrammarError(bodies_[r].name, "rule '" + bodies_[r].name + "' is referenced but never defined");
    lowering.lower_rule(static_cast<uint32_t>(r), bodies_[r].expr);
  }
  Grammar g = lowering.finish(root);
  reject_left_recursion(g);
  return g;
}

namespace {

std::string set_to_string(const ByteSet& set) {
  if (set.count() == 1) {
    for (unsigned b = 0; b < 256; ++b)
      if (set.test(b)) {
        if (b >= 0x20 && b < 0x7f && b != '"' && b != '\\') return std::string("\"") + static_cast<char>(b) + "\"";
        char buf[8];
        snprintf(buf, sizeof buf, "[\\x%02X]", b);
        return buf;
      }
  }
  std::string out = "[";
  for (unsigned b = 0; b < 256;) {
    if (!set.test(b)) {
      ++b;
      continue;
    }
    unsigned e = b;
    while (e + 1 < 256 && set.test(e + 1)) ++e;
    char buf[16];
    if (e == b) snprintf(buf, sizeof buf, "\\x%02X", b);
    else snprintf(buf, sizeof buf, "\\x%02X-\\x%02X", b, e);
    out += buf;
    b = e + 1;
  }
  return out + "]";
}

}  // namespace

std::string to_string(const Grammar& g) {
  std::string out;
  for (size_t r = 0; r < g.rules.size(); ++r) {
    out += g.rules[r].name + "#" + std::to_string(r) + " ::=";
    bool first = true;
    for (uint32_t start : g.rules[r].alternatives) {
      out += first ? " " : " | ";
      first = false;
      if (g.elements[start].kind == Element::Kind::kEnd) out += "\"\"";
      for (uint32_t p = start; g.elements[p].kind != Element::Kind::kEnd; ++p) {
        const Element& e = g.elements[p];
        if (p != start) out += " ";
        if (e.kind == Element::Kind::kBytes) {
          out += set_to_string(g.byte_sets[e.arg]);
        } else if (e.kind == Element::Kind::kRepeat) {
          const Repeat& rep = g.repeats[e.arg];
          out += g.rules[rep.rule].name + "#" + std::to_string(rep.rule) + "{" + std::to_string(rep.min) + "," +
                 std::to_string(rep.max) + "}";
        } else {
          out += g.rules[e.arg].name + "#" + std::to_string(e.arg);
        }
      }
    }
    out += "\n";
  }
  return out;
}

}  // namespace zinfer::grammar
