#include <stdexcept>

#include "tools/zinfer/commands.h"

namespace zinfer::cli {

void add_tokenize_commands(CLI::App& app) {
  for (const char* name : {"tokenize", "detokenize"}) {
    auto* cmd = app.add_subcommand(name, std::string(name) + " text with a tokenizer.json (not yet available)");
    cmd->allow_extras();
    cmd->callback([name] { throw std::runtime_error(std::string("'zinfer ") + name + "' is not yet available"); });
  }
}

}  // namespace zinfer::cli
