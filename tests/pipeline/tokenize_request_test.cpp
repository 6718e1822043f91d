// The tokenizer stage's share of the sampling fields: bad_words become token sequences as vLLM
// makes them, token ids of logit_bias / allowed_token_ids / bad_words are checked against the
// vocabulary, and truncate_prompt_tokens keeps the end of the prompt.
#include <gtest/gtest.h>

#include <filesystem>
#include <variant>

#include "actors/pipeline/tokenize_request.h"

namespace zinfer::actors {
namespace {

TokenizerResources llama3() {
  const std::string dir = std::string(ZINFER_SOURCE_DIR) + "/tests/data/tokenizers/llama3";
  TokenizerResources r;
  if (!std::filesystem::exists(dir + "/tokenizer.json")) {
    ADD_FAILURE() << dir << "/tokenizer.json is missing: run tools/fetch-tokenizers.sh";
    return r;
  }
  r.tokenizer = tok::Tokenizer::from_file(dir + "/tokenizer.json");
  r.max_model_len = 64;
  r.vocab_size = 128256;
  return r;
}

protocol::GenerateRequest request(const std::string& prompt) {
  protocol::GenerateRequest g;
  g.request_id = 7;
  g.prompt = prompt;
  g.sampling.max_tokens = 4;
  return g;
}

protocol::TokenizedRequest ok(const TokenizerResources& res, const protocol::GenerateRequest& g) {
  auto out = tokenize_request(res, g);
  if (auto* e = std::get_if<protocol::ErrorReply>(&out)) ADD_FAILURE() << e->message;
  return std::get<protocol::TokenizedRequest>(out);
}

std::string refused(const TokenizerResources& res, const protocol::GenerateRequest& g) {
  auto out = tokenize_request(res, g);
  auto* e = std::get_if<protocol::ErrorReply>(&out);
  if (!e) return "(accepted)";
  EXPECT_EQ(e->code, 400);
  return e->message;
}

TEST(TokenizeRequest, BadWordsAreBannedWithAndWithoutALeadingSpace) {
  const TokenizerResources res = llama3();
  if (!res.tokenizer) return;
  auto g = request("Tell me about");
  g.sampling.bad_words = {"  hello", "world wide"};
  const auto t = ok(res, g);
  const auto& tk = *res.tokenizer;
  std::vector<std::vector<int32_t>> want;
  for (const std::string word : {"hello", "world wide"}) {
    auto plain = tk.encode(word, false), spaced = tk.encode(" " + word, false);
    want.push_back(plain);
    if (spaced[0] != plain[0] && spaced.size() == plain.size()) want.push_back(spaced);
  }
  EXPECT_EQ(t.sampling.bad_words_token_ids, want);
  // "hello" and " hello" are different single tokens in Llama 3's vocabulary: both banned.
  ASSERT_GE(want.size(), 2u);
  EXPECT_EQ(want[0].size(), 1u);
  EXPECT_EQ(want[1].size(), 1u);
  EXPECT_NE(want[0], want[1]);
  g.sampling.bad_words = {"   "};
  EXPECT_NE(refused(res, g).find("bad_words"), std::string::npos);
}

TEST(TokenizeRequest, TokenIdsOutsideTheVocabularyAreRefusedNamingTheField) {
  TokenizerResources res;
  res.max_model_len = 64;
  res.vocab_size = 100;
  protocol::GenerateRequest g;
  g.prompt_ids = {1, 2, 3};
  g.sampling.max_tokens = 4;
  g.sampling.logit_bias = {{5, 1.0f}, {100, 2.0f}};
  EXPECT_NE(refused(res, g).find("'logit_bias'"), std::string::npos);
  g.sampling.logit_bias = {{99, 1.0f}};
  g.sampling.allowed_token_ids = {0, -1};
  EXPECT_NE(refused(res, g).find("'allowed_token_ids'"), std::string::npos);
  g.sampling.allowed_token_ids = {0, 99};
  EXPECT_EQ(ok(res, g).sampling.allowed_token_ids, (std::vector<int32_t>{0, 99}));
  g.sampling.bad_words = {"x"};  // no tokenizer to encode them
  EXPECT_NE(refused(res, g).find("'bad_words'"), std::string::npos);
  g.sampling.bad_words.clear();
  g.sampling.bad_words_token_ids = {{3, 400}};
  EXPECT_NE(refused(res, g).find("'bad_words'"), std::string::npos);
}

TEST(TokenizeRequest, TruncatePromptTokensKeepsTheEnd) {
  TokenizerResources res;
  res.max_model_len = 8;
  res.vocab_size = 100;
  protocol::GenerateRequest g;
  g.prompt_ids = {1, 2, 3, 4, 5, 6};
  g.sampling.max_tokens = 2;
  g.sampling.truncate_prompt_tokens = 4;
  EXPECT_EQ(ok(res, g).prompt_ids, (std::vector<int32_t>{3, 4, 5, 6}));
  g.sampling.truncate_prompt_tokens = 10;
  EXPECT_NE(refused(res, g).find("'truncate_prompt_tokens'"), std::string::npos);
  g.sampling.truncate_prompt_tokens = -1;  // max_model_len: the prompt fits already
  EXPECT_EQ(ok(res, g).prompt_ids, g.prompt_ids);
  g.prompt_ids = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  g.sampling.truncate_prompt_tokens = 5;
  EXPECT_EQ(ok(res, g).prompt_ids, (std::vector<int32_t>{6, 7, 8, 9, 10}));
}

}  // namespace
}  // namespace zinfer::actors
