// zinfer actor NAME --config F: one actor as its own process (what `zinfer launch` starts).
// Under the launcher (--control-fd, --launcher-pid, --heartbeat-ms) it also dies with the
// launcher, heartbeats on the control channel while its actor's loop answers, and hands the
// launcher's notices about the other actors to its actor (docs/architecture.md, I38).
#include <optional>

#include "actors/pipeline/registry.h"
#include "runtime/control_channel.h"
#include "runtime/logging.h"
#include "runtime/parent_death.h"
#include "runtime/signals.h"
#include "runtime/supervisor.h"
#include "tools/zinfer/commands.h"

namespace zinfer::cli {

void add_actor_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("actor", "run one actor as its own process");
  static std::string name, config_path;
  static int control_fd = -1, launcher_pid = 0, heartbeat_ms = 1000;
  cmd->add_option("NAME", name, "tokenizer | scheduler | executor | detokenizer | gateway")
      ->required()->check(CLI::IsMember({"tokenizer", "scheduler", "executor", "detokenizer", "gateway"}));
  cmd->add_option("--config", config_path, "TOML config")->required();
  auto* fd_opt = cmd->add_option("--control-fd", control_fd, "(set by zinfer launch) the control channel's descriptor")
                     ->check(CLI::Range(0, 1 << 20));
  cmd->add_option("--launcher-pid", launcher_pid, "(set by zinfer launch) the launcher; this process dies with it")
      ->check(CLI::Range(1, 1 << 30))->needs(fd_opt);
  cmd->add_option("--heartbeat-ms", heartbeat_ms, "(set by zinfer launch) how often to heartbeat")
      ->check(CLI::Range(10, 60000))->needs(fd_opt);
  cmd->callback([] {
    runtime::block_shutdown_signals();
    if (launcher_pid > 0) runtime::die_with_parent(launcher_pid);
    runtime::ControlChannel control(control_fd);
    const actors::EngineConfig config = actors::load_engine_config(config_path);
    runtime::set_log_level(config.runtime.log_level);
    runtime::Supervisor supervisor;
    actors::register_pipeline_actors(supervisor, config);
    supervisor.start_threads({name});
    const auto interval = std::chrono::milliseconds(heartbeat_ms);
    auto next_beat = std::chrono::steady_clock::now();
    for (;;) {
      if (control.closed()) {
        if (runtime::wait_for_shutdown_signal(std::chrono::milliseconds(500)) != 0) break;
      } else {
        control.wait_readable(static_cast<int>(std::min<int64_t>(interval.count(), 100)));
        if (runtime::wait_for_shutdown_signal(std::chrono::milliseconds(0)) != 0) break;
        while (auto notice = control.recv()) supervisor.notify_all(*notice);
        if (control.closed()) {
          runtime::logger(name)->error("the launcher's control channel closed: stopping");
          break;
        }
        if (std::chrono::steady_clock::now() >= next_beat) {
          // Only while the actor's loop answers: a hung actor stops heartbeating and is replaced.
          if (supervisor.heartbeat()) control.send("beat");
          next_beat = std::chrono::steady_clock::now() + interval;
        }
      }
      if (!supervisor.all_alive()) {
        const std::string why = supervisor.stopped_actor();
        supervisor.stop_threads();
        throw std::runtime_error("actor " + why);
      }
    }
    supervisor.stop_threads();
  });
}

}  // namespace zinfer::cli
