// Locating and reading the chat-template test data; a missing file fails the test with the
// command that produces it.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace zinfer::chat::testing {

inline std::filesystem::path source_path(const std::string& relative) {
  return std::filesystem::path(ZINFER_SOURCE_DIR) / relative;
}

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

inline nlohmann::ordered_json read_json(const std::filesystem::path& path) {
  return nlohmann::ordered_json::parse(read_text(path));
}

inline std::vector<nlohmann::ordered_json> read_jsonl(const std::filesystem::path& path) {
  std::vector<nlohmann::ordered_json> rows;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) rows.push_back(nlohmann::ordered_json::parse(line));
  return rows;
}

// The real tokenizer configs are fetched, not committed.
inline std::filesystem::path tokenizer_dir(const std::string& model) {
  return source_path("tests/data/tokenizers/" + model);
}
#define ZINFER_REQUIRE_TOKENIZER(model)                                                                   \
  if (!std::filesystem::exists(::zinfer::chat::testing::tokenizer_dir(model) / "tokenizer_config.json")) { \
    FAIL() << "missing tests/data/tokenizers/" << (model)                                                \
           << "/tokenizer_config.json: run tools/fetch-tokenizers.sh (it fetches Llama-2/3 and Qwen3)";   \
  }

}  // namespace zinfer::chat::testing
