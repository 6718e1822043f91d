#include "tools/bench/offline.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

#include <nlohmann/json.hpp>

#include "actors/pipeline/local_pipeline.h"
#include "gpu/model_config.h"
#include "runtime/logging.h"

namespace zinfer::bench {

namespace {

using Clock = std::chrono::steady_clock;

actors::EngineConfig make_config(const OfflineArgs& a) {
  actors::EngineConfig c = a.flags.load(a.config);
  c.tokenizer.workers = 1;  // prompts are token ids: nothing to tokenize in parallel
  runtime::set_log_level("warn");
  return c;
}

// Random prompts of exact lengths, as token ids (so the tokenizer does not change their length).
// Each round draws its own prompts: a round that repeated the last one's would find them in the
// prefix cache and time a cache hit instead of a prefill.
std::vector<protocol::GenerateRequest> random_requests(const OfflineArgs& a, int count, int vocab, int round = 0) {
  std::mt19937_64 rng(static_cast<uint64_t>(a.seed) + static_cast<uint64_t>(round) * 0x9E3779B97F4A7C15ull);
  std::uniform_int_distribution<int32_t> tok(10, std::max(11, vocab - 1));
  std::vector<protocol::GenerateRequest> out(static_cast<size_t>(count));
  for (auto& r : out) {
    r.prompt_ids.resize(static_cast<size_t>(a.input_len));
    for (auto& t : r.prompt_ids) t = tok(rng);
    r.sampling.max_tokens = a.output_len;
    r.sampling.ignore_eos = true;
    r.sampling.temperature = 0.0f;
  }
  return out;
}

double ms_since(Clock::time_point t0, Clock::time_point t1) {
  return std::chrono::duration<double, std::milli>(t1 - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace

void add_offline_options(CLI::App& cmd, OfflineArgs& a) {
  a.flags.add(cmd, "model.path", "--model")->required();
  a.flags.add(cmd, "model.device");
  a.flags.add(cmd, "model.tensor_parallel_size");
  a.flags.add(cmd, "model.quantization");
  a.flags.add(cmd, "cache.kv_cache_dtype");
  cmd.add_option("--config", a.config, "TOML config for the other settings");
  cmd.add_option("--input-len", a.input_len)->check(CLI::PositiveNumber);
  cmd.add_option("--output-len", a.output_len)->check(CLI::PositiveNumber);
  cmd.add_option("--seed", a.seed);
  a.flags.add(cmd, "scheduler.max_num_seqs");
  a.flags.add(cmd, "scheduler.max_num_batched_tokens");
  cmd.add_flag("--json", a.json, "print one JSON object");
}

void run_latency(const OfflineArgs& a) {
  const actors::EngineConfig config = make_config(a);
  const int vocab = gpu::load_model_config(config.backend.model_dir).vocab_size;
  actors::LocalPipeline pipeline(config);
  std::vector<double> prefill_ms, decode_ms, e2e_ms;
  for (int it = -1; it < a.num_iters; ++it) {  // iteration -1 warms up (GEMM algorithm choice, graphs)
    auto reqs = random_requests(a, a.batch_size, vocab, it + 1);
    std::vector<Clock::time_point> first(reqs.size()), last(reqs.size());
    std::vector<bool> seen(reqs.size(), false);
    auto t0 = Clock::now();
    pipeline.run(reqs, [&](size_t i, const gateway::EngineEvent& e) {
      auto now = Clock::now();
      if (std::holds_alternative<protocol::TextDelta>(e) && !std::get<protocol::TextDelta>(e).token_ids.empty()) {
        if (!seen[i]) first[i] = now;
        seen[i] = true;
        last[i] = now;
      }
    });
    if (it < 0) continue;
    auto first_all = *std::max_element(first.begin(), first.end());  // the batch's prefill is done
    auto last_all = *std::max_element(last.begin(), last.end());
    prefill_ms.push_back(ms_since(t0, first_all));
    e2e_ms.push_back(ms_since(t0, last_all));
    if (a.output_len > 1) decode_ms.push_back(ms_since(first_all, last_all) / (a.output_len - 1));
  }
  double p = median(prefill_ms), d = median(decode_ms), e = median(e2e_ms);
  if (a.json) {
    nlohmann::json j = {{"batch_size", a.batch_size}, {"input_len", a.input_len}, {"output_len", a.output_len},
                        {"tensor_parallel_size", config.backend.tensor_parallel_size},
                        {"prefill_ms", p}, {"decode_step_ms", d}, {"e2e_ms", e}, {"iterations", a.num_iters}};
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("latency through the actors: batch %d, input %d, output %d, device %s, tensor parallel %d, %d "
                "iterations (median)\n",
                a.batch_size, a.input_len, a.output_len, config.backend.device.c_str(),
                config.backend.tensor_parallel_size, a.num_iters);
    std::printf("  prefill (time to first token of the batch): %10.2f ms\n", p);
    std::printf("  decode step:                                %10.2f ms\n", d);
    std::printf("  end to end:                                 %10.2f ms\n", e);
  }
}

void run_throughput(const OfflineArgs& a) {
  const actors::EngineConfig config = make_config(a);
  const int vocab = gpu::load_model_config(config.backend.model_dir).vocab_size;
  actors::LocalPipeline pipeline(config);
  {  // warm-up: a short request (GEMM algorithm choice, CUDA graphs)
    OfflineArgs w = a;
    w.output_len = 4;
    pipeline.run(random_requests(w, 1, vocab, -1));
  }
  auto reqs = random_requests(a, a.num_prompts, vocab);
  auto t0 = Clock::now();
  auto results = pipeline.run(reqs);
  double s = std::chrono::duration<double>(Clock::now() - t0).count();
  int64_t in_tokens = 0, out_tokens = 0, failed = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    if (!results[i].error.empty()) {
      ++failed;
      continue;
    }
    in_tokens += static_cast<int64_t>(reqs[i].prompt_ids.size());
    for (auto& smp : results[i].samples) out_tokens += static_cast<int64_t>(smp.token_ids.size());
  }
  double rps = (a.num_prompts - failed) / s, tps = (in_tokens + out_tokens) / s, ops = out_tokens / s;
  if (a.json) {
    nlohmann::json j = {{"num_prompts", a.num_prompts}, {"input_len", a.input_len}, {"output_len", a.output_len},
                        {"tensor_parallel_size", config.backend.tensor_parallel_size},
                        {"elapsed_s", s}, {"requests_per_s", rps}, {"total_tokens_per_s", tps},
                        {"output_tokens_per_s", ops}, {"failed", failed}};
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("throughput through the actors: %d prompts x %d in / %d out, device %s, tensor parallel %d\n",
                a.num_prompts, a.input_len, a.output_len, config.backend.device.c_str(),
                config.backend.tensor_parallel_size);
    std::printf("  elapsed %.2f s, %.2f requests/s, %.1f total tokens/s, %.1f output tokens/s, %lld failed\n", s, rps,
                tps, ops, static_cast<long long>(failed));
  }
}

}  // namespace zinfer::bench
