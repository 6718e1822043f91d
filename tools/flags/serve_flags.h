// The command line of `zinfer serve [MODEL] [--config FILE] [flags]`: the model folder as a
// positional argument (or --model), the config file optional, and every setting of the pipeline's
// config (actors/pipeline/engine_config.h) as a flag, named as vLLM's `vllm serve` names it where
// vLLM has one (--max-num-seqs, --gpu-memory-utilization, --swap-space in GiB, ...) and after the
// setting's key otherwise. The flags are made from the settings' own descriptions
// (tools/flags/setting_flags.h): a flag beats the file, the file beats the default.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "tools/flags/setting_flags.h"

namespace zinfer::cli {

class ServeFlags {
 public:
  // Adds MODEL, --config and one flag per setting to `cmd`.
  void add(CLI::App& cmd);

  // The config file (or the defaults when there is none) with the flags applied over it. Throws
  // runtime::ConfigError naming the file, or the flag, and the key.
  actors::EngineConfig load() const;

  // The settings (section.key) some flag sets: all of them (tests/pipeline/serve_flags_test.cpp).
  std::vector<std::string> settings() const { return flags_.names(); }

 private:
  SettingFlags flags_;
  std::string config_path_;
};

}  // namespace zinfer::cli
