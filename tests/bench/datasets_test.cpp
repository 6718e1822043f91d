// Request lists: random, ShareGPT and synthetic-chat, on the letter tokenizer of fake_codec.h.
#include <algorithm>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/bench/fake_codec.h"
#include "tools/bench/lib/datasets.h"

namespace zinfer::bench {
namespace {

using testing::LetterCodec;

bool same(const std::vector<BenchRequest>& a, const std::vector<BenchRequest>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].prompt != b[i].prompt || a[i].prompt_len != b[i].prompt_len || a[i].output_len != b[i].output_len) return false;
  }
  return true;
}

TEST(RandomDataset, LengthsWithinRangeRatioAndReproducible) {
  LetterCodec codec;
  RandomDatasetOptions opt;
  opt.num_prompts = 200;
  opt.input_len = 100;
  opt.output_len = 20;
  opt.range_ratio = 0.5;
  opt.seed = 3;
  const auto a = random_dataset(codec, opt);
  ASSERT_EQ(a.size(), 200u);
  int distinct_lengths = 0, last = -1;
  auto sorted = a;
  std::sort(sorted.begin(), sorted.end(), [](auto& x, auto& y) { return x.prompt_len < y.prompt_len; });
  for (const auto& r : sorted) {
    if (r.prompt_len != last) ++distinct_lengths;
    last = r.prompt_len;
  }
  for (const auto& r : a) {
    EXPECT_GE(r.prompt_len, 50);  // [100 * 0.5, 100 * 1.5]
    EXPECT_LE(r.prompt_len, 150);
    EXPECT_GE(r.output_len, 10);
    EXPECT_LE(r.output_len, 30);
    EXPECT_EQ(static_cast<int>(codec.encode(r.prompt).size()), r.prompt_len);
  }
  EXPECT_GT(distinct_lengths, 20);
  EXPECT_TRUE(same(a, random_dataset(codec, opt)));
  opt.seed = 4;
  EXPECT_FALSE(same(a, random_dataset(codec, opt)));
}

TEST(RandomDataset, ZeroRatioGivesFixedLengths) {
  LetterCodec codec;
  RandomDatasetOptions opt;
  opt.num_prompts = 20;
  opt.input_len = 32;
  opt.output_len = 8;
  for (const auto& r : random_dataset(codec, opt)) {
    EXPECT_EQ(r.prompt_len, 32);
    EXPECT_EQ(r.output_len, 8);
  }
  opt.range_ratio = 1.0;
  EXPECT_THROW(random_dataset(codec, opt), std::invalid_argument);
}

TEST(RandomDataset, PrefixIsSharedByEveryPrompt) {
  LetterCodec codec;
  RandomDatasetOptions opt;
  opt.num_prompts = 10;
  opt.input_len = 6;
  opt.output_len = 2;
  opt.prefix_len = 12;
  const auto rs = random_dataset(codec, opt);
  const std::string prefix = rs[0].prompt.substr(0, 12);
  for (const auto& r : rs) {
    EXPECT_EQ(r.prompt_len, 18);  // vLLM: prefix + input_len
    EXPECT_EQ(r.prompt.substr(0, 12), prefix);
  }
  EXPECT_NE(rs[0].prompt.substr(12), rs[1].prompt.substr(12));
  opt.prefix_len = -1;
  EXPECT_THROW(random_dataset(codec, opt), std::invalid_argument);
}

std::string sharegpt_json() {
  auto conv = [](const std::string& q, const std::string& a) {
    return nlohmann::json{{"id", q.substr(0, 3)},
                          {"conversations", {{{"from", "human"}, {"value", q}}, {{"from", "gpt"}, {"value", a}}}}};
  };
  nlohmann::json doc = nlohmann::json::array();
  doc.push_back(conv("hello there", "general kenobi"));                   // 11 / 14 tokens: kept
  doc.push_back(conv("hey", "a long enough answer"));                     // prompt of 3 tokens: dropped
  doc.push_back(conv("what is up", "ok"));                                // answer of 2 tokens: dropped
  doc.push_back(conv(std::string(1100, 'x'), "answer text"));             // prompt over 1024: dropped
  doc.push_back(conv(std::string(1000, 'y'), std::string(1100, 'z')));    // total over 2048: dropped
  doc.push_back(conv("tell me a story", "once upon a time"));             // 15 / 16: kept
  doc.push_back(conv("why is the sky blue", "rayleigh scattering"));      // 19 / 19: kept
  doc.push_back({{"id", "solo"}, {"conversations", {{{"from", "human"}, {"value", "only one turn"}}}}});
  return doc.dump();
}

TEST(ShareGptDataset, FiltersAsVllm) {
  LetterCodec codec;
  ShareGptOptions opt;
  opt.num_prompts = 10;
  const auto rs = sharegpt_dataset_from_text(sharegpt_json(), "test.json", codec, opt);
  ASSERT_EQ(rs.size(), 3u);
  std::vector<std::string> prompts;
  for (const auto& r : rs) {
    prompts.push_back(r.prompt);
    EXPECT_EQ(r.prompt_len, static_cast<int>(r.prompt.size()));
    if (r.prompt == "hello there") {
      EXPECT_EQ(r.output_len, 14);
    }
    if (r.prompt == "tell me a story") {
      EXPECT_EQ(r.output_len, 16);
    }
  }
  std::sort(prompts.begin(), prompts.end());
  EXPECT_EQ(prompts, (std::vector<std::string>{"hello there", "tell me a story", "why is the sky blue"}));
  EXPECT_TRUE(same(rs, sharegpt_dataset_from_text(sharegpt_json(), "test.json", codec, opt)));

  // A fixed output length replaces the answer's and lifts the 4-token floor on it.
  opt.output_len = 2;
  opt.num_prompts = 2;
  const auto fixed = sharegpt_dataset_from_text(sharegpt_json(), "test.json", codec, opt);
  ASSERT_EQ(fixed.size(), 2u);
  for (const auto& r : fixed) EXPECT_EQ(r.output_len, 2);
}

TEST(ShareGptDataset, Errors) {
  LetterCodec codec;
  EXPECT_THROW(sharegpt_dataset_from_text("{oops", "bad.json", codec, {}), std::runtime_error);
  EXPECT_THROW(sharegpt_dataset_from_text("{}", "obj.json", codec, {}), std::runtime_error);
  EXPECT_THROW(sharegpt_dataset_from_text("[]", "empty.json", codec, {}), std::runtime_error);
  EXPECT_THROW(sharegpt_dataset("/nonexistent/sharegpt.json", codec, {}), std::runtime_error);
}

TEST(SyntheticChat, ShapeBoundsAndReproducibility) {
  LetterCodec codec;
  SyntheticChatOptions opt;
  opt.num_prompts = 2000;
  opt.seed = 11;
  const auto rs = synthetic_chat_dataset(codec, opt);
  ASSERT_EQ(rs.size(), 2000u);
  std::vector<int> ins, outs;
  for (const auto& r : rs) {
    EXPECT_GE(r.prompt_len, 4);
    EXPECT_LE(r.prompt_len, 1024);
    EXPECT_GE(r.output_len, 4);
    EXPECT_LE(r.prompt_len + r.output_len, 2048);
    ins.push_back(r.prompt_len);
    outs.push_back(r.output_len);
  }
  std::sort(ins.begin(), ins.end());
  std::sort(outs.begin(), outs.end());
  // Medians e^mu = 120 and 140, a little lower after the filter cuts the long tail.
  EXPECT_GT(ins[1000], 100);
  EXPECT_LT(ins[1000], 135);
  EXPECT_GT(outs[1000], 120);
  EXPECT_LT(outs[1000], 155);
  EXPECT_TRUE(same(rs, synthetic_chat_dataset(codec, opt)));
  opt.seed = 12;
  EXPECT_FALSE(same(rs, synthetic_chat_dataset(codec, opt)));
}

TEST(SyntheticChat, FitLognormal) {
  const auto fit = fit_lognormal({static_cast<int>(std::round(std::exp(2.0))), static_cast<int>(std::round(std::exp(4.0)))});
  // ln 7 = 1.946, ln 55 = 4.007: mean 2.977, std 1.031
  EXPECT_NEAR(fit.mu, (std::log(7.0) + std::log(55.0)) / 2, 1e-12);
  EXPECT_NEAR(fit.sigma, (std::log(55.0) - std::log(7.0)) / 2, 1e-12);
}

}  // namespace
}  // namespace zinfer::bench
