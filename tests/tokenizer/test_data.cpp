#include "tests/tokenizer/test_data.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <utf8proc.h>

namespace zinfer::tok::testing {

std::string tokenizer_path(const std::string& name) {
  return std::string(ZINFER_SOURCE_DIR) + "/tests/data/tokenizers/" + name + "/tokenizer.json";
}

std::shared_ptr<const Tokenizer> load(const std::string& name) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const Tokenizer>> loaded;
  std::lock_guard lock(mutex);
  if (auto it = loaded.find(name); it != loaded.end()) return it->second;
  const std::string path = tokenizer_path(name);
  if (!std::filesystem::exists(path)) {
    ADD_FAILURE() << path << " is missing: run tools/fetch-tokenizers.sh to fetch the real tokenizer files";
    return nullptr;
  }
  auto tok = Tokenizer::from_file(path);
  loaded[name] = tok;
  return tok;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

const std::vector<std::string>& corpus() {
  static const std::vector<std::string> texts = [] {
    std::vector<std::string> out;
    // ZINFER_TOKENIZER_TEXTS swaps in another corpus (with ZINFER_TOKENIZER_REFS, its references).
    const char* override_path = std::getenv("ZINFER_TOKENIZER_TEXTS");
    std::istringstream lines(read_file(override_path ? std::string(override_path)
                                                     : std::string(ZINFER_SOURCE_DIR) + "/tests/data/tokenizer/texts.jsonl"));
    for (std::string line; std::getline(lines, line);) {
      if (!line.empty()) out.push_back(nlohmann::json::parse(line).get<std::string>());
    }
    return out;
  }();
  return texts;
}

std::string nfc(const std::string& text) {
  utf8proc_uint8_t* out = nullptr;
  const auto n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                              static_cast<utf8proc_ssize_t>(text.size()), &out,
                              static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  if (n < 0) throw std::runtime_error("NFC failed");
  std::string s(reinterpret_cast<const char*>(out), static_cast<size_t>(n));
  std::free(out);
  return s;
}

}  // namespace zinfer::tok::testing
