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
  };
  std::vector<std::shared_ptr<Flag>> flags_;  // stable addresses: CLI11 writes into `text`; copies share them
};

// The defaults of every setting: a reader bound to a default-constructed EngineConfig.
const runtime::ConfigReader& engine_defaults();

}  // namespace zinfer::cli
