#include <cstdio>
#include <stdexcept>

#include "tools/zinfer/commands.h"

namespace zinfer::cli {

void add_serve_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("serve", "all actors in one process (not yet available)");
  cmd->allow_extras();
  cmd->callback([] { throw std::runtime_error("'zinfer serve' is not yet available"); });
}

}  // namespace zinfer::cli
