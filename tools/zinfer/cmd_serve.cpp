// zinfer serve: every configured actor ([runtime].actors) as a thread of this process, until
// SIGINT/SIGTERM. Leaving one out lets an external process take its place on its endpoint (e.g. a
// user's own scheduler, docs/scheduler-protocol.md).
#include <cstdio>

#include "actors/pipeline/registry.h"
#include "runtime/logging.h"
#include "runtime/signals.h"
#include "runtime/supervisor.h"
#include "tools/zinfer/commands.h"

namespace zinfer::cli {

void add_serve_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("serve", "serve a model over the OpenAI HTTP API and ZeroMQ (all actors in one process)");
  struct Args {
    std::string config, model, device, host;
    int port = -1;
  };
  static Args a;
  cmd->add_option("--config", a.config, "TOML config (configs/default.toml)")->required();
  cmd->add_option("--model", a.model, "model folder (overrides [model].path)");
  cmd->add_option("--device", a.device, "cpu | cuda (overrides [model].device)")->check(CLI::IsMember({"cpu", "cuda"}));
  cmd->add_option("--host", a.host, "HTTP address (overrides [server].host)");
  cmd->add_option("--port", a.port, "HTTP port (overrides [server].port)")->check(CLI::Range(0, 65535));
  cmd->callback([] {
    runtime::block_shutdown_signals();
    runtime::Config config = runtime::load_config(a.config);
    if (!a.model.empty()) config.model.path = a.model;
    if (!a.device.empty()) config.model.device = a.device;
    if (!a.host.empty()) config.server.host = a.host;
    if (a.port >= 0) config.server.port = a.port;
    runtime::set_log_level(config.runtime.log_level);
    runtime::Supervisor supervisor;
    actors::register_pipeline_actors(supervisor);
    supervisor.start_threads(config, config.runtime.actors);
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
