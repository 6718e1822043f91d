// The table of tool parsers by name (vLLM's names for the same formats).
#include <map>

#include "gateway/tool_parsers/parsers.h"

namespace zinfer::gateway::tools {
namespace {

const std::map<std::string, std::unique_ptr<ToolParser>, std::less<>>& registry() {
  static const auto table = [] {
    std::map<std::string, std::unique_ptr<ToolParser>, std::less<>> t;
    for (auto make : {make_hermes_parser, make_llama3_json_parser, make_mistral_parser}) {
      auto parser = make();
      std::string name(parser->name());
      t.emplace(std::move(name), std::move(parser));
    }
    return t;
  }();
  return table;
}

}  // namespace

const ToolParser* find_tool_parser(std::string_view name) {
  const auto& table = registry();
  auto it = table.find(name);
  return it == table.end() ? nullptr : it->second.get();
}

std::vector<std::string> tool_parser_names() {
  std::vector<std::string> names;
  for (const auto& [name, parser] : registry()) names.push_back(name);
  return names;
}

}  // namespace zinfer::gateway::tools
