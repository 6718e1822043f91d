#include "runtime/config.h"

#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include <toml.hpp>

namespace zinfer::runtime {

namespace {

std::string where(const std::string& origin, const toml::value& v) {
  return origin + ":" + std::to_string(v.location().line());
}

// The TOML value as the setting's type; nullopt when it has another.
std::optional<settings::Value> to_value(const settings::Descriptor& d, const toml::value& v) {
  using settings::Type;
  switch (d.type) {
    case Type::kInteger:
      if (v.is_integer()) return static_cast<int64_t>(v.as_integer());
      break;
    case Type::kNumber:
      if (v.is_floating()) return static_cast<double>(v.as_floating());
      if (v.is_integer()) return static_cast<double>(v.as_integer());
      break;
    case Type::kBoolean:
      if (v.is_boolean()) return v.as_boolean();
      break;
    case Type::kString:
      if (v.is_string()) return std::string(v.as_string());
      break;
    case Type::kStringList:
      if (v.is_array()) {
        std::vector<std::string> out;
        bool strings = true;
        for (const auto& e : v.as_array()) {
          strings = strings && e.is_string();
          if (strings) out.push_back(e.as_string());
        }
        if (strings) return out;
      }
      break;
  }
  return std::nullopt;
}

}  // namespace

void ConfigReader::add(BoundSetting setting) {
  if (find(setting.descriptor.section, setting.descriptor.key)) {
    throw std::logic_error("setting '" + setting.descriptor.name() + "' is bound twice");
  }
  settings_.push_back(std::move(setting));
}

const BoundSetting* ConfigReader::find(const std::string& section, const std::string& key) const {
  for (const auto& s : settings_) {
    if (s.descriptor.section == section && s.descriptor.key == key) return &s;
  }
  return nullptr;
}

void ConfigReader::apply(const BoundSetting& setting, const settings::Value& value, const std::string& origin) const {
  const std::string why = setting.descriptor.why_not(value);
  if (!why.empty()) throw ConfigError(origin + ": key '" + setting.descriptor.name() + "' " + why);
  setting.set(value);
}

void ConfigReader::read_text(const std::string& toml_text, const std::string& origin) const {
  std::istringstream in(toml_text);
  toml::value root;
  try {
    root = toml::parse(in, origin);
  } catch (const toml::syntax_error& e) {
    throw ConfigError(std::string("syntax error in ") + origin + ":\n" + e.what());
  }
  if (!root.is_table()) throw ConfigError(origin + ": the file is not a TOML table");
  std::set<std::string> sections;
  for (const auto& s : settings_) sections.insert(s.descriptor.section);
  for (const auto& [section, table] : root.as_table()) {
    if (!sections.count(section)) {
      std::string known;
      for (const auto& name : sections) known += (known.empty() ? "" : ", ") + name;
      throw ConfigError(where(origin, table) + ": unknown section '" + section + "' (known: " + known + ")");
    }
    if (!table.is_table()) throw ConfigError(where(origin, table) + ": '" + section + "' must be a table ([" + section + "])");
    for (const auto& [key, value] : table.as_table()) {
      const BoundSetting* s = find(section, key);
      if (!s) throw ConfigError(where(origin, value) + ": unknown key '" + section + "." + key + "'");
      const std::optional<settings::Value> v = to_value(s->descriptor, value);
      if (!v) throw ConfigError(where(origin, value) + ": key '" + s->descriptor.name() + "' " + settings::type_rule(s->descriptor.type));
      apply(*s, *v, where(origin, value));
    }
  }
}

void ConfigReader::read_file(const std::string& path) const {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw ConfigError("cannot open config file '" + path + "'");
  std::stringstream ss;
  ss << f.rdbuf();
  read_text(ss.str(), path);
}

settings::Value parse_value(settings::Type type, const std::string& text, const std::string& origin) {
  using settings::Type;
  auto fail = [&]() -> settings::Value {
    throw ConfigError(origin + ": '" + text + "' is not " + (type == Type::kInteger ? "an " : "a ") + settings::to_string(type));
  };
  switch (type) {
    case Type::kInteger: {
      size_t used = 0;
      int64_t x = 0;
      try {
        x = std::stoll(text, &used);
      } catch (const std::exception&) {
        return fail();
      }
      if (used != text.size()) return fail();
      return x;
    }
    case Type::kNumber: {
      size_t used = 0;
      double x = 0;
      try {
        x = std::stod(text, &used);
      } catch (const std::exception&) {
        return fail();
      }
      if (used != text.size()) return fail();
      return x;
    }
    case Type::kBoolean:
      if (text == "true") return true;
      if (text == "false") return false;
      return fail();
    case Type::kString:
      return text;
    case Type::kStringList: {
      std::vector<std::string> out;
      std::stringstream ss(text);
      std::string item;
      while (std::getline(ss, item, ',')) out.push_back(item);
      return out;
    }
  }
  return fail();
}

}  // namespace zinfer::runtime
