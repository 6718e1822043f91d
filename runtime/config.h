// Reads a TOML file (configs/*.toml) into the settings that libraries describe next to their own
// options structs (settings/setting.h). The runtime knows no setting but its own
// (runtime/runtime_config.h): whoever starts a program binds the structs it composes (e.g.
// actors/pipeline/engine_config.h), then reads. A key no bound setting names, an unknown section,
// a wrong type or an illegal value is a ConfigError naming the key, the file and the line; a key
// the file leaves out keeps the struct's default.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "settings/setting.h"

namespace zinfer::runtime {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A setting bound to one struct instance: what the reader applies and the flag builder reads.
struct BoundSetting {
  settings::Descriptor descriptor;
  std::function<void(const settings::Value&)> set;
  std::function<settings::Value()> get;
};

class ConfigReader {
 public:
  // Binds every setting of `table` to `target`, which must outlive the reader. A setting whose
  // section and key another bound setting has is a std::logic_error (two owners of one key).
  template <class S>
  void bind(S& target, const settings::Settings<S>& table) {
    for (const auto& s : table) {
      add(BoundSetting{s, [&target, set = s.set](const settings::Value& v) { set(target, v); },
                       [&target, get = s.get] { return get(target); }});
    }
  }

  // Applies the file's values; throws ConfigError (a syntax error names the file and the line too).
  void read_text(const std::string& toml_text, const std::string& origin) const;
  void read_file(const std::string& path) const;

  // Applies one value given outside a file (a command-line flag): `origin` names where it came
  // from ("--max-num-seqs"). Throws ConfigError when the value is illegal.
  void apply(const BoundSetting& setting, const settings::Value& value, const std::string& origin) const;

  const std::vector<BoundSetting>& settings() const { return settings_; }
  // nullptr when no bound setting has this section and key.
  const BoundSetting* find(const std::string& section, const std::string& key) const;

 private:
  void add(BoundSetting setting);
  std::vector<BoundSetting> settings_;
};

// Reads a value of `type` from its command-line spelling ("16", "0.9", "true", "fcfs", "a,b");
// throws ConfigError naming `origin` when it is not one.
settings::Value parse_value(settings::Type type, const std::string& text, const std::string& origin);

}  // namespace zinfer::runtime
