#include "gpu/cpu/cpu_backend.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "gpu/cpu/kv_cache.h"
#include "gpu/cpu/model.h"
#include "gpu/cpu/sampler.h"
#include "gpu/quant/fp8_online.h"
#include "gpu/quant/kv_scales.h"
#include "gpu/sampling_rules.h"

namespace zinfer::gpu::cpu {
namespace {

class CpuBackend final : public Backend {
 public:
  CpuBackend(const BackendOptions& options, const RankContext& rank)
      : config_(with_quantization(load_model_config(options.model_dir), options)),
        model_(config_, WeightSet(options.model_dir), rank),
        cache_(make_cache(options, config_, model_.local_config(), rank)),
        rng_(rank.group != nullptr ? rank.seed : std::random_device{}()) {
    // 0: OpenMP's default (OMP_NUM_THREADS, else every core), shared by a group's ranks.
    num_threads_ = std::max(1, (options.num_threads > 0 ? options.num_threads : omp_get_max_threads()) / rank.size());
    max_model_len_ = options.max_model_len > 0 ? options.max_model_len : config_.max_position_embeddings;
  }

  const ModelConfig& config() const override { return config_; }

  CacheGeometry cache_geometry() const override {
    return {static_cast<int32_t>(cache_.block_size()), static_cast<int32_t>(cache_.num_blocks()),
            static_cast<int32_t>(cache_.num_host_blocks())};
  }

  std::string name() const override { return "cpu"; }

  std::vector<SampledToken> step(const BatchInput& batch) override {
    omp_set_num_threads(num_threads_);  // a per-thread setting: step() may run on any thread
    for (uint64_t id : batch.finished) {
      last_sampled_.erase(id);
      history_.drop(id);
    }
    // Swap-outs first: a device block freed by one may be the target of a swap-in.
    for (const auto& [device, host] : batch.swap_out) cache_.swap_out(device, host);
    for (const auto& [host, device] : batch.swap_in) cache_.swap_in(host, device);
    for (const auto& [src, dst] : batch.copy) cache_.copy(src, dst);
    if (batch.seqs.empty()) return {};

    ForwardBatch fb;
    std::vector<const SequenceInput*> sampled;
    for (const SequenceInput& seq : batch.seqs) {
      append(seq, fb);
      if (seq.sample) {
        fb.logit_rows.push_back(static_cast<int64_t>(fb.tokens.size()) - 1);
        sampled.push_back(&seq);
      }
    }
    std::vector<float> logits = model_.forward(fb, cache_);
    // Seeds for unseeded rows are drawn in batch order before the rows are sampled in parallel.
    const int64_t rows = static_cast<int64_t>(sampled.size());
    std::vector<uint64_t> unseeded(rows);
    for (auto& u : unseeded) u = rng_();
    // The generated tokens of the rows with rules (penalties and bad words read them).
    std::vector<SampledHistory::Entry*> histories(rows, nullptr);
    for (int64_t r = 0; r < rows; ++r)
      if (sampled[r]->sampling.rules) histories[r] = &history_.track(sampled[r]->seq_id, sampled[r]->sampling.rules);
    // The grammar masks of the constrained rows, asked for after the forward pass (gpu/token_masks.h).
    std::vector<const uint32_t*> masks(rows, nullptr);
    if (batch.token_masks != nullptr) {
      const uint32_t* words = batch.token_masks->rows();
      const size_t row_words = batch.token_masks->row_words();
      if (row_words * 32 < static_cast<size_t>(config_.vocab_size))
        throw std::invalid_argument("token masks of " + std::to_string(row_words) + " words do not cover the vocabulary of " +
                                    std::to_string(config_.vocab_size));
      size_t k = 0;
      for (int64_t r = 0; r < rows; ++r) {
        if (!sampled[r]->sampling.token_mask) continue;
        if (k == batch.token_masks->num_rows()) throw std::invalid_argument("more masked rows than token masks");
        masks[r] = words + k++ * row_words;
      }
      if (k != batch.token_masks->num_rows()) throw std::invalid_argument("fewer masked rows than token masks");
    } else {
      for (const SequenceInput* s : sampled)
        if (s->sampling.token_mask)
          throw std::invalid_argument("sequence " + std::to_string(s->seq_id) + ": token_mask without token masks");
    }
    std::vector<Sample> samples(rows);
#pragma omp parallel for schedule(dynamic, 1) if (rows > 1)
    for (int64_t r = 0; r < rows; ++r)
      samples[r] = sample_logits(logits.data() + r * config_.vocab_size, config_.vocab_size, sampled[r]->sampling,
                                 unseeded[r], histories[r] ? std::span<const int32_t>(histories[r]->outputs)
                                                           : std::span<const int32_t>(),
                                 masks[r]);
    std::vector<SampledToken> out;
    out.reserve(rows);
    for (int64_t r = 0; r < rows; ++r) {
      if (histories[r]) histories[r]->outputs.push_back(samples[r].token);
      last_sampled_[sampled[r]->seq_id] = samples[r].token;
      out.push_back(SampledToken{sampled[r]->seq_id, samples[r].token, samples[r].logprob, std::move(samples[r].top)});
    }
    return out;
  }

  std::vector<float> forward_logits(const SequenceInput& seq) override {
    omp_set_num_threads(num_threads_);
    ForwardBatch fb;
    append(seq, fb);
    for (int64_t t = 0; t < static_cast<int64_t>(fb.tokens.size()); ++t) fb.logit_rows.push_back(t);
    return model_.forward(fb, cache_);
  }

 private:
  // c is the rank's local config (its KV heads); a group agrees on the smallest block count. An
  // fp8 cache takes a quarter of float32's bytes per block, so the same memory holds four times
  // the blocks; its scales are the checkpoint's, per layer (`full` reads them by layer index).
  static KvCache make_cache(const BackendOptions& o, const ModelConfig& full, const ModelConfig& c,
                            const RankContext& rank) {
    if (o.block_size <= 0) throw std::invalid_argument("block_size must be positive");
    const bool fp8 = o.kv_cache_dtype == KvCacheDtype::kFp8;
    const int64_t per_block = KvCache::bytes_per_block(c.num_hidden_layers, o.block_size, c.num_key_value_heads,
                                                       c.head_dim, fp8 ? 1 : static_cast<int64_t>(sizeof(float)));
    int64_t blocks = o.num_gpu_blocks;
    if (blocks <= 0) {
      blocks = o.cpu_kv_cache_bytes / per_block;
      if (blocks <= 0)
        throw std::invalid_argument("cpu_kv_cache_bytes " + std::to_string(o.cpu_kv_cache_bytes) +
                                    " holds no KV block of " + std::to_string(per_block) + " bytes");
    }
    int64_t host_blocks = o.num_cpu_blocks > 0 ? o.num_cpu_blocks : o.swap_space_bytes / per_block;
    if (rank.group != nullptr) {
      blocks = rank.group->all_reduce_min(rank.rank, blocks);
      host_blocks = rank.group->all_reduce_min(rank.rank, host_blocks);
    }
    if (!fp8) {
      if (const std::string note = quant::unused_kv_scales(full.quantization, "float32", o.model_dir);
          rank.rank == 0 && !note.empty())
        std::fprintf(stderr, "%s\n", note.c_str());
      return KvCache(c.num_hidden_layers, blocks, host_blocks, o.block_size, c.num_key_value_heads, c.head_dim);
    }
    quant::KvScales scales =
        quant::read_kv_scales(WeightSet(o.model_dir), full.num_hidden_layers, o.model_dir, rank.rank == 0);
    return KvCache(c.num_hidden_layers, blocks, host_blocks, o.block_size, c.num_key_value_heads, c.head_dim, true,
                   std::move(scales.k), std::move(scales.v));
  }

  // Checked before the step so that sampling, which runs in parallel, cannot throw.
  void check_sampling(uint64_t seq_id, const SamplingConfig& c, const std::string& who) {
    if (!(c.temperature >= 0.0f) || std::isinf(c.temperature))
      throw std::invalid_argument(who + ": temperature " + std::to_string(c.temperature) + " is not >= 0");
    if (!(c.top_p > 0.0f && c.top_p <= 1.0f))
      throw std::invalid_argument(who + ": top_p " + std::to_string(c.top_p) + " is outside (0, 1]");
    if (c.top_logprobs < 0) throw std::invalid_argument(who + ": negative top_logprobs");
    const SampledHistory::Entry* known = history_.find(seq_id);
    if (c.rules && (known == nullptr || known->rules != c.rules)) {  // checked once per sequence
      try {
        c.rules->validate(config_.vocab_size);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(who + ": " + e.what());
      }
    }
  }

  // Adds one sequence's tokens to the flattened batch after checking it against the cache.
  void append(const SequenceInput& seq, ForwardBatch& fb) {
    const std::string who = "sequence " + std::to_string(seq.seq_id);
    std::vector<int32_t> tokens;
    if (seq.use_last_sampled) {
      auto it = last_sampled_.find(seq.seq_id);
      if (it == last_sampled_.end()) throw std::invalid_argument(who + ": use_last_sampled but nothing was sampled");
      tokens.push_back(it->second);
    } else {
      tokens = seq.token_ids;
      if (seq.num_tokens != 0 && seq.num_tokens != static_cast<int32_t>(tokens.size()))
        throw std::invalid_argument(who + ": num_tokens " + std::to_string(seq.num_tokens) + " but " +
                                    std::to_string(tokens.size()) + " token ids");
    }
    if (tokens.empty()) throw std::invalid_argument(who + ": no tokens");
    if (seq.sample) check_sampling(seq.seq_id, seq.sampling, who);
    if (seq.start_pos < 0) throw std::invalid_argument(who + ": negative start_pos");
    const int64_t end_pos = static_cast<int64_t>(seq.start_pos) + static_cast<int64_t>(tokens.size());
    if (end_pos > max_model_len_)
      throw std::invalid_argument(who + ": position " + std::to_string(end_pos - 1) + " exceeds max_model_len " +
                                  std::to_string(max_model_len_));
    const int64_t bs = cache_.block_size();
    if (static_cast<int64_t>(seq.block_table.size()) * bs < end_pos)
      throw std::invalid_argument(who + ": block table of " + std::to_string(seq.block_table.size()) +
                                  " blocks does not cover position " + std::to_string(end_pos - 1));
    for (int64_t b = 0; b < (end_pos + bs - 1) / bs; ++b)
      if (seq.block_table[b] < 0 || seq.block_table[b] >= cache_.num_blocks())
        throw std::invalid_argument(who + ": block " + std::to_string(seq.block_table[b]) + " outside the cache of " +
                                    std::to_string(cache_.num_blocks()) + " blocks");
    AttentionSeq a;
    a.token_begin = static_cast<int64_t>(fb.tokens.size());
    a.num_tokens = static_cast<int64_t>(tokens.size());
    a.start_pos = seq.start_pos;
    a.block_table = seq.block_table.data();
    a.block_table_len = static_cast<int64_t>(seq.block_table.size());
    fb.seqs.push_back(a);
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (tokens[i] < 0 || tokens[i] >= config_.vocab_size)
        throw std::invalid_argument(who + ": token id " + std::to_string(tokens[i]) + " outside the vocabulary of " +
                                    std::to_string(config_.vocab_size));
      const int64_t pos = seq.start_pos + static_cast<int64_t>(i);
      fb.tokens.push_back(tokens[i]);
      fb.positions.push_back(static_cast<int32_t>(pos));
      fb.slots.push_back(static_cast<int64_t>(seq.block_table[pos / bs]) * bs + pos % bs);
    }
  }

  ModelConfig config_;
  Model model_;
  KvCache cache_;
  std::mt19937_64 rng_;  // seeds for unseeded sampling
  int64_t max_model_len_ = 0;
  int num_threads_ = 1;
  std::unordered_map<uint64_t, int32_t> last_sampled_;
  SampledHistory history_;  // sequences sampling under rules
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(const BackendOptions& options, const RankContext& rank) {
  return std::make_unique<CpuBackend>(options, rank);
}

}  // namespace zinfer::gpu::cpu
