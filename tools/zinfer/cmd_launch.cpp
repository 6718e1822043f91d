#include <cstdio>
#include <stdexcept>

#include "tools/zinfer/commands.h"

namespace zinfer::cli {

void add_launch_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("launch", "a supervisor starting the configured actors as processes (not yet available)");
  cmd->allow_extras();
  cmd->callback([] { throw std::runtime_error("'zinfer launch' is not yet available"); });
}

}  // namespace zinfer::cli
