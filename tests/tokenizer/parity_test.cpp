// Parity with Hugging Face `tokenizers` on the real Llama-2, Llama-3 and Qwen3 files, for every
// text of tests/data/tokenizer/texts.jsonl: ids with and without special tokens, and both
// decodes. The references come from tools/fixtures/make_tokenizer_refs.py (run where HF
// `tokenizers` is installed) and live in tests/data/tokenizer/ref/<name>.jsonl.
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/tokenizer/test_data.h"

namespace zinfer::tok::testing {
// Shared by both suites below.
static std::string ids_text(const std::vector<int32_t>& ids) { return nlohmann::json(ids).dump(); }

namespace {

class Parity : public ::testing::TestWithParam<std::string> {};

TEST_P(Parity, MatchesHuggingFaceOnEveryText) {
  const std::string name = GetParam();
  auto tok = load(name);
  ASSERT_TRUE(tok);
  // ZINFER_TOKENIZER_REFS points at another folder of references (say, fresh ones to try out).
  const char* ref_dir = std::getenv("ZINFER_TOKENIZER_REFS");
  const std::string ref_path =
      (ref_dir ? std::string(ref_dir) : std::string(ZINFER_SOURCE_DIR) + "/tests/data/tokenizer/ref") + "/" + name + ".jsonl";
  if (!std::filesystem::exists(ref_path)) {
    GTEST_SKIP() << ref_path << " is missing: run tools/fixtures/make_tokenizer_refs.py tests/data/tokenizers "
                 << "tests/data/tokenizer/texts.jsonl tests/data/tokenizer/ref where HF tokenizers is installed";
  }
  std::istringstream lines(read_file(ref_path));
  const auto& texts = corpus();
  size_t row = 0, mismatches = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    const auto ref = nlohmann::json::parse(line);
    ASSERT_LT(row, texts.size()) << ref_path << " has more rows than the corpus";
    const std::string& text = texts[row];
    ASSERT_EQ(ref.at("text").get<std::string>(), text) << ref_path << " row " << row << " is for another text";
    const auto ids = tok->encode(text, false);
    const auto ids_special = tok->encode(text, true);
    const auto want_ids = ref.at("ids").get<std::vector<int32_t>>();
    const auto want_special = ref.at("ids_special").get<std::vector<int32_t>>();
    const std::string decoded = tok->decode(want_ids, false);
    const std::string decoded_skip = tok->decode(want_special, true);
    const bool ok = ids == want_ids && ids_special == want_special && decoded == ref.at("decoded").get<std::string>() &&
                    decoded_skip == ref.at("decoded_skip").get<std::string>();
    if (!ok && ++mismatches <= 10) {
      ADD_FAILURE() << name << " row " << row << " text " << nlohmann::json(text).dump() << "\n  ids      " << ids_text(ids)
                    << "\n  want     " << ids_text(want_ids) << "\n  special  " << ids_text(ids_special) << "\n  want     "
                    << ids_text(want_special) << "\n  decoded  " << nlohmann::json(decoded).dump() << "\n  want     "
                    << ref.at("decoded").dump() << "\n  skip     " << nlohmann::json(decoded_skip).dump()
                    << "\n  want     " << ref.at("decoded_skip").dump();
    }
    ++row;
  }
  EXPECT_EQ(row, texts.size()) << ref_path << " does not cover the whole corpus";
  EXPECT_EQ(mismatches, 0u) << name << ": " << mismatches << " of " << row << " texts differ from HF tokenizers";
}

INSTANTIATE_TEST_SUITE_P(RealTokenizers, Parity, ::testing::ValuesIn(kTokenizerNames),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace zinfer::tok::testing

namespace zinfer::tok::testing {
namespace {

// Decoding id sequences that no encoding produces (what a model may emit): lone or shuffled
// byte tokens, special tokens, random ids. References: <name>_decode.jsonl, same generator.
class DecodeParity : public ::testing::TestWithParam<std::string> {};

TEST_P(DecodeParity, MatchesHuggingFaceOnArbitraryIds) {
  const std::string name = GetParam();
  auto tok = load(name);
  ASSERT_TRUE(tok);
  const char* ref_dir = std::getenv("ZINFER_TOKENIZER_REFS");
  const std::string ref_path = (ref_dir ? std::string(ref_dir) : std::string(ZINFER_SOURCE_DIR) + "/tests/data/tokenizer/ref") +
                               "/" + name + "_decode.jsonl";
  if (!std::filesystem::exists(ref_path)) {
    GTEST_SKIP() << ref_path << " is missing: run tools/fixtures/make_tokenizer_refs.py tests/data/tokenizers "
                 << "tests/data/tokenizer/texts.jsonl tests/data/tokenizer/ref where HF tokenizers is installed";
  }
  std::istringstream lines(read_file(ref_path));
  size_t rows = 0, mismatches = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    const auto ref = nlohmann::json::parse(line);
    const auto ids = ref.at("ids").get<std::vector<int32_t>>();
    const std::string decoded = tok->decode(ids, false), decoded_skip = tok->decode(ids, true);
    if ((decoded != ref.at("decoded").get<std::string>() || decoded_skip != ref.at("decoded_skip").get<std::string>()) &&
        ++mismatches <= 10) {
      ADD_FAILURE() << name << " ids " << ids_text(ids) << "\n  decoded " << nlohmann::json(decoded).dump()
                    << "\n  want    " << ref.at("decoded").dump() << "\n  skip    " << nlohmann::json(decoded_skip).dump()
                    << "\n  want    " << ref.at("decoded_skip").dump();
    }
    ++rows;
  }
  EXPECT_GT(rows, 0u) << ref_path << " is empty";
  EXPECT_EQ(mismatches, 0u) << name << ": " << mismatches << " of " << rows << " decodes differ from HF tokenizers";
}

INSTANTIATE_TEST_SUITE_P(RealTokenizers, DecodeParity, ::testing::ValuesIn(kTokenizerNames),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace zinfer::tok::testing
