// The decoder-only transformer of the Llama family on the CPU ops layer: Llama/Mistral, Qwen2
// (q/k/v bias, often tied embeddings) and Qwen3 (per-head q/k RMSNorm, explicit head_dim) differ
// only in flags of ModelConfig, so one definition serves all four. Arithmetic is float32; weights
// are float32 (bf16 checkpoints' matrices stay bf16, widened exactly: gpu/cpu/matrix.h); q/k/v and
// gate/up are fused into one matrix each so a layer runs four GEMMs.
#pragma once

#include <cstdint>
#include <vector>

#include "gpu/cpu/kv_cache.h"
#include "gpu/cpu/matrix.h"
#include "gpu/model_config.h"
#include "gpu/safetensors.h"

namespace zinfer::gpu::cpu {

// The flattened batch of one forward pass: T tokens, grouped by sequence.
struct ForwardBatch {
  std::vector<int32_t> tokens;     // [T]
  std::vector<int32_t> positions;  // [T]
  std::vector<int64_t> slots;      // [T] cache slot (block * block_size + offset) of each token
  std::vector<AttentionSeq> seqs;  // block tables point into storage owned by the caller
  std::vector<int64_t> logit_rows; // tokens whose next-token logits are wanted
};

class Model {
 public:
  // Throws SafetensorsError for a missing or misshapen tensor, naming it.
  Model(const ModelConfig& config, const WeightSet& weights);

  const ModelConfig& config() const { return config_; }

  // Runs the batch through all layers, writing each token's K/V into `cache`, and returns the
  // logits of batch.logit_rows: [logit_rows.size(), vocab].
  std::vector<float> forward(const ForwardBatch& batch, KvCache& cache);

 private:
  struct Layer {
    std::vector<float> input_norm;     // [H]
    Matrix qkv;                        // [(nH + 2 nKV) D, H]: q, k, v projections stacked
    std::vector<float> qkv_bias;       // [(nH + 2 nKV) D] or empty
    std::vector<float> q_norm, k_norm; // [D] each (Qwen3) or empty
    Matrix o;                          // [H, nH D]
    std::vector<float> o_bias;         // [H] or empty
    std::vector<float> post_norm;      // [H]
    Matrix gate_up;                    // [2 I, H]: gate then up
    Matrix down;                       // [H, I]
  };

  ModelConfig config_;
  Matrix embed_;                // [V, H]
  Matrix lm_head_;              // [V, H]; empty (0 rows) when tied to embed_
  std::vector<float> norm_;     // [H]
  std::vector<Layer> layers_;
  std::vector<float> inv_freq_; // [D / 2]
};

}  // namespace zinfer::gpu::cpu
