#include <stdexcept>

#include "tools/bench/commands.h"

namespace zinfer::bench {

void add_tokenizer_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("tokenizer", "tokenizer benchmark (not yet available)");
  cmd->allow_extras();
  cmd->callback([] { throw std::runtime_error("'zinfer-bench tokenizer' is not yet available"); });
}

}  // namespace zinfer::bench
