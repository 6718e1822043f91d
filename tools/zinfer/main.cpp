// zinfer: the server and its command-line tools. Each subcommand registers itself (commands.h).
#include <cstdio>
#include <exception>

#include "tools/zinfer/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"zinfer: an LLM inference server (OpenAI HTTP API and ZeroMQ), an actor system on ZeroMQ"};
  app.require_subcommand(1);
  zinfer::cli::add_serve_command(app);
  zinfer::cli::add_actor_command(app);
  zinfer::cli::add_launch_command(app);
  zinfer::cli::add_generate_command(app);
  zinfer::cli::add_tokenize_commands(app);
  zinfer::cli::add_chat_template_command(app);
  zinfer::cli::add_make_model_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zinfer: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
