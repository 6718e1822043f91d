#include <cstdio>
#include <stdexcept>

#include "tools/zinfer/commands.h"

namespace zinfer::cli {

void add_actor_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("actor", "one actor as its own process (not yet available)");
  cmd->allow_extras();
  cmd->callback([] { throw std::runtime_error("'zinfer actor' is not yet available"); });
}

}  // namespace zinfer::cli
