// The decode section of zinfer-cuda-bench: the decode step of B sequences at a context of C keys
// each, B = 1 … 64, C = 512 / 2,048 / 8,192, at Llama-3-8B's shapes (random bf16 weights) through
// Backend::step (sampling and the per-step host synchronisation included, as a server pays
// them), and the same with mixed contexts (C = mixed2048: 2,048 keys on average, spread evenly
// over 64 … 4,032), against the floor: the weight bytes plus the steps' keys' KV bytes at the copy rate
// measured in the same process. The contexts are not prefilled (their KV blocks hold whatever the
// cache held: the step reads the same bytes), so the table is quick; a combination whose KV does
// not fit the cache is reported as skipped.
// Lines: "DECODE b=<B> ctx=<C | mixedC> ms <t> floor_ms <f> x_floor <r>".
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "gpu/cuda/cuda_backend.h"
#include "tools/gpu/bench_common.h"

namespace zinfer::gpu::cuda::bench {

void bench_decode(const Ceilings& ceil, int layers_arg) {
  const ModelConfig c = llama3_config("8b", layers_arg);
  BackendOptions o;
  o.device = "cuda";
  o.max_num_seqs = 64;
  o.max_num_batched_tokens = 8192;
  o.max_model_len = 8192 + 64;
  o.gpu_memory_utilization = 0.92;
  auto backend = make_cuda_backend_random(o, c, 1234);
  const CacheGeometry geo = backend->cache_geometry();
  const DecodeBytes bytes = decode_bytes(c, 1);
  const double weight_bytes = bytes.weights, kv_per_token = bytes.kv_per_token;
  std::printf("decode: Llama-3-8B shapes, %d layers, KV cache %d blocks of %d\n", c.num_hidden_layers,
              geo.num_gpu_blocks, geo.block_size);
  std::mt19937 rng(7);
  std::uniform_int_distribution<int32_t> token(0, c.vocab_size - 1);
  uint64_t next_id = 1;
  const int steps = 24;
  // Contexts: every sequence at 512, 2,048 or 8,192 keys; or "mixed" (ctx < 0): -ctx keys on
  // average, spread evenly over [64, 2·(-ctx) − 64] in a shuffled order, as a server's decode list.
  for (int ctx : {512, 2048, 8192, -2048}) {
    for (int B : {1, 2, 4, 8, 16, 32, 64}) {
      std::vector<int> contexts(B, ctx);
      if (ctx < 0) {
        for (int i = 0; i < B; ++i) contexts[i] = B > 1 ? 64 + (-2 * ctx - 128) * i / (B - 1) : -ctx;
        std::shuffle(contexts.begin(), contexts.end(), std::mt19937(B));
      }
      const int most = *std::max_element(contexts.begin(), contexts.end());
      double keys = 0;
      for (int k : contexts) keys += k;
      const std::string label = ctx < 0 ? "mixed" + std::to_string(-ctx) : std::to_string(ctx);
      const int per_seq = (most + steps) / geo.block_size + 2;
      if (static_cast<int64_t>(per_seq) * B > geo.num_gpu_blocks) {
        std::printf("DECODE b=%d ctx=%s skipped: %d blocks do not fit the cache\n", B, label.c_str(), per_seq * B);
        continue;
      }
      std::vector<SequenceInput> seqs(B);
      for (int i = 0; i < B; ++i) {
        seqs[i].seq_id = next_id++;
        seqs[i].block_table.resize(per_seq);
        for (int j = 0; j < per_seq; ++j) seqs[i].block_table[j] = i * per_seq + j;
        seqs[i].sample = true;
        seqs[i].sampling.temperature = 0.f;
      }
      std::vector<double> times;
      for (int k = 0; k <= steps; ++k) {
        BatchInput b;
        for (int i = 0; i < B; ++i) {
          SequenceInput d = seqs[i];
          d.start_pos = contexts[i] + k;
          d.num_tokens = 1;
          if (k == 0) d.token_ids = {token(rng)};
          else d.use_last_sampled = true;
          b.seqs.push_back(std::move(d));
        }
        const auto t0 = std::chrono::steady_clock::now();
        backend->step(b);
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        if (k > 0) times.push_back(ms);
      }
      BatchInput done;
      for (const SequenceInput& s : seqs) done.finished.push_back(s.seq_id);
      backend->step(done);
      std::sort(times.begin(), times.end());
      const double ms = times[times.size() / 2];
      const double floor_ms = (weight_bytes + kv_per_token * (keys + B * steps / 2.0)) / (ceil.copy_gbps * 1e9) * 1e3;
      std::printf("DECODE b=%d ctx=%s ms %.3f floor_ms %.3f x_floor %.3f\n", B, label.c_str(), ms, floor_ms,
                  ms / floor_ms);
      std::fflush(stdout);
    }
  }
}

}  // namespace zinfer::gpu::cuda::bench
