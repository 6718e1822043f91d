#include "actors/grammar/json_schema.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "actors/grammar/errors.h"
#include "actors/grammar/json_numbers.h"
#include "actors/grammar/regex.h"
#include "actors/grammar/utf8_class.h"

namespace zinfer::grammar {

namespace {

using Json = nlohmann::ordered_json;

constexpr uint32_t kNone = kUnbounded;
constexpr int kMaxDepth = 64;
constexpr uint32_t kMaxWhitespaceIndent = 24;

const std::vector<CodepointRange> kRawStringChars = {{0x20, 0x21}, {0x23, 0x5B}, {0x5D, kMaxCodepoint}};

// The JSON building blocks shared by every schema of one grammar, each made once.
class JsonBlocks {
 public:
  explicit JsonBlocks(GrammarBuilder& b) : b_(b) {}

  Expr ws() {
    if (ws_ == kNone)
      ws_ = b_.add("ws", Expr::alt({Expr::empty(), Expr::byte(' '),
                                    Expr::seq({Expr::byte('\n'), Expr::repeat(Expr::byte_set(ByteSet().set(' ').set('\t')), 0,
                                                                              kMaxWhitespaceIndent)})}));
    return Expr::ref(ws_);
  }

  // One character of a string's contents: a raw character or an escape.
  Expr character() {
    if (char_ == kNone) {
      const Expr hex = Expr::byte_set(hex_set());
      ByteSet not_d = hex_set();
      not_d.reset('d').reset('D');
      ByteSet low_octal;
      for (char c = '0'; c <= '7'; ++c) low_octal.set(static_cast<uint8_t>(c));
      // \uXXXX outside the surrogates, so that every escape is one character.
      Expr unicode = Expr::alt({Expr::seq({Expr::byte_set(not_d), hex, hex, hex}),
                                Expr::seq({Expr::byte_set(ByteSet().set('d').set('D')), Expr::byte_set(low_octal), hex, hex})});
      ByteSet simple;
      for (char c : std::string("\"\\/bfnrt")) simple.set(static_cast<uint8_t>(c));
      Expr escape = Expr::seq({Expr::byte('\\'), Expr::alt({Expr::byte_set(simple), Expr::seq({Expr::byte('u'), unicode})})});
      char_ = b_.add("char", Expr::alt({utf8_class(kRawStringChars), std::move(escape)}));
    }
    return Expr::ref(char_);
  }

  Expr string() {
    if (string_ == kNone) string_ = b_.add("string", Expr::seq({Expr::byte('"'), Expr::star(character()), Expr::byte('"')}));
    return Expr::ref(string_);
  }

  Expr number() {
    if (number_ == kNone) number_ = b_.add("number", json_number({}, "number"));
    return Expr::ref(number_);
  }

  Expr value() {
    if (value_ == kNone) {
      value_ = b_.declare("value");
      const uint32_t object = b_.declare("object"), array = b_.declare("array");
      b_.define(value_, Expr::alt({Expr::ref(object), Expr::ref(array), string(), number(), Expr::literal("true"),
                                   Expr::literal("false"), Expr::literal("null")}));
      Expr member = Expr::seq({string(), Expr::byte(':'), ws(), Expr::ref(value_)});
      b_.define(object, Expr::seq({Expr::byte('{'), ws(),
                                   Expr::optional(Expr::seq({member, Expr::star(Expr::seq({Expr::byte(','), ws(), member})), ws()})),
                                   Expr::byte('}')}));
      b_.define(array, Expr::seq({Expr::byte('['), ws(),
                                  Expr::optional(Expr::seq({Expr::ref(value_),
                                                            Expr::star(Expr::seq({Expr::byte(','), ws(), Expr::ref(value_)})), ws()})),
                                  Expr::byte(']')}));
      object_ = object;
    }
    return Expr::ref(value_);
  }

  Expr object() {
    value();
    return Expr::ref(object_);
  }

 private:
  static ByteSet hex_set() {
    ByteSet s;
    for (const char* p = "0123456789abcdefABCDEF"; *p; ++p) s.set(static_cast<uint8_t>(*p));
    return s;
  }

  GrammarBuilder& b_;
  uint32_t ws_ = kNone, char_ = kNone, string_ = kNone, number_ = kNone, value_ = kNone, object_ = kNone;
};

const std::set<std::string> kAnnotations = {"title",   "description", "default",  "examples",  "$schema",
                                            "$id",     "$comment",    "deprecated", "readOnly", "writeOnly",
                                            "$defs",   "definitions"};
const std::set<std::string> kHandled = {
    "type",      "enum",      "const",     "anyOf",     "oneOf",     "allOf",   "$ref",
    "properties", "required", "additionalProperties",  "items",     "prefixItems", "minItems",
    "maxItems",  "uniqueItems", "minLength", "maxLength", "pattern", "format",  "minimum",
    "maximum",   "exclusiveMinimum", "exclusiveMaximum"};
const std::set<std::string> kObjectKeys = {"properties", "required", "additionalProperties"};
const std::set<std::string> kArrayKeys = {"items", "prefixItems", "minItems", "maxItems", "uniqueItems"};
const std::set<std::string> kStringKeys = {"minLength", "maxLength", "pattern", "format"};
const std::set<std::string> kNumberKeys = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"};

// Regular subsets of the formats (json_schema.h says which).
const std::map<std::string, std::string> kFormats = {
    {"date", R"(\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|02-(?:0[1-9]|1\d|2[0-8])))"},
    {"time", R"((?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{1,6})?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d))"},
    {"date-time",
     R"(\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|02-(?:0[1-9]|1\d|2[0-8]))T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{1,6})?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d))"},
    {"uuid", R"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})"},
    {"email", R"([A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)+)"},
    {"ipv4", R"((?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d))"},
};

bool matches_type(const Json& v, const std::string& type) {
  if (type == "null") return v.is_null();
  if (type == "boolean") return v.is_boolean();
  if (type == "string") return v.is_string();
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "number") return v.is_number();
  if (type == "integer")
    return v.is_number_integer() || (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>());
  return false;
}

const std::vector<std::string> kTypes = {"object", "array", "string", "integer", "number", "boolean", "null"};

class SchemaCompiler {
 public:
  explicit SchemaCompiler(const Json& root) : root_(root), json_(b_) {}

  Grammar compile() {
    const uint32_t root = b_.add("root", schema(root_, "#", 0));
    return std::move(b_).build(root);
  }

 private:
  [[noreturn]] static void unsupported(const std::string& keyword, const std::string& path, const std::string& why = "") {
    throw UnsupportedError(keyword, "JSON schema at " + path + ": '" + keyword + "' is not supported" +
                                        (why.empty() ? "" : " (" + why + ")"));
  }
  [[noreturn]] static void invalid(const std::string& keyword, const std::string& path, const std::string& why) {
    throw GrammarError(keyword, "JSON schema at " + path + ": '" + keyword + "' " + why);
  }

  static uint32_t count(const Json& s, const char* key, const std::string& path, uint32_t fallback) {
    if (!s.contains(key)) return fallback;
    const Json& v = s[key];
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 100000)
      invalid(key, path, "must be a non-negative integer (at most 100000)");
    return static_cast<uint32_t>(v.get<int64_t>());
  }

  // A rule for a sub-schema, so that copies of its expression do not copy its grammar.
  Expr rule_for(const Json& s, const std::string& path, int depth) {
    return Expr::ref(b_.add(path, schema(s, path, depth)));
  }

  Expr schema(const Json& s, const std::string& path, int depth) {
    if (depth > kMaxDepth) invalid("schema", path, "nests deeper than 64 levels");
    if (s.is_boolean()) {
      if (s.get<bool>()) return json_.value();
      invalid("false", path, "allows no value");
    }
    if (!s.is_object()) invalid("schema", path, "is not an object or a boolean");
    std::vector<std::string> assertions;
    for (const auto& [key, value] : s.items()) {
      if (kAnnotations.count(key)) continue;
      if (!kHandled.count(key)) unsupported(key, path);
      assertions.push_back(key);
    }
    auto only = [&](const std::string& main, const std::set<std::string>& allowed) {
      for (const std::string& k : assertions)
        if (k != main && !allowed.count(k)) unsupported(k, path, "beside '" + main + "'");
    };
    if (s.contains("$ref")) {
      only("$ref", {});
      return reference(s["$ref"], path, depth);
    }
    for (const char* key : {"anyOf", "oneOf"}) {
      if (!s.contains(key)) continue;
      only(key, {});
      const Json& branches = s[key];
      if (!branches.is_array() || branches.empty()) invalid(key, path, "must be a non-empty array");
      std::vector<Expr> alts;
      for (size_t i = 0; i < branches.size(); ++i)
        alts.push_back(schema(branches[i], path + "/" + key + "/" + std::to_string(i), depth + 1));
      return Expr::alt(std::move(alts));
    }
    if (s.contains("allOf")) {
      only("allOf", {});
      const Json& all = s["allOf"];
      if (!all.is_array() || all.size() != 1) unsupported("allOf", path, "only with exactly one schema");
      return schema(all[0], path + "/allOf/0", depth + 1);
    }
    std::vector<std::string> types;
    if (s.contains("type")) {
      const Json& t = s["type"];
      if (t.is_string()) types.push_back(t.get<std::string>());
      else if (t.is_array())
        for (const Json& one : t) {
          if (!one.is_string()) invalid("type", path, "must name types");
          types.push_back(one.get<std::string>());
        }
      else invalid("type", path, "must be a string or an array");
      for (const std::string& one : types)
        if (std::find(kTypes.begin(), kTypes.end(), one) == kTypes.end()) invalid("type", path, "names an unknown type '" + one + "'");
    }
    if (s.contains("enum") || s.contains("const")) {
      const char* key = s.contains("enum") ? "enum" : "const";
      only(key, {"type"});
      std::vector<Json> values;
      if (s.contains("const")) values.push_back(s["const"]);
      if (s.contains("enum")) {
        if (!s["enum"].is_array()) invalid("enum", path, "must be an array");
        for (const Json& v : s["enum"]) values.push_back(v);
      }
      std::vector<Expr> alts;
      for (const Json& v : values) {
        bool ok = types.empty();
        for (const std::string& t : types) ok = ok || matches_type(v, t);
        if (ok) alts.push_back(Expr::literal(v.dump()));
      }
      if (alts.empty()) invalid(key, path, "leaves no value of the allowed types");
      return Expr::alt(std::move(alts));
    }
    if (types.empty()) {
      // No type: the types the keywords speak of (a document of another type would be valid too,
      // but a schema with `properties` means an object).
      auto any_of = [&](const std::set<std::string>& keys) {
        for (const std::string& k : assertions)
          if (keys.count(k)) return true;
        return false;
      };
      if (any_of(kObjectKeys)) types.push_back("object");
      if (any_of(kArrayKeys)) types.push_back("array");
      if (any_of(kStringKeys)) types.push_back("string");
      if (any_of(kNumberKeys)) types.push_back("number");
      if (types.empty()) return json_.value();
    }
    std::vector<Expr> alts;
    for (const std::string& t : types) {
      if (t == "object") alts.push_back(object(s, path, depth));
      else if (t == "array") alts.push_back(array(s, path, depth));
      else if (t == "string") alts.push_back(string(s, path));
      else if (t == "integer") alts.push_back(json_integer(bounds(s, path), path));
      else if (t == "number") alts.push_back(json_number(bounds(s, path), path));
      else if (t == "boolean") alts.push_back(Expr::alt({Expr::literal("true"), Expr::literal("false")}));
      else alts.push_back(Expr::literal("null"));
    }
    return Expr::alt(std::move(alts));
  }

  Expr reference(const Json& ref, const std::string& path, int depth) {
    if (!ref.is_string()) invalid("$ref", path, "must be a string");
    const std::string target = ref.get<std::string>();
    if (target.empty() || target[0] != '#') unsupported("$ref", path, "only references into this document ('#...') are");
    if (auto it = refs_.find(target); it != refs_.end()) return Expr::ref(it->second);
    const Json* node = &root_;
    if (target.size() > 1) {
      if (target[1] != '/') unsupported("$ref", path, "anchors are not, JSON pointers are");
      try {
        node = &root_.at(Json::json_pointer(target.substr(1)));
      } catch (const std::exception&) {
        invalid("$ref", path, "points at nothing: " + target);
      }
    }
    const uint32_t rule = b_.declare(target);
    refs_.emplace(target, rule);
    b_.define(rule, schema(*node, target, depth + 1));
    return Expr::ref(rule);
  }

  NumberBounds bounds(const Json& s, const std::string& path) {
    NumberBounds b;
    auto number = [&](const char* key) {
      if (!s[key].is_number()) invalid(key, path, "must be a number");
      return s[key].get<double>();
    };
    if (s.contains("minimum")) b.minimum = number("minimum");
    if (s.contains("maximum")) b.maximum = number("maximum");
    for (const char* key : {"exclusiveMinimum", "exclusiveMaximum"}) {
      if (!s.contains(key)) continue;
      const bool lower = std::string(key) == "exclusiveMinimum";
      std::optional<double>& bound = lower ? b.minimum : b.maximum;
      bool& excl = lower ? b.exclusive_minimum : b.exclusive_maximum;
      if (s[key].is_boolean()) {  // draft 4: a flag on minimum / maximum
        if (s[key].get<bool>()) {
          if (!bound) invalid(key, path, "is true without its bound");
          excl = true;
        }
        continue;
      }
      const double v = number(key);
      if (!bound || (lower ? v >= *bound : v <= *bound)) {
        bound = v;
        excl = true;
      }
    }
    return b;
  }

  Expr string(const Json& s, const std::string& path) {
    const uint32_t min = count(s, "minLength", path, 0);
    const uint32_t max = count(s, "maxLength", path, kUnbounded);
    if (max != kUnbounded && max < min) invalid("maxLength", path, "is below minLength");
    const bool lengths = s.contains("minLength") || s.contains("maxLength");
    std::string pattern;
    bool anchored = false;
    if (s.contains("pattern")) {
      if (!s["pattern"].is_string()) invalid("pattern", path, "must be a string");
      if (s.contains("format")) unsupported("format", path, "together with 'pattern'");
      pattern = s["pattern"].get<std::string>();
    } else if (s.contains("format")) {
      if (!s["format"].is_string()) invalid("format", path, "must be a string");
      const std::string name = s["format"].get<std::string>();
      auto it = kFormats.find(name);
      if (it == kFormats.end()) unsupported("format", path, "format '" + name + "' is not one of date, time, date-time, uuid, email, ipv4");
      pattern = it->second;
      anchored = true;
    }
    Expr body;
    if (!pattern.empty() || s.contains("pattern")) {
      if (lengths) unsupported(s.contains("minLength") ? "minLength" : "maxLength", path, "together with a pattern or format");
      RegexExpr r;
      try {
        r = parse_regex(pattern, RegexTarget::kJsonString);
      } catch (const GrammarError& e) {
        if (dynamic_cast<const UnsupportedError*>(&e)) throw UnsupportedError("pattern", path + ": " + e.what());
        throw GrammarError("pattern", path + ": " + e.what());
      }
      std::vector<Expr> seq;
      if (!anchored && !r.anchored_start) seq.push_back(Expr::star(json_.character()));
      seq.push_back(std::move(r.expr));
      if (!anchored && !r.anchored_end) seq.push_back(Expr::star(json_.character()));
      body = Expr::seq(std::move(seq));
    } else if (!lengths) {
      return json_.string();
    } else {
      body = Expr::repeat(json_.character(), min, max);
    }
    return Expr::seq({Expr::byte('"'), std::move(body), Expr::byte('"')});
  }

  // Raw keys (no escapes) other than `names`: a trie of the names over code points, leaving it
  // at the first character that no name continues with.
  Expr key_not_in(const std::vector<std::string>& names) {
    struct Node {
      std::map<uint32_t, size_t> children;
      bool terminal = false;
    };
    std::vector<Node> trie(1);
    for (const std::string& name : names) {
      std::vector<uint32_t> cps;
      bool raw = true;
      for (size_t pos = 0; pos < name.size();) {
        uint32_t cp;
        if (!utf8_decode(name, pos, cp)) {
          raw = false;
          break;
        }
        if (cp < 0x20 || cp == '"' || cp == '\\') raw = false;
        cps.push_back(cp);
      }
      if (!raw) continue;  // no raw key can equal it
      size_t node = 0;
      for (uint32_t cp : cps) {
        auto it = trie[node].children.find(cp);
        if (it == trie[node].children.end()) {
          trie.emplace_back();
          it = trie[node].children.emplace(cp, trie.size() - 1).first;
        }
        node = it->second;
      }
      trie[node].terminal = true;
    }
    const uint32_t free = b_.add("key_free", Expr::seq({Expr::star(utf8_class(kRawStringChars)), Expr::byte('"')}));
    std::vector<uint32_t> rules(trie.size());
    for (size_t i = 0; i < trie.size(); ++i) rules[i] = b_.declare("key_not_declared");
    for (size_t i = 0; i < trie.size(); ++i) {
      std::vector<Expr> alts;
      if (!trie[i].terminal) alts.push_back(Expr::byte('"'));
      std::vector<CodepointRange> others;
      uint32_t next = 0;
      for (const auto& [cp, child] : trie[i].children) {
        alts.push_back(Expr::seq({Expr::literal(utf8_encode(cp)), Expr::ref(rules[child])}));
        if (cp > next) others.push_back({next, cp - 1});
        next = cp + 1;
      }
      others.push_back({next, kMaxCodepoint});
      std::vector<CodepointRange> allowed;  // others within the raw string characters
      for (CodepointRange o : others)
        for (CodepointRange r : kRawStringChars) {
          const uint32_t lo = std::max(o.lo, r.lo), hi = std::min(o.hi, r.hi);
          if (lo <= hi) allowed.push_back({lo, hi});
        }
      if (!allowed.empty()) alts.push_back(Expr::seq({utf8_class(allowed), Expr::ref(free)}));
      b_.define(rules[i], Expr::alt(std::move(alts)));
    }
    return Expr::seq({Expr::byte('"'), Expr::ref(rules[0])});
  }

  Expr object(const Json& s, const std::string& path, int depth) {
    std::vector<std::pair<std::string, const Json*>> props;
    static const Json kTrue = true;
    if (s.contains("properties")) {
      if (!s["properties"].is_object()) invalid("properties", path, "must be an object");
      for (const auto& [name, sub] : s["properties"].items()) props.emplace_back(name, &sub);
    }
    std::set<std::string> required;
    if (s.contains("required")) {
      if (!s["required"].is_array()) invalid("required", path, "must be an array of names");
      for (const Json& r : s["required"]) {
        if (!r.is_string()) invalid("required", path, "must be an array of names");
        const std::string name = r.get<std::string>();
        required.insert(name);
        bool declared = false;
        for (const auto& p : props) declared = declared || p.first == name;
        if (!declared) props.emplace_back(name, &kTrue);
      }
    }
    std::optional<Expr> extra_value;
    if (s.contains("additionalProperties")) {
      const Json& a = s["additionalProperties"];
      if (!a.is_boolean() && !a.is_object()) invalid("additionalProperties", path, "must be a boolean or a schema");
      if (!(a.is_boolean() && !a.get<bool>())) extra_value = rule_for(a, path + "/additionalProperties", depth + 1);
    }
    const Expr sep = Expr::seq({Expr::byte(','), json_.ws()});
    const size_t n = props.size();
    // after[i][c]: the members from property i on; c: a member was written (a comma comes first).
    std::vector<std::array<uint32_t, 2>> after(n + 1);
    for (size_t i = 0; i <= n; ++i)
      for (int c = 0; c < 2; ++c) after[i][c] = b_.declare(path + "/members");
    std::optional<Expr> extra;
    if (extra_value) {
      std::vector<std::string> names;
      for (const auto& p : props) names.push_back(p.first);
      extra = Expr::ref(b_.add(path + "/extra", Expr::seq({key_not_in(names), Expr::byte(':'), json_.ws(), *extra_value})));
    }
    for (int c = 0; c < 2; ++c) {
      std::vector<Expr> alts{c ? json_.ws() : Expr::empty()};
      if (extra)
        alts.push_back(Expr::seq({c ? sep : Expr::empty(), *extra, Expr::star(Expr::seq({sep, *extra})), json_.ws()}));
      b_.define(after[n][c], Expr::alt(std::move(alts)));
    }
    for (size_t i = n; i-- > 0;) {
      const std::string& name = props[i].first;
      const std::string sub = path + "/properties/" + name;
      Expr member = Expr::seq({Expr::literal(Json(name).dump()), Expr::byte(':'), json_.ws(),
                               rule_for(*props[i].second, sub, depth + 1)});
      const uint32_t m = b_.add(sub + "/member", std::move(member));
      for (int c = 0; c < 2; ++c) {
        Expr take = Expr::seq({c ? sep : Expr::empty(), Expr::ref(m), Expr::ref(after[i + 1][1])});
        if (required.count(name)) b_.define(after[i][c], std::move(take));
        else b_.define(after[i][c], Expr::alt({std::move(take), Expr::ref(after[i + 1][c])}));
      }
    }
    return Expr::seq({Expr::byte('{'), json_.ws(), Expr::ref(after[0][0]), Expr::byte('}')});
  }

  Expr array(const Json& s, const std::string& path, int depth) {
    if (s.contains("uniqueItems") && !(s["uniqueItems"].is_boolean() && !s["uniqueItems"].get<bool>()))
      unsupported("uniqueItems", path, "only false is");
    std::vector<Expr> prefix;
    if (s.contains("prefixItems")) {
      if (!s["prefixItems"].is_array()) invalid("prefixItems", path, "must be an array of schemas");
      for (size_t i = 0; i < s["prefixItems"].size(); ++i)
        prefix.push_back(rule_for(s["prefixItems"][i], path + "/prefixItems/" + std::to_string(i), depth + 1));
    }
    const auto k = static_cast<uint32_t>(prefix.size());
    uint32_t min = count(s, "minItems", path, 0);
    uint32_t max = count(s, "maxItems", path, kUnbounded);
    std::optional<Expr> item;
    if (!s.contains("items")) {
      item = json_.value();
    } else {
      const Json& items = s["items"];
      if (items.is_array()) unsupported("items", path, "the array form; use prefixItems");
      if (!(items.is_boolean() && !items.get<bool>())) item = rule_for(items, path + "/items", depth + 1);
    }
    if (!item) max = std::min(max, k);
    if (max < min) invalid("minItems", path, "cannot be met (maxItems or items: false allow fewer)");
    const Expr sep = Expr::seq({Expr::byte(','), json_.ws()});
    // rest: the items after the prefix, then the closing whitespace.
    Expr rest;
    const uint32_t rest_max = max == kUnbounded ? kUnbounded : max - std::min(max, k);
    const uint32_t rest_min = min > k ? min - k : 0;
    if (k == 0) {
      std::vector<Expr> alts;
      if (min == 0) alts.push_back(Expr::empty());
      if (max > 0)
        alts.push_back(Expr::seq({*item,
                                  Expr::repeat(Expr::seq({sep, *item}), min > 0 ? min - 1 : 0,
                                               max == kUnbounded ? kUnbounded : max - 1),
                                  json_.ws()}));
      rest = Expr::alt(std::move(alts));
    } else {
      rest = item && rest_max > 0 ? Expr::seq({Expr::repeat(Expr::seq({sep, *item}), rest_min, rest_max), json_.ws()})
                                  : json_.ws();
    }
    // Through the prefix, each point where the array may end.
    Expr tail = std::move(rest);
    for (uint32_t j = k; j-- > 0;) {
      // tail describes what follows j+1 written items.
      Expr take = Expr::seq({j > 0 ? sep : Expr::empty(), prefix[j], std::move(tail)});
      std::vector<Expr> alts;
      if (j + 1 <= max) alts.push_back(std::move(take));
      if (j >= min) alts.push_back(j > 0 ? json_.ws() : Expr::empty());
      tail = Expr::ref(b_.add(path + "/prefix", Expr::alt(std::move(alts))));
    }
    return Expr::seq({Expr::byte('['), json_.ws(), std::move(tail), Expr::byte(']')});
  }

  const Json& root_;
  GrammarBuilder b_;
  JsonBlocks json_;
  std::map<std::string, uint32_t> refs_;
};

}  // namespace

Grammar json_schema_grammar(const nlohmann::ordered_json& schema) { return SchemaCompiler(schema).compile(); }

Grammar json_schema_grammar_from_text(std::string_view schema_text) {
  Json schema;
  try {
    schema = Json::parse(schema_text);
  } catch (const std::exception& e) {
    throw GrammarError("schema", std::string("JSON schema is not valid JSON: ") + e.what());
  }
  return json_schema_grammar(schema);
}

Grammar json_value_grammar() {
  GrammarBuilder b;
  JsonBlocks json(b);
  const uint32_t root = b.add("root", json.value());
  return std::move(b).build(root);
}

Grammar json_object_grammar() {
  GrammarBuilder b;
  JsonBlocks json(b);
  const uint32_t root = b.add("root", json.object());
  return std::move(b).build(root);
}

}  // namespace zinfer::grammar
