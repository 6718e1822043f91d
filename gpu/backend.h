// The executor's view of a device: one step of the flattened batch (prefill chunks and decodes
// together) in, one sampled token per sampling sequence out. Implemented by the CPU backend
// (gpu/cpu/, the reference) and the CUDA backend (gpu/cuda/, the product). gpu/ knows nothing of
// ZeroMQ or the protocol: actors/executor translates protocol::StepPlan into a BatchInput.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gpu/model_config.h"
#include "gpu/sampling_rules.h"
#include "gpu/token_masks.h"

namespace zinfer::gpu {

struct SamplingConfig {
  float temperature = 1.0f;  // 0 = greedy (argmax)
  float top_p = 1.0f;
  int32_t top_k = -1;        // -1 = off
  int64_t seed = -1;         // -1 = unseeded; else token k of the sequence draws from (seed, k)
  int32_t sample_index = 0;  // how many tokens the sequence sampled before this one
  int32_t top_logprobs = 0;  // how many alternatives to report (0 = none)
  // Penalties, min_p, logit_bias, bad words, allowed tokens, min_tokens (gpu/sampling_rules.h);
  // null: none. The same object every step of a sequence: the backend keeps the sequence's
  // sampled tokens (and on CUDA their counts, on the device) from the first step that carries it
  // until the sequence is listed in BatchInput::finished.
  std::shared_ptr<const SamplingRules> rules;
  // The row samples only the tokens its grammar mask allows (BatchInput::token_masks): masked
  // tokens are -inf before every other rule, greedy included; logprobs stay the raw logits'.
  bool token_mask = false;
};

// One sequence's share of a step. token_ids occupy positions [start_pos, start_pos + num_tokens).
// With use_last_sampled, token_ids is empty, num_tokens is 1 and the backend feeds the token it
// sampled for seq_id in its previous step (decode inputs never leave the device).
struct SequenceInput {
  uint64_t seq_id = 0;
  std::vector<int32_t> token_ids;
  bool use_last_sampled = false;
  int32_t num_tokens = 0;
  int32_t start_pos = 0;
  std::vector<int32_t> block_table;  // physical KV block of each logical block
  bool sample = false;               // sample after the last token of this chunk
  SamplingConfig sampling;
};

struct BatchInput {
  std::vector<SequenceInput> seqs;
  std::vector<std::pair<int32_t, int32_t>> swap_out;  // (device block, host block)
  std::vector<std::pair<int32_t, int32_t>> swap_in;   // (host block, device block)
  std::vector<std::pair<int32_t, int32_t>> copy;      // (device src, device dst): copy-on-write
  std::vector<uint64_t> finished;                     // drop per-sequence state (last sampled)
  // The masks of the rows whose sampling.token_mask is set (null when none is): read after the
  // forward pass is launched, before sampling (gpu/token_masks.h). Its row_words cover the
  // model's vocab_size.
  TokenMasks* token_masks = nullptr;
};

struct SampledToken {
  uint64_t seq_id = 0;
  int32_t token = -1;
  float logprob = 0.0f;                          // log-softmax of the raw logits at `token`
  std::vector<std::pair<int32_t, float>> top;    // top_logprobs alternatives, best first
};

// What the backend loads and how it sizes its KV cache. The members a config file sets ([model],
// most of [cache]) are described in gpu/backend_settings.h; their defaults below are the only ones
// (serve, generate and the benchmarks start from them). max_num_seqs and max_num_batched_tokens
// are the scheduler's limits, given to the backend by whoever starts both (they size the decode
// graphs and workspaces); num_threads and cuda_graphs are for tests and tools.
// [cache] kv_cache_dtype: what the KV cache stores. kAuto: the compute type (float32 on the CPU
// backend, bf16/fp16 on CUDA); kFp8: e4m3fn codes with a float scale per layer for K and one for V,
// stored = e4m3(x / scale), read = stored · scale (vLLM's --kv-cache-dtype fp8, gpu/quant/kv_scales.h).
enum class KvCacheDtype { kAuto, kFp8 };

struct BackendOptions {
  std::string model_dir = "models/default";  // [model] path
  std::string device = "cpu";           // [model] "cpu", "cuda" or "synthetic" (no model: tokens at once)
  int32_t block_size = 16;              // [cache]
  int32_t num_gpu_blocks = 0;           // [cache] 0 = size from memory (cuda) or from cpu_kv_cache_bytes (cpu)
  int32_t num_cpu_blocks = 0;           // [cache] host (swap) pool; 0 = as many as swap_space_bytes holds
  int64_t swap_space_bytes = 1ll << 30; // [cache] swap_space_mb: host memory for swapped-out blocks
  double gpu_memory_utilization = 0.9;  // [cache]
  int32_t max_num_seqs = 256;           // largest decode batch (CUDA graph buckets): the scheduler's
  int32_t max_num_batched_tokens = 2048;// largest step (activation workspace): the scheduler's
  int32_t max_model_len = 0;            // [model] 0 = the config's max_position_embeddings
  int64_t cpu_kv_cache_bytes = 256ll << 20;  // [cache] cpu_kv_cache_mb: CPU device pool when num_gpu_blocks is 0
  int32_t num_threads = 0;              // CPU backend: 0 = all cores
  bool cuda_graphs = true;
  std::string dtype = "auto";           // [model] compute dtype: auto|float32|bfloat16|float16
  // [model] CUDA backend: where the cuBLASLt choices of the start-up tuning are kept between
  // runs: "auto" ($XDG_CACHE_HOME/zinfer, else ~/.cache/zinfer), a folder, or "off".
  std::string tuning_cache = "auto";
  // [model] tensor parallelism: the model split over this many ranks (CPU: threads; CUDA: one
  // GPU each, devices 0..N-1), gpu/tensor_parallel_backend.h.
  int32_t tensor_parallel_size = 1;
  // CUDA, tensor_parallel_size > 1: decode steps all-reduce the residual through the residual
  // exchange fused into the GEMVs (gpu/cuda/residual_exchange.h) rather than NCCL's all-reduce
  // kernels. Not a setting: tests and benchmarks turn it off to compare the two.
  bool tensor_parallel_exchange = true;
  // [model] auto | fp8 | none: the checkpoint's quantization_config, online FP8 of a dense
  // checkpoint, or dense only (gpu/quant/fp8_online.h).
  std::string quantization = "auto";
  KvCacheDtype kv_cache_dtype = KvCacheDtype::kAuto;  // [cache]
};

// Thrown by a backend that can run no further step (a tensor-parallel rank failed and its group
// was stopped): the executor ends rather than answer every later step with the same error.
class BackendFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CacheGeometry {
  int32_t block_size = 16;
  int32_t num_gpu_blocks = 0;
  int32_t num_cpu_blocks = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const ModelConfig& config() const = 0;
  virtual CacheGeometry cache_geometry() const = 0;
  // Runs copies, then one forward pass over the batch, then sampling. Throws on failure.
  virtual std::vector<SampledToken> step(const BatchInput& batch) = 0;
  // For tests and parity tools: the full-vocabulary logits (float32) of every position of one
  // sequence's chunk, [num_tokens, vocab]. Writes the chunk's K/V into the cache like step().
  virtual std::vector<float> forward_logits(const SequenceInput& seq) = 0;
  virtual std::string name() const = 0;
};

// Loads the model folder onto the chosen device; throws std::runtime_error with a clear message
// (unknown device, CUDA not built in, bad checkpoint).
std::unique_ptr<Backend> make_backend(const BackendOptions& options);

}  // namespace zinfer::gpu
