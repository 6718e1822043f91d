#include "tests/grammar/support.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "actors/tokenizer/tokenizer.h"

namespace zinfer::grammar::testing {

std::shared_ptr<const Vocabulary> vocabulary(const std::string& name) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const Vocabulary>> loaded;
  std::lock_guard lock(mutex);
  if (auto it = loaded.find(name); it != loaded.end()) return it->second;
  const std::string path = std::string(ZINFER_SOURCE_DIR) + "/tests/data/tokenizers/" + name + "/tokenizer.json";
  if (!std::filesystem::exists(path)) {
    ADD_FAILURE() << path << " is missing: run tools/fetch-tokenizers.sh";
    return nullptr;
  }
  auto tok = tok::Tokenizer::from_file(path);
  std::vector<int32_t> stops;
  for (const char* s : {"<|end_of_text|>", "<|eot_id|>", "<|im_end|>", "<|endoftext|>", "</s>"})
    if (auto id = tok->token_to_id(s)) stops.push_back(*id);
  auto vocab = Vocabulary::from_tokenizer(*tok, stops);
  loaded[name] = vocab;
  return vocab;
}

std::shared_ptr<const Vocabulary> byte_vocabulary() {
  static std::shared_ptr<const Vocabulary> vocab = [] {
    std::vector<std::string> tokens;
    for (int b = 0; b < 256; ++b) tokens.emplace_back(1, static_cast<char>(b));
    for (const char* w : {"true", "false", "null", "\":", "\",", "{\"", "\"}", "ab", "abc", "12", "  ", "\n  "})
      tokens.emplace_back(w);
    tokens.emplace_back("<eos>");
    std::vector<char> excluded(tokens.size(), 0);
    excluded.back() = 1;
    const auto eos = static_cast<int32_t>(tokens.size() - 1);
    return std::make_shared<const Vocabulary>(tokens, excluded, std::vector<int32_t>{eos});
  }();
  return vocab;
}

std::shared_ptr<const CompiledGrammar> compiled(Grammar g, std::shared_ptr<const Vocabulary> vocab) {
  return std::make_shared<const CompiledGrammar>(std::move(g), vocab ? vocab : byte_vocabulary());
}

bool full_match(const std::shared_ptr<const CompiledGrammar>& g, const std::string& text) {
  Matcher m(g);
  return m.accept_bytes(text) && m.is_accepting();
}

bool random_walk(const std::shared_ptr<const CompiledGrammar>& g, std::mt19937& rng, std::string& out, size_t max_bytes) {
  Matcher m(g);
  out.clear();
  std::uniform_real_distribution<double> coin(0, 1);
  while (out.size() < max_bytes) {
    const ByteSet allowed = m.allowed_bytes();
    if (m.is_accepting() && (allowed.none() || coin(rng) < 0.3)) return true;
    if (allowed.none()) return false;
    std::vector<int> closing, ascii, all;
    for (int b = 0; b < 256; ++b) {
      if (!allowed.test(b)) continue;
      all.push_back(b);
      if (b < 0x80) ascii.push_back(b);
      if (b == '"' || b == '}' || b == ']' || b == ',') closing.push_back(b);
    }
    const std::vector<int>* pool = &all;
    const double r = coin(rng);
    if (!closing.empty() && r < 0.3) pool = &closing;
    else if (!ascii.empty() && r < 0.9) pool = &ascii;
    const int b = (*pool)[std::uniform_int_distribution<size_t>(0, pool->size() - 1)(rng)];
    const char c = static_cast<char>(b);
    if (!m.accept_bytes(std::string_view(&c, 1))) return false;
    out += c;
  }
  return false;
}

std::vector<std::string> mutants(const std::string& s, std::mt19937& rng, size_t count) {
  static const std::string alphabet = "{}[]\":,0123456789-.eE truefalsn\\abxyz";
  std::vector<std::string> out;
  for (size_t i = 0; i < count; ++i) {
    std::string t = s;
    const size_t pos = t.empty() ? 0 : std::uniform_int_distribution<size_t>(0, t.size() - 1)(rng);
    const char c = alphabet[std::uniform_int_distribution<size_t>(0, alphabet.size() - 1)(rng)];
    switch (std::uniform_int_distribution<int>(0, 3)(rng)) {
      case 0:
        if (!t.empty()) t.erase(pos, 1);
        break;
      case 1: t.insert(pos, 1, c); break;
      case 2:
        if (!t.empty()) t[pos] = c;
        break;
      default: t.resize(pos); break;
    }
    if (t != s) out.push_back(t);
  }
  return out;
}

std::vector<Verdict> validate(const std::vector<std::pair<std::string, std::string>>& batch) {
  const std::string dir = std::string(ZINFER_BINARY_DIR) + "/tests/grammar";
  std::filesystem::create_directories(dir);
  static int counter = 0;
  const std::string in = dir + "/validate_in_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + ".json";
  nlohmann::json items = nlohmann::json::array();
  // Instances travel as hex: edits may have cut a UTF-8 character, which JSON text cannot carry.
  for (const auto& [schema, instance] : batch) {
    std::string hex;
    for (unsigned char c : instance) {
      static const char* digits = "0123456789abcdef";
      hex += digits[c >> 4];
      hex += digits[c & 15];
    }
    items.push_back({{"schema", schema}, {"instance", hex}});
  }
  std::ofstream(in) << items.dump();
  const std::string cmd = "/usr/bin/python3 " + std::string(ZINFER_SOURCE_DIR) + "/tests/grammar/validate.py " + in;
  FILE* pipe = popen(cmd.c_str(), "r");
  std::vector<Verdict> out;
  if (!pipe) {
    ADD_FAILURE() << "cannot run " << cmd;
    return out;
  }
  char line[64];
  while (fgets(line, sizeof line, pipe)) {
    const std::string v(line);
    if (v.rfind("valid", 0) == 0) out.push_back(Verdict::kValid);
    else if (v.rfind("invalid", 0) == 0) out.push_back(Verdict::kInvalid);
    else if (v.rfind("nonjson", 0) == 0) out.push_back(Verdict::kNotJson);
  }
  const int status = pclose(pipe);
  std::filesystem::remove(in);
  EXPECT_EQ(status, 0) << cmd << " failed: is python3-jsonschema installed (apt-get install -y python3-jsonschema)?";
  EXPECT_EQ(out.size(), batch.size());
  return out;
}

}  // namespace zinfer::grammar::testing
