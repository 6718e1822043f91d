#include "tools/bench/lib/datasets.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace zinfer::bench {
namespace {

// vLLM's ShareGPT filter bounds, also applied to the synthetic lengths.
constexpr int kMinLen = 4;
constexpr int kMaxPromptLen = 1024;
constexpr int kMaxTotalLen = 2048;

// Draws text of about `len` tokens from the non-special vocabulary. Decoding and re-encoding
// random ids can merge or split tokens, so the text is re-encoded, cut to `len` tokens when it
// came out longer, and its real length returned.
class RandomText {
 public:
  explicit RandomText(const TokenCodec& codec) : codec_(codec) {
    for (int32_t id = 0; id < codec.vocab_size(); ++id) {
      if (!codec.is_special(id)) allowed_.push_back(id);
    }
    if (allowed_.empty()) throw std::runtime_error("the tokenizer has no non-special tokens to draw prompts from");
  }

  std::vector<int32_t> draw(int len, std::mt19937_64& rng) const {
    std::uniform_int_distribution<size_t> pick(0, allowed_.size() - 1);
    std::vector<int32_t> ids(static_cast<size_t>(std::max(len, 0)));
    for (auto& id : ids) id = allowed_[pick(rng)];
    return ids;
  }

  BenchRequest make(int len, int output_len, std::mt19937_64& rng, const std::vector<int32_t>& prefix = {}) const {
    std::vector<int32_t> ids = prefix;
    const auto own = draw(len, rng);
    ids.insert(ids.end(), own.begin(), own.end());
    len += static_cast<int>(prefix.size());
    BenchRequest r;
    r.prompt = codec_.decode(ids);
    auto again = codec_.encode(r.prompt);
    if (static_cast<int>(again.size()) > len) {
      again.resize(static_cast<size_t>(len));
      r.prompt = codec_.decode(again);
      again = codec_.encode(r.prompt);
    }
    r.prompt_len = static_cast<int>(again.size());
    r.output_len = output_len;
    return r;
  }

 private:
  const TokenCodec& codec_;
  std::vector<int32_t> allowed_;
};

void require_positive(int value, const char* flag) {
  if (value <= 0) throw std::invalid_argument(std::string(flag) + " must be > 0, got " + std::to_string(value));
}

}  // namespace

std::vector<BenchRequest> random_dataset(const TokenCodec& codec, const RandomDatasetOptions& opt) {
  require_positive(opt.num_prompts, "--num-prompts");
  require_positive(opt.input_len, "--random-input-len");
  require_positive(opt.output_len, "--random-output-len");
  if (!(opt.range_ratio >= 0.0 && opt.range_ratio < 1.0)) {
    throw std::invalid_argument("--random-range-ratio must be in [0, 1), got " + std::to_string(opt.range_ratio));
  }
  std::mt19937_64 rng(opt.seed);
  auto bounds = [&](int len) {
    const int lo = std::max(1, static_cast<int>(std::floor(len * (1.0 - opt.range_ratio))));
    const int hi = std::max(lo, static_cast<int>(std::floor(len * (1.0 + opt.range_ratio))));
    return std::uniform_int_distribution<int>(lo, hi);
  };
  auto in_dist = bounds(opt.input_len), out_dist = bounds(opt.output_len);
  // Lengths first, then texts, so that the lengths of request i do not depend on the vocabulary.
  std::vector<std::pair<int, int>> lens(static_cast<size_t>(opt.num_prompts));
  for (auto& l : lens) l.first = in_dist(rng);
  for (auto& l : lens) l.second = out_dist(rng);
  if (opt.prefix_len < 0) throw std::invalid_argument("--random-prefix-len must be >= 0, got " + std::to_string(opt.prefix_len));
  RandomText text(codec);
  const std::vector<int32_t> prefix = text.draw(opt.prefix_len, rng);
  std::vector<BenchRequest> out;
  out.reserve(lens.size());
  for (const auto& [in, o] : lens) out.push_back(text.make(in, o, rng, prefix));
  return out;
}

std::vector<BenchRequest> sharegpt_dataset(const std::string& path, const TokenCodec& codec,
                                           const ShareGptOptions& opt) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open ShareGPT file '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return sharegpt_dataset_from_text(ss.str(), path, codec, opt);
}

std::vector<BenchRequest> sharegpt_dataset_from_text(std::string_view json_text, const std::string& origin,
                                                     const TokenCodec& codec, const ShareGptOptions& opt) {
  require_positive(opt.num_prompts, "--num-prompts");
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(json_text);
  } catch (const std::exception& e) {
    throw std::runtime_error("ShareGPT file '" + origin + "' is not JSON: " + e.what());
  }
  if (!doc.is_array()) throw std::runtime_error("ShareGPT file '" + origin + "' is not a JSON array of conversations");
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const auto& entry : doc) {
    if (!entry.is_object()) continue;
    const auto conv = entry.find("conversations");
    if (conv == entry.end() || !conv->is_array() || conv->size() < 2) continue;
    const auto& first = (*conv)[0];
    const auto& second = (*conv)[1];
    if (!first.is_object() || !second.is_object() || !first.contains("value") || !second.contains("value") ||
        !first["value"].is_string() || !second["value"].is_string()) {
      continue;
    }
    pairs.emplace_back(first["value"].get<std::string>(), second["value"].get<std::string>());
  }
  std::mt19937_64 rng(opt.seed);
  std::shuffle(pairs.begin(), pairs.end(), rng);
  std::vector<BenchRequest> out;
  for (const auto& [prompt, answer] : pairs) {
    if (static_cast<int>(out.size()) >= opt.num_prompts) break;
    const int prompt_len = static_cast<int>(codec.encode(prompt).size());
    const int output_len = opt.output_len ? *opt.output_len : static_cast<int>(codec.encode(answer).size());
    if (prompt_len < kMinLen || (!opt.output_len && output_len < kMinLen)) continue;
    if (prompt_len > kMaxPromptLen || prompt_len + output_len > kMaxTotalLen) continue;
    out.push_back({prompt, prompt_len, output_len});
  }
  if (out.empty()) {
    throw std::runtime_error("ShareGPT file '" + origin + "': no conversation passes the length filter");
  }
  return out;
}

LognormalFit fit_lognormal(const std::vector<int>& lengths) {
  LognormalFit fit;
  if (lengths.empty()) return fit;
  double sum = 0;
  for (int l : lengths) sum += std::log(std::max(l, 1));
  fit.mu = sum / static_cast<double>(lengths.size());
  double sq = 0;
  for (int l : lengths) sq += (std::log(std::max(l, 1)) - fit.mu) * (std::log(std::max(l, 1)) - fit.mu);
  fit.sigma = std::sqrt(sq / static_cast<double>(lengths.size()));
  return fit;
}

std::vector<BenchRequest> synthetic_chat_dataset(const TokenCodec& codec, const SyntheticChatOptions& opt) {
  require_positive(opt.num_prompts, "--num-prompts");
  if (opt.output_len) {
    require_positive(*opt.output_len, "output length");
    if (*opt.output_len > kMaxTotalLen - kMinLen) {
      throw std::invalid_argument("synthetic-chat output length " + std::to_string(*opt.output_len) +
                                  " leaves no room for a prompt within " + std::to_string(kMaxTotalLen) + " tokens");
    }
  }
  std::mt19937_64 rng(opt.seed);
  std::lognormal_distribution<double> in_dist(opt.input.mu, opt.input.sigma);
  std::lognormal_distribution<double> out_dist(opt.output.mu, opt.output.sigma);
  std::vector<std::pair<int, int>> lens;
  // Redraw pairs outside the ShareGPT filter so that the shape is that of the filtered set.
  while (static_cast<int>(lens.size()) < opt.num_prompts) {
    const int in = static_cast<int>(std::lround(in_dist(rng)));
    const int drawn_out = static_cast<int>(std::lround(out_dist(rng)));
    const int o = opt.output_len ? *opt.output_len : drawn_out;
    if (in < kMinLen || (!opt.output_len && o < kMinLen) || in > kMaxPromptLen || in + o > kMaxTotalLen) continue;
    lens.emplace_back(in, o);
  }
  RandomText text(codec);
  std::vector<BenchRequest> out;
  out.reserve(lens.size());
  for (const auto& [in, o] : lens) out.push_back(text.make(in, o, rng));
  return out;
}

}  // namespace zinfer::bench
