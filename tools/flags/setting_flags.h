// Command-line flags for settings of the pipeline's config, made from the settings' own
// descriptions (settings/setting.h): a flag's value is checked by the very rules the config file's
// is, its --help line gives the setting's doc, legal values and default, and a flag the command
// line leaves out leaves the setting as the config file (or the default) has it. So
// `zinfer generate` and `zinfer serve` start from the same defaults, and a setting's name, range
// and default are written once.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "actors/pipeline/engine_config.h"
#include "runtime/config.h"

namespace zinfer::cli {

class SettingFlags {
 public:
  // Adds `flag` (default: "--" + the key with '-' for '_') for the setting `name` ("section.key").
  // A name no setting has is a std::logic_error (a bug in the tool, not the user's).
  CLI::Option* add(CLI::App& cmd, const std::string& name, std::string flag = "");

  // A boolean setting as a pair of switches that take no value: `on` sets it true, `off` false
  // (vLLM's --enable-prefix-caching / --no-enable-prefix-caching).
  void add_switch(CLI::App& cmd, const std::string& name, const std::string& on, const std::string& off);

  // A setting whose flag is in another unit: the flag's number times `scale` is the setting's
  // value (vLLM's --swap-space in GiB for cache.swap_space_mb: scale 1024), rounded to an integer.
  CLI::Option* add_scaled(CLI::App& cmd, const std::string& name, const std::string& flag, double scale,
                          const std::string& unit);

  // One flag of one or more values: the first sets the text setting `first`, the others the list
  // setting `rest` (vLLM's --served-model-name NAME [ALIAS...]).
  CLI::Option* add_split(CLI::App& cmd, const std::string& flag, const std::string& first, const std::string& rest);

  // The settings (section.key) this object has a flag for.
  std::vector<std::string> names() const;

  // The config file at `path` (the defaults when "") with the given flags applied over it; throws
  // runtime::ConfigError naming the file and line, or the flag, and the key.
  actors::EngineConfig load(const std::string& path) const;
  // Applies the given flags to `config`, then checks the rules between settings.
  void apply(actors::EngineConfig& config) const;

 private:
  struct Flag {
    std::string section, key, flag;
    std::string text;  // as given
    CLI::Option* option = nullptr;
    CLI::Option* off = nullptr;  // add_switch: the switch that sets false
    double scale = 0;            // add_scaled: the unit's factor; 0 = the setting's own unit
    std::vector<std::string> texts;  // add_split: the values
    std::string rest_section, rest_key;  // add_split: the list setting of the values after the first
  };
  std::shared_ptr<Flag> make(const std::string& name) const;
  std::string help(const Flag& f, const std::string& extra = "") const;
  std::vector<std::shared_ptr<Flag>> flags_;  // stable addresses: CLI11 writes into `text`; copies share them
};

// The defaults of every setting: a reader bound to a default-constructed EngineConfig.
const runtime::ConfigReader& engine_defaults();

}  // namespace zinfer::cli
