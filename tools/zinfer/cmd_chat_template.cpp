#include <cstdio>
#include <stdexcept>

#include "tools/zinfer/commands.h"

namespace zinfer::cli {

void add_chat_template_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("chat-template", "render a chat template (not yet available)");
  cmd->allow_extras();
  cmd->callback([] { throw std::runtime_error("'zinfer chat-template' is not yet available"); });
}

}  // namespace zinfer::cli
