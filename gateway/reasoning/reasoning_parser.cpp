#include "gateway/reasoning/reasoning_parser.h"

namespace zinfer::gateway::reasoning {

const std::vector<ReasoningParser>& reasoning_parsers() {
  static const std::vector<ReasoningParser> parsers = {
      {"qwen3", "<think>", "</think>", /*follows_enable_thinking=*/true},
      {"deepseek_r1", "<think>", "</think>", /*follows_enable_thinking=*/false},
  };
  return parsers;
}

const ReasoningParser* find_reasoning_parser(std::string_view name) {
  for (const auto& p : reasoning_parsers()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::string reasoning_parser_names() {
  std::string names;
  for (const auto& p : reasoning_parsers()) {
    if (!names.empty()) names += ", ";
    names += p.name;
  }
  return names;
}

bool starts_in_reasoning(const ReasoningParser& parser, const protocol::GenerateRequest& request) {
  if (!request.is_chat) return false;
  if (parser.follows_enable_thinking && !request.enable_thinking) return false;
  return true;
}

}  // namespace zinfer::gateway::reasoning
