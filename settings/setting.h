// A setting, described once next to the options struct that owns it: where it lives in the TOML
// file (section, key), which member it sets, its type, its legal values and a one-line doc. Each
// library lists its own settings (scheduler::scheduler_settings(), gpu::backend_settings(),
// gateway::server_settings(), runtime::runtime_settings(), ...); the config reader
// (runtime/config.h) reads a file into them, and the command line builds flags and --help from
// the same descriptions, so a setting's name, range and default exist in exactly one place.
//
// Why a header of its own with nothing but the standard library: gpu/ describes BackendOptions and
// may include neither runtime/ nor ZeroMQ nor protocol/ (docs/architecture.md, "Folders and
// dependencies"); the TOML parser stays in runtime/, which turns TOML values into a Value first.
// Why values go through std::variant and std::function rather than templates all the way: the
// reader and the flag builder walk settings of many structs as one list without knowing them.
#pragma once

#include <cstdint>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace zinfer::settings {

enum class Type { kInteger, kNumber, kBoolean, kString, kStringList };

// A setting's value as the file or the command line gives it (in the setting's own unit: a
// `swap_space_mb` Value is MiB even where the struct keeps bytes).
using Value = std::variant<int64_t, double, bool, std::string, std::vector<std::string>>;

inline const char* to_string(Type t) {
  switch (t) {
    case Type::kInteger: return "integer";
    case Type::kNumber: return "number";
    case Type::kBoolean: return "boolean";
    case Type::kString: return "string";
    case Type::kStringList: return "array of strings";
  }
  return "?";
}

inline std::string format_number(double x) {
  std::ostringstream os;
  os << x;
  return os.str();
}

// The rule a value of the wrong type breaks, worded to follow the key.
inline std::string type_rule(Type t) {
  switch (t) {
    case Type::kInteger: return "must be an integer";
    case Type::kNumber: return "must be a number";
    case Type::kBoolean: return "must be true or false";
    case Type::kString: return "must be a string";
    case Type::kStringList: return "must be an array of strings";
  }
  return "?";
}

// TOML spelling of a value: 16, 0.9, true, "fcfs", ["a", "b"].
inline std::string to_string(const Value& v) {
  struct {
    std::string operator()(int64_t x) const { return std::to_string(x); }
    std::string operator()(double x) const { return format_number(x); }
    std::string operator()(bool x) const { return x ? "true" : "false"; }
    std::string operator()(const std::string& s) const { return "\"" + s + "\""; }
    std::string operator()(const std::vector<std::string>& l) const {
      std::string out = "[";
      for (size_t i = 0; i < l.size(); ++i) out += (i ? ", \"" : "\"") + l[i] + "\"";
      return out + "]";
    }
  } visit;
  return std::visit(visit, v);
}

// What a setting is, apart from the struct it sets.
struct Descriptor {
  std::string section;  // TOML table: [section]
  std::string key;      // key within it
  Type type = Type::kString;
  std::string doc;      // one line, for docs and --help
  int64_t int_min = 0, int_max = 0;   // kInteger: inclusive range
  double num_min = 0, num_max = 0;    // kNumber: inclusive range
  std::vector<std::string> choices;   // kString / kStringList entries: the allowed ones (empty = any)
  // A rule the type, range and choices cannot say (e.g. an endpoint's scheme): "" when the value
  // is legal, else why not ("must be ...").
  std::function<std::string(const Value&)> check;

  std::string name() const { return section + "." + key; }

  // The legal values in words, for --help: "1..4096", "fcfs | priority"; "" for any string.
  std::string range() const {
    auto join = [&](const char* sep) {
      std::string out;
      for (const auto& c : choices) out += (out.empty() ? "" : sep) + c;
      return out;
    };
    switch (type) {
      case Type::kInteger: return std::to_string(int_min) + ".." + std::to_string(int_max);
      case Type::kNumber: return format_number(num_min) + ".." + format_number(num_max);
      case Type::kBoolean: return "true | false";
      case Type::kString: return choices.empty() ? "" : join(" | ");
      case Type::kStringList: return choices.empty() ? "strings" : "some of " + join(", ");
    }
    return "";
  }

  // "" when `v` (of this setting's type) is legal, else the reason, worded to follow the key:
  // "key 'cache.block_size' must be in [1, 256], got 0".
  std::string why_not(const Value& v) const {
    auto allowed = [&](const std::string& s) {
      if (choices.empty()) return true;
      for (const auto& c : choices) {
        if (c == s) return true;
      }
      return false;
    };
    switch (type) {
      case Type::kInteger: {
        if (!std::holds_alternative<int64_t>(v)) return type_rule(type);
        const int64_t x = std::get<int64_t>(v);
        if (x < int_min || x > int_max) {
          return "must be in [" + std::to_string(int_min) + ", " + std::to_string(int_max) + "], got " + std::to_string(x);
        }
        break;
      }
      case Type::kNumber: {
        if (!std::holds_alternative<double>(v)) return type_rule(type);
        const double x = std::get<double>(v);
        if (!(x >= num_min && x <= num_max)) {
          return "must be in [" + format_number(num_min) + ", " + format_number(num_max) + "], got " + format_number(x);
        }
        break;
      }
      case Type::kBoolean:
        if (!std::holds_alternative<bool>(v)) return type_rule(type);
        break;
      case Type::kString: {
        if (!std::holds_alternative<std::string>(v)) return type_rule(type);
        const std::string& s = std::get<std::string>(v);
        if (!allowed(s)) {
          std::string list;
          for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c;
          return "must be one of " + list + ", got '" + s + "'";
        }
        break;
      }
      case Type::kStringList: {
        if (!std::holds_alternative<std::vector<std::string>>(v)) return type_rule(type);
        for (const auto& s : std::get<std::vector<std::string>>(v)) {
          if (!allowed(s)) return "has unknown entry '" + s + "'";
        }
        break;
      }
    }
    return check ? check(v) : std::string();
  }
};

// A Descriptor bound to a member of S. set() takes a legal Value (why_not(v) == ""); get() gives
// the member's value in the setting's unit, so get(S{}) is the setting's one default.
template <class S>
struct Setting : Descriptor {
  std::function<void(S&, const Value&)> set;
  std::function<Value(const S&)> get;
};

namespace detail {

// `access` selects the member: a pointer to member (&S::field) or a callable S& -> T& for a
// member of a member ([](S& s) -> auto& { return s.http.port; }). It only selects: get() calls it
// on a const_cast object and reads.
template <class S, class Access>
decltype(auto) member(const Access& access, const S& s) {
  return std::invoke(access, const_cast<S&>(s));
}

template <class S>
Setting<S> base(std::string section, std::string key, Type type, std::string doc) {
  Setting<S> s;
  s.section = std::move(section);
  s.key = std::move(key);
  s.type = type;
  s.doc = std::move(doc);
  return s;
}

}  // namespace detail

// An integer member (any integral type) in [min, max]. `scale` converts the file's unit to the
// member's (1 << 20: the file says MiB, the member holds bytes); get() divides back.
template <class S, class Access>
Setting<S> integer(std::string section, std::string key, Access access, int64_t min, int64_t max, std::string doc,
                   int64_t scale = 1) {
  Setting<S> s = detail::base<S>(std::move(section), std::move(key), Type::kInteger, std::move(doc));
  s.int_min = min;
  s.int_max = max;
  s.set = [access, scale](S& target, const Value& v) {
    auto& field = std::invoke(access, target);
    field = static_cast<std::remove_reference_t<decltype(field)>>(std::get<int64_t>(v) * scale);
  };
  s.get = [access, scale](const S& target) -> Value {
    return static_cast<int64_t>(detail::member(access, target)) / scale;
  };
  return s;
}

// A floating-point member in [min, max]; the file may give an integer (1 for 1.0).
template <class S, class Access>
Setting<S> number(std::string section, std::string key, Access access, double min, double max, std::string doc) {
  Setting<S> s = detail::base<S>(std::move(section), std::move(key), Type::kNumber, std::move(doc));
  s.num_min = min;
  s.num_max = max;
  s.set = [access](S& target, const Value& v) { std::invoke(access, target) = std::get<double>(v); };
  s.get = [access](const S& target) -> Value { return static_cast<double>(detail::member(access, target)); };
  return s;
}

template <class S, class Access>
Setting<S> flag(std::string section, std::string key, Access access, std::string doc) {
  Setting<S> s = detail::base<S>(std::move(section), std::move(key), Type::kBoolean, std::move(doc));
  s.set = [access](S& target, const Value& v) { std::invoke(access, target) = std::get<bool>(v); };
  s.get = [access](const S& target) -> Value { return static_cast<bool>(detail::member(access, target)); };
  return s;
}

// A string member: any string when `choices` is empty, else one of them; `check` adds a rule.
template <class S, class Access>
Setting<S> text(std::string section, std::string key, Access access, std::vector<std::string> choices, std::string doc,
                std::function<std::string(const Value&)> check = {}) {
  Setting<S> s = detail::base<S>(std::move(section), std::move(key), Type::kString, std::move(doc));
  s.choices = std::move(choices);
  s.check = std::move(check);
  s.set = [access](S& target, const Value& v) { std::invoke(access, target) = std::get<std::string>(v); };
  s.get = [access](const S& target) -> Value { return std::string(detail::member(access, target)); };
  return s;
}

// An enum member, spelled in the file by the names of `names` (name, enumerator).
template <class S, class Access, class E>
Setting<S> enumerated(std::string section, std::string key, Access access, std::vector<std::pair<std::string, E>> names,
                      std::string doc) {
  Setting<S> s = detail::base<S>(std::move(section), std::move(key), Type::kString, std::move(doc));
  for (const auto& [name, _] : names) s.choices.push_back(name);
  s.set = [access, names](S& target, const Value& v) {
    for (const auto& [name, e] : names) {
      if (name == std::get<std::string>(v)) {
        std::invoke(access, target) = e;
        return;
      }
    }
    throw std::logic_error("set() of an illegal value (check why_not first)");
  };
  s.get = [access, names](const S& target) -> Value {
    const E e = detail::member(access, target);
    for (const auto& [name, value] : names) {
      if (value == e) return name;
    }
    throw std::logic_error("an enumerator without a name");
  };
  return s;
}

// A list of strings, each one of `choices` (any when empty).
template <class S, class Access>
Setting<S> text_list(std::string section, std::string key, Access access, std::vector<std::string> choices,
                     std::string doc) {
  Setting<S> s = detail::base<S>(std::move(section), std::move(key), Type::kStringList, std::move(doc));
  s.choices = std::move(choices);
  s.set = [access](S& target, const Value& v) {
    std::invoke(access, target) = std::get<std::vector<std::string>>(v);
  };
  s.get = [access](const S& target) -> Value { return std::vector<std::string>(detail::member(access, target)); };
  return s;
}

template <class S>
using Settings = std::vector<Setting<S>>;

}  // namespace zinfer::settings
