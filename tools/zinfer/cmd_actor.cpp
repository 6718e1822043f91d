// zinfer actor NAME --config F: one actor as its own process (what `zinfer launch` starts).
#include "actors/pipeline/registry.h"
#include "runtime/logging.h"
#include "runtime/signals.h"
#include "runtime/supervisor.h"
#include "tools/zinfer/commands.h"

namespace zinfer::cli {

void add_actor_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("actor", "run one actor as its own process");
  static std::string name, config_path;
  cmd->add_option("NAME", name, "tokenizer | scheduler | executor | detokenizer | gateway")
      ->required()->check(CLI::IsMember({"tokenizer", "scheduler", "executor", "detokenizer", "gateway"}));
  cmd->add_option("--config", config_path, "TOML config")->required();
  cmd->callback([] {
    runtime::block_shutdown_signals();
    const actors::EngineConfig config = actors::load_engine_config(config_path);
    runtime::set_log_level(config.runtime.log_level);
    runtime::Supervisor supervisor;
    actors::register_pipeline_actors(supervisor, config);
    supervisor.start_threads({name});
    for (;;) {
      if (runtime::wait_for_shutdown_signal(std::chrono::milliseconds(500)) != 0) break;
      if (!supervisor.all_alive()) {
        supervisor.stop_threads();
        throw std::runtime_error("actor " + name + " stopped unexpectedly");
      }
    }
    supervisor.stop_threads();
  });
}

}  // namespace zinfer::cli
