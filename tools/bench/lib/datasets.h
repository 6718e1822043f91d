// The request lists of `zinfer-bench serve`. Every dataset is a pure function of its options and
// seed: the same seed gives the identical list (prompts, prompt lengths, max_tokens), so runs
// against different servers see the same workload.
//   random          token ids drawn uniformly from the tokenizer's non-special vocabulary, decoded
//                   to text; lengths uniform in [L*(1-r), L*(1+r)] (vLLM's --random-range-ratio).
//   sharegpt        ShareGPT_V3 JSON: conversations[0] is the prompt, the length of
//                   conversations[1] the output length; filtered as vLLM does.
//   synthetic-chat  lengths from lognormal fits with ShareGPT's shape (below), text made from
//                   random tokens as in `random`; for machines without the ShareGPT file.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace zinfer::bench {

// The part of a tokenizer the datasets need; bench_serve.cpp adapts zinfer's tokenizer to it and
// the tests use a small fake.
class TokenCodec {
 public:
  virtual ~TokenCodec() = default;
  virtual int32_t vocab_size() const = 0;
  virtual bool is_special(int32_t id) const = 0;
  virtual std::vector<int32_t> encode(std::string_view text) const = 0;  // no special tokens added
  virtual std::string decode(std::span<const int32_t> ids) const = 0;
};

struct BenchRequest {
  std::string prompt;
  int prompt_len = 0;  // tokens of `prompt` as the tokenizer counts them
  int output_len = 0;  // max_tokens to ask for
};

struct RandomDatasetOptions {
  int num_prompts = 1000;
  int input_len = 1024;
  int output_len = 128;
  double range_ratio = 0.0;  // in [0, 1)
  uint64_t seed = 0;
  // vLLM's --random-prefix-len: this many random tokens, the same for every request, start each
  // prompt (then the prompt's own input_len-drawn tokens).
  int prefix_len = 0;
};
std::vector<BenchRequest> random_dataset(const TokenCodec& codec, const RandomDatasetOptions& opt);

struct ShareGptOptions {
  int num_prompts = 1000;
  std::optional<int> output_len;  // fixed output length instead of the answer's
  uint64_t seed = 0;
};
// vLLM's filter: conversations with at least two turns; after a seeded shuffle, keep those with
// prompt >= 4 and output >= 4 tokens (the second only when output_len is not fixed), prompt <=
// 1024 and prompt + output <= 2048, until num_prompts are found. Throws std::runtime_error naming
// the file when it cannot be read or parsed, or when no conversation passes the filter.
std::vector<BenchRequest> sharegpt_dataset(const std::string& path, const TokenCodec& codec,
                                           const ShareGptOptions& opt);
std::vector<BenchRequest> sharegpt_dataset_from_text(std::string_view json_text, const std::string& origin,
                                                     const TokenCodec& codec, const ShareGptOptions& opt);

// Lognormal length model: ln(length) ~ Normal(mu, sigma); median = e^mu, mean = e^(mu + sigma^2/2).
struct LognormalFit {
  double mu = 0;
  double sigma = 0;
};
// The built-in ShareGPT shape (docs/benchmarks/serving.md): prompts with median 120 and mean about
// 230 tokens, answers with median 140 and mean about 200 tokens, then vLLM's ShareGPT filter.
inline constexpr LognormalFit kSyntheticChatInput{4.787, 1.14};   // ln(120), sqrt(2 ln(230/120))
inline constexpr LognormalFit kSyntheticChatOutput{4.942, 0.845}; // ln(140), sqrt(2 ln(200/140))
LognormalFit fit_lognormal(const std::vector<int>& lengths);  // mean and std of ln(length)

struct SyntheticChatOptions {
  int num_prompts = 1000;
  std::optional<int> output_len;  // fixed output length instead of a drawn one
  uint64_t seed = 0;
  LognormalFit input = kSyntheticChatInput;
  LognormalFit output = kSyntheticChatOutput;
};
std::vector<BenchRequest> synthetic_chat_dataset(const TokenCodec& codec, const SyntheticChatOptions& opt);

}  // namespace zinfer::bench
