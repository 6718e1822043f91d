#include <stdexcept>

#include "tools/bench/commands.h"

namespace zinfer::bench {

void add_serve_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("serve", "serve benchmark (not yet available)");
  cmd->allow_extras();
  cmd->callback([] { throw std::runtime_error("'zinfer-bench serve' is not yet available"); });
}

}  // namespace zinfer::bench
