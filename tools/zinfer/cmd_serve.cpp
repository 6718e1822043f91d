// zinfer serve [MODEL] [--config FILE] [flags]: every configured actor ([runtime].actors) as a
// thread of this process, until SIGINT/SIGTERM (tools/flags/serve_flags.h has the flags). Leaving one out lets an external process take its place on its endpoint (e.g. a
// user's own scheduler, docs/scheduler-protocol.md).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "actors/pipeline/generation_defaults.h"
#include "actors/pipeline/registry.h"
#include "actors/pipeline/tokenize_request.h"
#include "runtime/logging.h"
#include "runtime/signals.h"
#include "runtime/supervisor.h"
#include "tools/flags/serve_flags.h"
#include "tools/zinfer/commands.h"

namespace zinfer::cli {

void add_serve_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("serve", "serve a model over the OpenAI HTTP API and ZeroMQ (all actors in one process): "
                                          "zinfer serve [MODEL] [--config FILE] [flags]");
  static ServeFlags flags;  // every setting as a flag over the config file
  flags.add(*cmd);
  cmd->callback([] {
    runtime::block_shutdown_signals();
    const actors::EngineConfig config = flags.load();
    // What the actors would only find out once started, checked here so that a bad value is an
    // error naming it rather than an actor that stops.
    actors::load_sampling_defaults(config.server.http.generation_config, config.backend.model_dir);
    if (!config.tokenizer.chat_template.empty()) {
      actors::TokenizerResources::load(config.backend.model_dir, config.backend.max_model_len,
                                       config.tokenizer.chat_template);
    }
    runtime::set_log_level(config.runtime.log_level);
    runtime::Supervisor supervisor;
    actors::register_pipeline_actors(supervisor, config);
    supervisor.start_threads(config.runtime.actors);
    runtime::logger("zinfer")->info("ready");
    // Supervision of the threads (docs/architecture.md, I38): an actor thread that stopped (it
    // threw) or whose loop has not answered for heartbeat_timeout_s cannot be replaced inside
    // this process (its state is shared with nothing, but a hung thread cannot be stopped), so
    // the others hear that it is down (the gateway ends every request in flight with an error its
    // client sees) and the process exits 1 naming the actor; a process manager restarts it.
    const auto interval = runtime::heartbeat_interval(config.runtime);
    const auto timeout = runtime::heartbeat_timeout(config.runtime);
    auto last_answer = std::chrono::steady_clock::now();
    for (;;) {
      int sig = runtime::wait_for_shutdown_signal(interval);
      if (sig != 0) {
        runtime::logger("zinfer")->info("signal {}: shutting down", sig);
        break;
      }
      const auto now = std::chrono::steady_clock::now();
      if (supervisor.heartbeat()) last_answer = now;
      const std::string stopped = supervisor.stopped_actor();
      const bool hung = now - last_answer > timeout;
      if (stopped.empty() && !hung) continue;
      const std::string why = !stopped.empty() ? "actor " + stopped
                                               : "an actor has not answered for " + std::to_string(timeout.count()) + " ms";
      runtime::logger("zinfer")->error("{}: ending the requests in flight and exiting", why);
      for (const auto& name : supervisor.unanswered_or_stopped()) supervisor.notify_all("down " + name, name);
      // The gateway's loop fails its requests at once; their connections write on I/O threads.
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      if (hung) {
        // A thread that does not answer cannot be joined: leave without stopping the others.
        std::fprintf(stderr, "zinfer: error: %s\n", why.c_str());
        std::fflush(stderr);
        std::_Exit(1);
      }
      supervisor.stop_threads();
      throw std::runtime_error(why);
    }
    supervisor.stop_threads();
  });
}

}  // namespace zinfer::cli
