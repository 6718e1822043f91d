// zinfer serve: every configured actor ([runtime].actors) as a thread of this process, until
// SIGINT/SIGTERM. Leaving one out lets an external process take its place on its endpoint (e.g. a
// user's own scheduler, docs/scheduler-protocol.md).
#include <cstdio>

#include "actors/pipeline/registry.h"
#include "runtime/logging.h"
#include "runtime/signals.h"
#include "runtime/supervisor.h"
#include "tools/flags/setting_flags.h"
#include "tools/zinfer/commands.h"

namespace zinfer::cli {

void add_serve_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("serve", "serve a model over the OpenAI HTTP API and ZeroMQ (all actors in one process)");
  static std::string config_path;
  static SettingFlags flags;  // each overrides its setting of the config file
  cmd->add_option("--config", config_path, "TOML config (configs/default.toml)")->required();
  flags.add(*cmd, "model.path", "--model");
  flags.add(*cmd, "model.device");
  flags.add(*cmd, "server.host");
  flags.add(*cmd, "server.port");
  flags.add(*cmd, "server.api_keys", "--api-key");  // vLLM's flag; ZINFER_API_KEY when neither gives one
  cmd->callback([] {
    runtime::block_shutdown_signals();
    const actors::EngineConfig config = flags.load(config_path);
    runtime::set_log_level(config.runtime.log_level);
    runtime::Supervisor supervisor;
    actors::register_pipeline_actors(supervisor, config);
    supervisor.start_threads(config.runtime.actors);
    runtime::logger("zinfer")->info("ready");
    for (;;) {
      int sig = runtime::wait_for_shutdown_signal(std::chrono::milliseconds(500));
      if (sig != 0) {
        runtime::logger("zinfer")->info("signal {}: shutting down", sig);
        break;
      }
      if (!supervisor.all_alive()) {
        supervisor.stop_threads();
        throw std::runtime_error("an actor stopped unexpectedly");
      }
    }
    supervisor.stop_threads();
  });
}

}  // namespace zinfer::cli
