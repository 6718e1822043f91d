#include <stdexcept>

#include "tools/bench/commands.h"

namespace zinfer::bench {

void add_throughput_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("throughput", "throughput benchmark (not yet available)");
  cmd->allow_extras();
  cmd->callback([] { throw std::runtime_error("'zinfer-bench throughput' is not yet available"); });
}

}  // namespace zinfer::bench
