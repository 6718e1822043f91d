#include "gateway/tool_parsers/tool_parser.h"

#include <random>

namespace zinfer::gateway::tools {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace

std::string_view trim_left(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  return s;
}

std::string_view trim_right(std::string_view s) {
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::string_view trim(std::string_view s) { return trim_right(trim_left(s)); }

std::string ParsedOutput::content(bool final) const {
  if (calls.empty()) return std::string(final ? std::string_view(texts.front()) : trim_right(texts.front()));
  std::string out(trim_right(texts.front()));
  for (size_t i = 1; i < texts.size(); ++i) out += trim(texts[i]);
  return out;
}

std::string random_call_id(std::string_view prefix, size_t length) {
  static constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::uniform_int_distribution<size_t> pick(0, kAlphabet.size() - 1);
  std::string id(prefix);
  for (size_t i = 0; i < length; ++i) id += kAlphabet[pick(rng)];
  return id;
}

std::string ToolParser::call_id() const { return random_call_id("call_", 24); }

}  // namespace zinfer::gateway::tools
