#include <stdexcept>

#include "tools/bench/commands.h"

namespace zinfer::bench {

void add_latency_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("latency", "latency benchmark (not yet available)");
  cmd->allow_extras();
  cmd->callback([] { throw std::runtime_error("'zinfer-bench latency' is not yet available"); });
}

}  // namespace zinfer::bench
