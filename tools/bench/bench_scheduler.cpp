#include <stdexcept>

#include "tools/bench/commands.h"

namespace zinfer::bench {

void add_scheduler_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("scheduler", "scheduler benchmark (not yet available)");
  cmd->allow_extras();
  cmd->callback([] { throw std::runtime_error("'zinfer-bench scheduler' is not yet available"); });
}

}  // namespace zinfer::bench
