// The built-in parsers, one file each (hermes.cpp, llama3_json.cpp, mistral.cpp, forced.cpp);
// registry.cpp names them.
#pragma once

#include <memory>

#include "gateway/tool_parsers/tool_parser.h"

namespace zinfer::gateway::tools {

std::unique_ptr<ToolParser> make_hermes_parser();
std::unique_ptr<ToolParser> make_llama3_json_parser();
std::unique_ptr<ToolParser> make_mistral_parser();

}  // namespace zinfer::gateway::tools
