// zinfer launch --config F: a supervisor that starts each configured actor as its own process
// (`zinfer actor NAME --config F`) and watches them; SIGINT/SIGTERM stops them all.
#include <climits>
#include <cstdlib>

#include <unistd.h>

#include "actors/pipeline/registry.h"
#include "runtime/logging.h"
#include "runtime/signals.h"
#include "runtime/supervisor.h"
#include "tools/zinfer/commands.h"

namespace zinfer::cli {

void add_launch_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("launch", "start the configured actors as processes and watch them");
  static std::string config_path;
  cmd->add_option("--config", config_path, "TOML config (configs/multiproc.toml)")->required();
  cmd->callback([] {
    runtime::block_shutdown_signals();
    const actors::EngineConfig config = actors::load_engine_config(config_path);
    runtime::set_log_level(config.runtime.log_level);
    for (const auto& ep : {config.endpoints.tokenizer, config.endpoints.scheduler, config.endpoints.executor,
                           config.endpoints.detokenizer, config.endpoints.gateway}) {
      if (ep.rfind("inproc://", 0) == 0) {
        throw std::runtime_error("launch runs actors as processes: endpoint '" + ep +
                                 "' must be ipc://, tcp:// or shm:// (see configs/multiproc.toml)");
      }
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0) throw std::runtime_error("cannot find this program's path");
    exe[n] = 0;
    runtime::Supervisor supervisor;
    actors::register_pipeline_actors(supervisor, config);
    // The gateway drains for up to shutdown_grace_s on SIGTERM; the others stop at once.
    const auto stop_timeout = std::chrono::seconds(config.server.shutdown_grace_s + 10);
    int status = supervisor.run_processes(exe, config_path, config.runtime.actors, stop_timeout);
    if (status != 0) std::exit(status);
  });
}

}  // namespace zinfer::cli
