#include <stdexcept>

#include "tools/zinfer/commands.h"

namespace zinfer::cli {

void add_make_model_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("make-model", "write the small default model (not yet available)");
  cmd->allow_extras();
  cmd->callback([] { throw std::runtime_error("'zinfer make-model' is not yet available"); });
}

}  // namespace zinfer::cli
