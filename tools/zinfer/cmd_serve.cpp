// zinfer serve [MODEL] [--config FILE] [flags]: every configured actor ([runtime].actors) as a
// thread of this process, until SIGINT/SIGTERM (tools/flags/serve_flags.h has the flags). Leaving one out lets an external process take its place on its endpoint (e.g. a
// user's own scheduler, docs/scheduler-protocol.md).
#include <cstdio>

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
