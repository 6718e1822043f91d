// Whole-model figures at Llama-3-8B's (or -70B's) shapes with random bf16 weights, on one GPU or
// tensor-parallel over several (each figure's floor is then one GPU's share), through Backend::step (so
// sampling and the per-step host synchronisation are included):
//   decode latency at batch 1, contexts 128/512/1024, against (weight bytes + KV bytes) / copy rate;
//   the decode step of 64 sequences with every penalty, min_p and a logit bias on, against none;
//   prefill of one 4,096-token prompt against 2 * params * tokens / GEMM rate;
//   offline throughput: N prompts x 512 in / 128 out (temperature 1, no EOS), a simple continuous
//   batching loop over the backend (max 256 sequences, 8,192 tokens per step, chunked prefill).
#include <chrono>
#include <deque>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>

#include "gpu/cuda/cuda_backend.h"
#include "tools/gpu/bench_common.h"

namespace zinfer::gpu::cuda::bench {
ModelConfig llama3_config(const std::string& shape, int layers) {
  if (shape != "8b" && shape != "70b") throw std::invalid_argument("--shape is 8b or 70b, not " + shape);
  const bool big = shape == "70b";
  ModelConfig c;
  c.architecture = Architecture::kLlama;
  c.architecture_name = "LlamaForCausalLM";
  c.vocab_size = 128256;
  c.hidden_size = big ? 8192 : 4096;
  c.intermediate_size = big ? 28672 : 14336;
  c.num_hidden_layers = layers > 0 ? layers : big ? 80 : 32;
  c.num_attention_heads = big ? 64 : 32;
  c.num_key_value_heads = 8;
  c.head_dim = 128;
  c.max_position_embeddings = 131072;
  c.rms_norm_eps = 1e-5;
  c.rope_theta = 500000.0;
  c.rope_scaling.type = "llama3";
  c.rope_scaling.factor = 8.0;
  c.rope_scaling.low_freq_factor = 1.0;
  c.rope_scaling.high_freq_factor = 4.0;
  c.rope_scaling.original_max_position_embeddings = 8192;
  c.torch_dtype = "bfloat16";
  return c;
}

DecodeBytes decode_bytes(const ModelConfig& c, int tp) {
  const double H = c.hidden_size, I = c.intermediate_size, V = c.vocab_size, D = c.head_dim;
  const double per_layer =
      H * (c.num_attention_heads + 2.0 * c.num_key_value_heads) * D + H * c.num_attention_heads * D + 3 * H * I;
  DecodeBytes b;
  b.params = per_layer * c.num_hidden_layers + 2 * V * H;
  b.weights = (per_layer * c.num_hidden_layers + V * H) * 2 / tp;
  b.kv_per_token = 2.0 * c.num_hidden_layers * std::max(1, c.num_key_value_heads / tp) * D * 2;
  return b;
}

namespace {

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::vector<int32_t> random_tokens(int n, std::mt19937& rng, int vocab) {
  std::uniform_int_distribution<int32_t> d(0, vocab - 1);
  std::vector<int32_t> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

std::vector<int32_t> block_range(int first, int count) {
  std::vector<int32_t> b(count);
  for (int i = 0; i < count; ++i) b[i] = first + i;
  return b;
}

// Median decode step of 64 sequences at context 512 (temperature 1), each sampling under `rules`
// (null: none): the cost of the sampling rules' kernel and device-side token counts.
double decode_b64_ms(Backend& backend, int vocab, std::mt19937& rng, uint64_t& next_id,
                     const std::shared_ptr<const SamplingRules>& rules) {
  const int B = 64, ctx = 512, steps = 32, per_seq = (ctx + steps + 15) / 16 + 1;
  std::vector<SequenceInput> seqs(B);
  std::vector<uint64_t> ids;
  for (int i = 0; i < B; ++i) {
    seqs[i].seq_id = next_id++;
    ids.push_back(seqs[i].seq_id);
    seqs[i].block_table = block_range(i * per_seq, per_seq);
    seqs[i].sample = true;
    seqs[i].sampling.temperature = 1.0f;
    seqs[i].sampling.rules = rules;
  }
  for (int i0 = 0; i0 < B; i0 += 8) {  // prefill, 8 prompts (4,096 tokens) a step
    BatchInput b;
    for (int i = i0; i < i0 + 8; ++i) {
      SequenceInput s = seqs[i];
      s.token_ids = random_tokens(ctx, rng, vocab);
      s.num_tokens = ctx;
      b.seqs.push_back(std::move(s));
    }
    backend.step(b);
  }
  std::vector<double> times;
  for (int k = 0; k < steps; ++k) {
    BatchInput b;
    for (const SequenceInput& s : seqs) {
      SequenceInput d = s;
      d.use_last_sampled = true;
      d.num_tokens = 1;
      d.start_pos = ctx + k;
      d.sampling.sample_index = k + 1;
      b.seqs.push_back(std::move(d));
    }
    const double t0 = now_ms();
    backend.step(b);
    times.push_back(now_ms() - t0);
  }
  BatchInput done;
  done.finished = ids;
  backend.step(done);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

void bench_model(const Ceilings& ceil, const std::string& shape, int layers_arg, int prompts, int tp,
                 bool tensor_parallel_exchange) {
  const ModelConfig c = llama3_config(shape, layers_arg);
  const int layers = c.num_hidden_layers;
  BackendOptions o;
  o.device = "cuda";
  o.max_num_seqs = 256;
  o.max_num_batched_tokens = 8192;
  o.max_model_len = 8192;
  o.gpu_memory_utilization = 0.9;
  o.tensor_parallel_size = tp;
  o.tensor_parallel_exchange = tensor_parallel_exchange;
  auto backend = make_cuda_backend_random(o, c, 1234);
  const CacheGeometry geo = backend->cache_geometry();
  std::mt19937 rng(5);

  const DecodeBytes bytes = decode_bytes(c, tp);
  const double params = bytes.params, read_bytes = bytes.weights, kv_per_token = bytes.kv_per_token;
  std::printf("model: Llama-3-%s shapes, %d layers, %.2f B params, tensor parallel %d (decode all-reduce: %s), KV "
              "cache %d blocks\n",
              shape == "70b" ? "70B" : "8B", layers, params / 1e9, tp,
              tp == 1 ? "none" : tensor_parallel_exchange ? "residual exchange" : "NCCL", geo.num_gpu_blocks);

  uint64_t next_id = 1;
  for (int ctx : {128, 512, 1024}) {
    const uint64_t id = next_id++;
    const std::vector<int32_t> ids = random_tokens(ctx, rng, c.vocab_size);
    const int steps = 48;
    const std::vector<int32_t> blocks = block_range(0, (ctx + steps + 16) / 16 + 1);
    BatchInput b;
    SequenceInput s;
    s.seq_id = id;
    s.token_ids = ids;
    s.num_tokens = ctx;
    s.block_table = blocks;
    s.sample = true;
    s.sampling.temperature = 0.f;
    b.seqs = {s};
    backend->step(b);
    std::vector<double> times;
    for (int k = 0; k < steps; ++k) {
      SequenceInput d;
      d.seq_id = id;
      d.use_last_sampled = true;
      d.num_tokens = 1;
      d.start_pos = ctx + k;
      d.block_table = blocks;
      d.sample = true;
      d.sampling.temperature = 0.f;
      b.seqs = {d};
      const double t0 = now_ms();
      backend->step(b);
      times.push_back(now_ms() - t0);
    }
    b.seqs.clear();
    b.finished = {id};
    backend->step(b);
    std::sort(times.begin(), times.end());
    const double ms = times[times.size() / 2];
    const double floor_ms = (read_bytes + kv_per_token * (ctx + steps / 2)) / (ceil.copy_gbps * 1e9) * 1e3;
    report("decode_b1_ctx" + std::to_string(ctx) + "_ms_per_token", ms, "ms", floor_ms, ms / floor_ms);
  }

  {  // 64 sequences decoding with every penalty, min_p and a logit bias on, against none
    auto rules = std::make_shared<SamplingRules>();
    rules->repetition_penalty = 1.1f;
    rules->frequency_penalty = 0.3f;
    rules->presence_penalty = 0.3f;
    rules->min_p = 0.05f;
    rules->logit_bias = {{7, 2.0f}, {1000, -5.0f}};
    rules->prompt_ids = random_tokens(512, rng, c.vocab_size);
    const double plain = decode_b64_ms(*backend, c.vocab_size, rng, next_id, nullptr);
    const double with_rules = decode_b64_ms(*backend, c.vocab_size, rng, next_id, rules);
    report("decode_b64_ctx512_ms_per_step", plain, "ms", 0, 0);
    report("decode_b64_ctx512_all_penalties_ms_per_step", with_rules, "ms", plain, with_rules / plain);
  }

  {  // prefill of one 4096-token prompt
    const int T = 4096;
    const std::vector<int32_t> ids = random_tokens(T, rng, c.vocab_size);
    std::vector<double> times;
    for (int rep = 0; rep < 4; ++rep) {
      BatchInput b;
      SequenceInput s;
      s.seq_id = next_id++;
      s.token_ids = ids;
      s.num_tokens = T;
      s.block_table = block_range(0, T / 16);
      s.sample = true;
      s.sampling.temperature = 0.f;
      b.seqs = {s};
      const double t0 = now_ms();
      backend->step(b);
      if (rep > 0) times.push_back(now_ms() - t0);  // the first run picks GEMM algorithms
      b.seqs.clear();
      b.finished = {s.seq_id};
      backend->step(b);
    }
    std::sort(times.begin(), times.end());
    const double ms = times[times.size() / 2];
    const double floor_ms = 2.0 * params * T / tp / (ceil.gemm_tflops * 1e12) * 1e3;
    report("prefill_4096_ms", ms, "ms", floor_ms, ms / floor_ms);
  }

  if (prompts <= 0) return;
  {  // offline throughput
    const int in_len = 512, out_len = 128, blocks_per_seq = (in_len + out_len + 15) / 16;
    struct Seq {
      uint64_t id;
      std::vector<int32_t> prompt;
      std::vector<int32_t> blocks;
      int prefilled = 0;
      int generated = 0;
    };
    std::deque<Seq> waiting;
    for (int i = 0; i < prompts; ++i) waiting.push_back(Seq{next_id++, random_tokens(in_len, rng, c.vocab_size), {}, 0, 0});
    std::vector<int32_t> free_blocks;
    for (int i = geo.num_gpu_blocks - 1; i >= 0; --i) free_blocks.push_back(i);
    std::vector<Seq> running;
    std::vector<uint64_t> finished;
    int done = 0, steps = 0;
    long long tokens_in_steps = 0;
    const double t0 = now_ms();
    while (done < prompts) {
      BatchInput b;
      b.finished.swap(finished);
      int budget = o.max_num_batched_tokens;
      for (Seq& s : running) {
        if (s.prefilled < in_len) continue;
        SequenceInput d;
        d.seq_id = s.id;
        d.use_last_sampled = true;
        d.num_tokens = 1;
        d.start_pos = in_len + s.generated - 1;
        d.block_table = s.blocks;
        d.sample = true;
        d.sampling.sample_index = s.generated;
        b.seqs.push_back(d);
        --budget;
      }
      while (static_cast<int>(running.size()) < o.max_num_seqs && !waiting.empty() &&
             static_cast<int>(free_blocks.size()) >= blocks_per_seq) {
        Seq s = std::move(waiting.front());
        waiting.pop_front();
        for (int k = 0; k < blocks_per_seq; ++k) {
          s.blocks.push_back(free_blocks.back());
          free_blocks.pop_back();
        }
        running.push_back(std::move(s));
      }
      for (Seq& s : running) {
        if (s.prefilled >= in_len || budget <= 0) continue;
        const int n = std::min(in_len - s.prefilled, budget);
        SequenceInput p;
        p.seq_id = s.id;
        p.token_ids.assign(s.prompt.begin() + s.prefilled, s.prompt.begin() + s.prefilled + n);
        p.num_tokens = n;
        p.start_pos = s.prefilled;
        p.block_table = s.blocks;
        p.sample = s.prefilled + n == in_len;
        b.seqs.push_back(p);
        budget -= n;
        s.prefilled += n;
      }
      tokens_in_steps += o.max_num_batched_tokens - budget;
      const std::vector<SampledToken> out = backend->step(b);
      ++steps;
      for (const SampledToken& t : out) {
        for (size_t i = 0; i < running.size(); ++i) {
          if (running[i].id != t.seq_id) continue;
          if (++running[i].generated == out_len) {
            for (int32_t blk : running[i].blocks) free_blocks.push_back(blk);
            finished.push_back(running[i].id);
            running.erase(running.begin() + static_cast<long>(i));
            ++done;
          }
          break;
        }
      }
    }
    const double secs = (now_ms() - t0) / 1e3;
    const double total = double(prompts) * (in_len + out_len), output = double(prompts) * out_len;
    std::printf("throughput: %d prompts in %.2f s, %d steps, %.0f tokens per step\n", prompts, secs, steps,
                double(tokens_in_steps) / steps);
    report("throughput_total_tokens_per_s", total / secs, "tok/s", 25000, total / secs / 25000);
    report("throughput_output_tokens_per_s", output / secs, "tok/s", 0, 0);
    report("throughput_requests_per_s", prompts / secs, "req/s", 0, 0);
  }
}

}  // namespace zinfer::gpu::cuda::bench
