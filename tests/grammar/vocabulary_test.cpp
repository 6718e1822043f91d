// Token bytes of the real vocabularies (byte-level BPE: Llama-3, Qwen3; SentencePiece with byte
// fallback: Llama-2), against the tokenizer's own decoder, and the token trie's ranges.
#include <gtest/gtest.h>

#include "actors/grammar/errors.h"
#include "actors/grammar/utf8_class.h"
#include "actors/tokenizer/tokenizer.h"
#include "tests/grammar/support.h"

namespace zinfer::grammar {
namespace {

std::shared_ptr<const tok::Tokenizer> tokenizer(const std::string& name) {
  return tok::Tokenizer::from_file(std::string(ZINFER_SOURCE_DIR) + "/tests/data/tokenizers/" + name + "/tokenizer.json");
}

bool valid_utf8(const std::string& s) {
  size_t pos = 0;
  uint32_t cp;
  while (pos < s.size())
    if (!utf8_decode(s, pos, cp)) return false;
  return true;
}

TEST(Vocabulary, ByteLevelTokensDecodeToTheirBytes) {
  for (const char* name : {"llama3", "qwen3"}) {
    SCOPED_TRACE(name);
    auto vocab = testing::vocabulary(name);
    ASSERT_TRUE(vocab);
    auto tok = tokenizer(name);
    size_t checked = 0;
    for (int32_t id = 0; id < tok->vocab_size(); ++id) {
      if (tok->is_special(id)) {
        EXPECT_FALSE(vocab->usable(id)) << id;
        continue;
      }
      const std::string& bytes = vocab->bytes(id);
      if (!valid_utf8(bytes)) continue;  // decode would show U+FFFD for a partial character
      const int32_t ids[] = {id};
      ASSERT_EQ(tok->decode(ids), bytes) << "token " << id;
      ++checked;
    }
    EXPECT_GT(checked, 100000u);
    EXPECT_EQ(vocab->bytes(*tok->token_to_id("Ġthe")), " the");
    EXPECT_EQ(vocab->bytes(*tok->token_to_id("Ċ")), "\n");
  }
}

TEST(Vocabulary, SentencePieceTokens) {
  auto vocab = testing::vocabulary("llama2");
  ASSERT_TRUE(vocab);
  auto tok = tokenizer("llama2");
  EXPECT_EQ(vocab->bytes(*tok->token_to_id("<0x0A>")), "\n");
  EXPECT_EQ(vocab->bytes(*tok->token_to_id("<0xE2>")), "\xE2");
  EXPECT_EQ(vocab->bytes(*tok->token_to_id("▁the")), " the");
  EXPECT_EQ(vocab->bytes(*tok->token_to_id("ing")), "ing");
  EXPECT_FALSE(vocab->usable(*tok->token_to_id("<s>")));
  EXPECT_TRUE(vocab->is_stop(*tok->token_to_id("</s>")));
  // Between two tokens the decoder writes exactly the token's bytes (no leading-space strip).
  const int32_t x = *tok->token_to_id("x");
  size_t checked = 0;
  for (int32_t id = 3; id < tok->vocab_size(); id += 7) {
    const std::string& bytes = vocab->bytes(id);
    if (!valid_utf8(bytes) || bytes.empty()) continue;
    const int32_t pair[] = {x, id}, single[] = {x};
    ASSERT_EQ(tok->decode(pair), tok->decode(single) + bytes) << "token " << id;
    ++checked;
  }
  EXPECT_GT(checked, 4000u);
}

TEST(Vocabulary, TrieRangesHoldThePrefixes) {
  auto vocab = testing::vocabulary("qwen3");
  ASSERT_TRUE(vocab);
  const auto& trie = vocab->trie();
  const auto& sorted = vocab->sorted();
  EXPECT_EQ(trie[0].end, sorted.size());
  std::vector<std::pair<uint32_t, std::string>> stack{{0, ""}};
  size_t ending = 0;
  while (!stack.empty()) {
    auto [node, prefix] = stack.back();
    stack.pop_back();
    for (uint32_t i = trie[node].begin; i < trie[node].end; ++i) {
      const std::string& b = vocab->bytes(sorted[i]);
      ASSERT_EQ(b.compare(0, prefix.size(), prefix), 0);
      ASSERT_EQ(i < trie[node].here_end, b.size() == prefix.size());
    }
    ending += trie[node].here_end - trie[node].begin;
    for (uint32_t c = trie[node].first_child; c != 0; c = trie[c].next_sibling)
      stack.emplace_back(c, prefix + static_cast<char>(trie[c].byte));
  }
  EXPECT_EQ(ending, sorted.size());
}

TEST(Vocabulary, MaskWiderThanTheTokenizer) {
  auto tok = tokenizer("llama3");
  const int32_t eot = *tok->token_to_id("<|eot_id|>");
  auto vocab = Vocabulary::from_tokenizer(*tok, {eot}, tok->vocab_size() + 300);
  EXPECT_EQ(vocab->mask_size(), tok->vocab_size() + 300);
  EXPECT_FALSE(vocab->usable(tok->vocab_size() + 5));
  EXPECT_THROW(Vocabulary({"a"}, {0}, {7}), GrammarError);  // a stop id outside the vocabulary
}

}  // namespace
}  // namespace zinfer::grammar
