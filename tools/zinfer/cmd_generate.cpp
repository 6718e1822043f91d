#include <cstdio>
#include <stdexcept>

#include "tools/zinfer/commands.h"

namespace zinfer::cli {

void add_generate_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("generate", "one request through the actors (not yet available)");
  cmd->allow_extras();
  cmd->callback([] { throw std::runtime_error("'zinfer generate' is not yet available"); });
}

}  // namespace zinfer::cli
