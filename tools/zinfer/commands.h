// The subcommands of the `zinfer` binary (docs/architecture.md, "Command line", Invariant 31).
// Each lives in its own cmd_*.cpp and registers itself on the CLI11 app; main.cpp only calls these.
#pragma once

#include <CLI/CLI.hpp>

namespace zinfer::cli {

void add_serve_command(CLI::App& app);          // cmd_serve.cpp
void add_actor_command(CLI::App& app);          // cmd_serve.cpp: one actor as its own process
void add_launch_command(CLI::App& app);         // cmd_launch.cpp
void add_generate_command(CLI::App& app);       // cmd_generate.cpp
void add_tokenize_commands(CLI::App& app);      // cmd_tokenize.cpp: tokenize, detokenize
void add_chat_template_command(CLI::App& app);  // cmd_chat_template.cpp
void add_make_model_command(CLI::App& app);     // cmd_make_model.cpp: the default model

}  // namespace zinfer::cli
