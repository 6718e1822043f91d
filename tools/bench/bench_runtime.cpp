#include <stdexcept>

#include "tools/bench/commands.h"

namespace zinfer::bench {

void add_runtime_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("runtime", "runtime benchmark (not yet available)");
  cmd->allow_extras();
  cmd->callback([] { throw std::runtime_error("'zinfer-bench runtime' is not yet available"); });
}

}  // namespace zinfer::bench
