#include <stdexcept>

#include "tools/bench/commands.h"

namespace zinfer::bench {

void add_roofline_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("roofline", "roofline benchmark (not yet available)");
  cmd->allow_extras();
  cmd->callback([] { throw std::runtime_error("'zinfer-bench roofline' is not yet available"); });
}

}  // namespace zinfer::bench
