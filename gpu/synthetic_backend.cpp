#include "gpu/synthetic_backend.h"

#include "gpu/quant/fp8_online.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace zinfer::gpu {

namespace {

bool is_eos(int32_t token, const ModelConfig& config) {
  return std::find(config.eos_token_ids.begin(), config.eos_token_ids.end(), token) != config.eos_token_ids.end();
}

// splitmix64's finaliser: neighbouring (seq_id, index) pairs land far apart in the vocabulary, so
// the tokens look like a real model's rather than a counter (a prefix cache or a stop string
// sees no pattern).
uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

int64_t bytes_per_element(const std::string& dtype, const ModelConfig& config) {
  const std::string& d = dtype == "auto" ? config.torch_dtype : dtype;
  return d == "float32" ? 4 : 2;
}

class SyntheticBackend final : public Backend {
 public:
  SyntheticBackend(ModelConfig config, CacheGeometry geometry) : config_(std::move(config)), geometry_(geometry) {}

  const ModelConfig& config() const override { return config_; }
  CacheGeometry cache_geometry() const override { return geometry_; }
  std::string name() const override { return "synthetic"; }

  std::vector<SampledToken> step(const BatchInput& batch) override {
    // The copies move no data, but a plan naming a block outside the pools is a scheduler bug
    // that the benchmark must not hide.
    for (const auto& [device, host] : batch.swap_out) check_copy("swap_out", device, host, false, true);
    for (const auto& [host, device] : batch.swap_in) check_copy("swap_in", host, device, true, false);
    for (const auto& [src, dst] : batch.copy) check_copy("copy", src, dst, false, false);
    std::vector<SampledToken> out;
    out.reserve(batch.seqs.size());
    for (const auto& seq : batch.seqs) {
      check_sequence(seq);
      if (!seq.sample) continue;
      SampledToken t;
      t.seq_id = seq.seq_id;
      t.token = synthetic_token(seq.seq_id, seq.sampling.sample_index, config_);
      t.logprob = 0.0f;
      add_alternatives(t, seq.sampling.top_logprobs);
      out.push_back(std::move(t));
    }
    return out;
  }

  std::vector<float> forward_logits(const SequenceInput&) override {
    throw std::runtime_error(
        "the synthetic backend computes no logits: it is for control-plane benchmarks only (use device cpu or cuda)");
  }

 private:
  void check_block(const char* what, int32_t block, bool host) const {
    const int32_t limit = host ? geometry_.num_cpu_blocks : geometry_.num_gpu_blocks;
    if (block < 0 || block >= limit) {
      throw std::invalid_argument(std::string("synthetic backend: ") + what + " names " + (host ? "host" : "device") +
                                  " block " + std::to_string(block) + " outside [0, " + std::to_string(limit) + ")");
    }
  }

  void check_copy(const char* what, int32_t src, int32_t dst, bool src_host, bool dst_host) const {
    check_block(what, src, src_host);
    check_block(what, dst, dst_host);
  }

  void check_sequence(const SequenceInput& seq) const {
    const auto fail = [&](const std::string& why) {
      throw std::invalid_argument("synthetic backend: sequence " + std::to_string(seq.seq_id) + ": " + why);
    };
    if (seq.use_last_sampled ? (seq.num_tokens != 1 || !seq.token_ids.empty())
                             : seq.num_tokens != static_cast<int32_t>(seq.token_ids.size())) {
      fail("num_tokens " + std::to_string(seq.num_tokens) + " does not match its " +
           std::to_string(seq.token_ids.size()) + " token ids");
    }
    const int64_t end = int64_t(seq.start_pos) + seq.num_tokens;
    if (seq.start_pos < 0 || int64_t(seq.block_table.size()) * geometry_.block_size < end) {
      fail("block table of " + std::to_string(seq.block_table.size()) + " blocks does not cover positions up to " +
           std::to_string(end));
    }
    check_table(seq.block_table);
  }

  // Every entry must name a device block. One pass for the range (a loop the compiler
  // vectorises: at hundreds of sequences of thousands of tokens, one call and two branches per
  // entry made this check a visible part of the executor's time); only a table that fails is
  // walked again, to name the first entry out of range as check_block does.
  void check_table(const std::vector<int32_t>& table) const {
    int32_t lo = 0, hi = 0;
    for (const int32_t b : table) {
      lo = std::min(lo, b);
      hi = std::max(hi, b);
    }
    if (lo >= 0 && hi < geometry_.num_gpu_blocks) return;
    for (const int32_t b : table) check_block("a block table", b, false);
  }

  // Any deterministic alternatives: the sampled token first (it holds all the probability), then
  // the ids after it, with falling log-probabilities.
  void add_alternatives(SampledToken& t, int32_t count) const {
    const int32_t n = std::min(count, config_.vocab_size);
    for (int32_t i = 0; i < n; ++i) {
      t.top.emplace_back((t.token + i) % config_.vocab_size, -10.0f * static_cast<float>(i));
    }
  }

  ModelConfig config_;
  CacheGeometry geometry_;
};

}  // namespace

int32_t synthetic_token(uint64_t seq_id, int32_t sample_index, const ModelConfig& config) {
  const uint64_t vocab = static_cast<uint64_t>(config.vocab_size);
  int32_t token = static_cast<int32_t>(mix(mix(seq_id) + static_cast<uint64_t>(sample_index)) % vocab);
  // make_synthetic_backend checked that some id is not an eos, so this ends.
  while (is_eos(token, config)) token = static_cast<int32_t>((static_cast<uint64_t>(token) + 1) % vocab);
  return token;
}

std::unique_ptr<Backend> make_synthetic_backend(const BackendOptions& options) {
  if (options.num_gpu_blocks <= 0) {
    throw std::invalid_argument(
        "device 'synthetic' needs [cache] num_gpu_blocks > 0: it has no memory to size its KV pool from");
  }
  if (options.block_size <= 0) {
    throw std::invalid_argument("block_size must be positive, got " + std::to_string(options.block_size));
  }
  if (options.kv_cache_dtype != KvCacheDtype::kAuto)  // refused rather than accepted to no effect
    throw std::invalid_argument("device 'synthetic' stores no KV bytes: [cache] kv_cache_dtype fp8 is not supported there");
  // No weights are read, but the setting is checked against the checkpoint as the real backends do.
  ModelConfig config = with_quantization(load_model_config(options.model_dir), options);
  int32_t non_eos = config.vocab_size;
  for (int32_t id = 0; id < config.vocab_size; ++id) non_eos -= is_eos(id, config) ? 1 : 0;
  if (non_eos == 0) throw ModelConfigError(options.model_dir + ": every token of the vocabulary is an eos id");

  CacheGeometry geometry;
  geometry.block_size = options.block_size;
  geometry.num_gpu_blocks = options.num_gpu_blocks;
  geometry.num_cpu_blocks = options.num_cpu_blocks;
  if (geometry.num_cpu_blocks == 0) {
    // As the real backends do: the host pool holds as many blocks of this model's K/V as the swap
    // space would.
    const int64_t block_bytes = int64_t(config.num_hidden_layers) * 2 * options.block_size *
                                config.num_key_value_heads * config.head_dim *
                                bytes_per_element(options.dtype, config);
    geometry.num_cpu_blocks = static_cast<int32_t>(
        std::min<int64_t>(options.swap_space_bytes / std::max<int64_t>(block_bytes, 1), int64_t(1) << 24));
  }
  return std::make_unique<SyntheticBackend>(std::move(config), geometry);
}

}  // namespace zinfer::gpu
