// zinfer-bench: benchmarks of zinfer and, through the OpenAI API, of any server.
#include <cstdio>
#include <exception>

#include "tools/bench/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"zinfer-bench: serving, sweep, roofline, latency, throughput and runtime benchmarks"};
  app.require_subcommand(1);
  zinfer::bench::add_runtime_command(app);
  zinfer::bench::add_serve_command(app);
  zinfer::bench::add_sweep_command(app);
  zinfer::bench::add_roofline_command(app);
  zinfer::bench::add_latency_command(app);
  zinfer::bench::add_throughput_command(app);
  zinfer::bench::add_scheduler_command(app);
  zinfer::bench::add_tokenizer_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zinfer-bench: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
