// zinfer launch --config F: a supervisor that starts each configured actor as its own process
// (`zinfer actor NAME --config F`), watches them by heartbeat and restarts one that dies or
// stalls (runtime/process_supervisor.h, docs/architecture.md I38); SIGINT/SIGTERM stops them all.
#include <climits>
#include <cstdlib>

#include <unistd.h>

#include "actors/pipeline/registry.h"
#include "runtime/deployment_lock.h"
#include "runtime/logging.h"
#include "runtime/process_supervisor.h"
#include "runtime/signals.h"
#include "tools/flags/setting_flags.h"
#include "tools/zinfer/commands.h"

namespace zinfer::cli {

void add_launch_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("launch", "start the configured actors as processes, watch and restart them");
  static std::string config_path;
  static SettingFlags flags;
  cmd->add_option("--config", config_path, "TOML config (configs/multiproc.toml)")->required();
  flags.add(*cmd, "runtime.heartbeat_timeout_s", "--heartbeat-timeout-s");
  cmd->callback([] {
    runtime::block_shutdown_signals();
    const actors::EngineConfig config = flags.load(config_path);
    runtime::set_log_level(config.runtime.log_level);
    const auto& e = config.endpoints;
    for (const auto& ep : {e.tokenizer, e.scheduler, e.executor, e.detokenizer, e.gateway}) {
      if (ep.rfind("inproc://", 0) == 0) {
        throw std::runtime_error("launch runs actors as processes: endpoint '" + ep +
                                 "' must be ipc://, tcp:// or shm:// (see configs/multiproc.toml)");
      }
    }
    // Before anything binds: a second launch on the same paths refuses instead of clobbering.
    runtime::DeploymentLock lock({e.tokenizer, e.scheduler, e.executor, e.detokenizer, e.gateway});
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0) throw std::runtime_error("cannot find this program's path");
    exe[n] = 0;
    for (const auto& name : config.runtime.actors) {
      if (!actors::is_pipeline_actor(name)) throw std::runtime_error("unknown actor '" + name + "'");
    }
    runtime::ProcessSupervisorOptions options;
    options.exe = exe;
    options.config_path = config_path;
    options.actors = config.runtime.actors;
    // The gateway drains for up to shutdown_grace_s on SIGTERM; the others stop at once.
    options.stop_timeout = std::chrono::seconds(config.server.shutdown_grace_s + 10);
    options.heartbeat_timeout = runtime::heartbeat_timeout(config.runtime);
    options.heartbeat_interval = runtime::heartbeat_interval(config.runtime);
    options.restarts_with = actors::pipeline_restart_groups();
    int status = runtime::run_processes(options);
    if (status != 0) std::exit(status);
  });
}

}  // namespace zinfer::cli
