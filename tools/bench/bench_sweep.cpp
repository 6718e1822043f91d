#include <stdexcept>

#include "tools/bench/commands.h"

namespace zinfer::bench {

void add_sweep_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("sweep", "sweep benchmark (not yet available)");
  cmd->allow_extras();
  cmd->callback([] { throw std::runtime_error("'zinfer-bench sweep' is not yet available"); });
}

}  // namespace zinfer::bench
