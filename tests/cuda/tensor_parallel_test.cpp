// Tensor parallelism on the CUDA backend (gpu/cuda/nccl_group.h): TP = 2 (and 4 where the machine
// has the GPUs) against TP = 1 on the model fixtures, through forward_logits (eager, the gathered
// vocabulary) and through step() with decode graphs (NCCL captured in them): greedy tokens equal
// unless TP = 1's top-2 gap was a near tie, logprobs within the bf16 bar of the CPU parity test.
// Skips without two CUDA devices.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "gpu/backend.h"
#include "gpu/cuda/attention.h"
#include "tests/cuda/cuda_test_util.h"

namespace zinfer::gpu::cuda::test {
namespace {

namespace fs = std::filesystem;

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
  return n;
}

BackendOptions options_for(const std::string& name, int tp, bool exchange = true) {
  BackendOptions o;
  o.model_dir = (fs::path(ZINFER_SOURCE_DIR) / "tests/data/models" / name).string();
  o.device = "cuda";
  o.num_gpu_blocks = 32;
  o.max_num_seqs = 8;
  o.max_num_batched_tokens = 256;
  o.max_model_len = 256;
  o.swap_space_bytes = 0;
  o.tensor_parallel_size = tp;
  o.tensor_parallel_exchange = exchange;
  o.tuning_cache = "off";
  return o;
}

struct TpRun {
  std::vector<float> logits;  // forward_logits of the prompt
  std::vector<int32_t> tokens;
  std::vector<float> logprobs;
};

TpRun run_model(const std::string& name, int tp, bool exchange = true) {
  auto backend = make_backend(options_for(name, tp, exchange));
  const int V = backend->config().vocab_size;
  std::vector<int32_t> prompt(37);
  for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = static_cast<int32_t>((i * 131 + 7) % V);
  TpRun r;
  SequenceInput s;
  s.seq_id = 1;
  s.token_ids = prompt;
  s.num_tokens = static_cast<int32_t>(prompt.size());
  for (int b = 0; b < 8; ++b) s.block_table.push_back(31 - b);
  r.logits = backend->forward_logits(s);
  // Then a second sequence through step(): prefill, and decode steps that run the graphs.
  s.seq_id = 2;
  s.block_table.clear();
  for (int b = 0; b < 8; ++b) s.block_table.push_back(b);
  s.sample = true;
  s.sampling.temperature = 0.0f;
  for (int i = 0; i < 16; ++i) {
    BatchInput batch;
    batch.seqs.push_back(s);
    const SampledToken t = backend->step(batch).at(0);
    r.tokens.push_back(t.token);
    r.logprobs.push_back(t.logprob);
    s.start_pos += s.num_tokens;
    s.token_ids.clear();
    s.use_last_sampled = true;
    s.num_tokens = 1;
  }
  return r;
}

class CudaTensorParallel : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(CudaTensorParallel, MatchesOneGpu) {
  ZINFER_REQUIRE_CUDA();
  const auto& [name, tp] = GetParam();
  if (device_count() < tp) GTEST_SKIP() << "needs " << tp << " CUDA devices, found " << device_count();
  const TpRun one = run_model(name, 1), group = run_model(name, tp);
  ASSERT_EQ(one.logits.size(), group.logits.size());
  const size_t V = load_model_config(options_for(name, 1).model_dir).vocab_size;
  for (size_t t = 0; t < one.logits.size() / V; ++t) {
    double ab = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < V; ++i) {
      const double a = one.logits[t * V + i], b = group.logits[t * V + i];
      ab += a * b;
      aa += a * a;
      bb += b * b;
    }
    EXPECT_GT(ab / std::sqrt(aa * bb), 0.9999) << "position " << t;
  }
  for (size_t i = 0; i < one.tokens.size(); ++i) {
    if (one.tokens[i] != group.tokens[i]) {
      // Only a near tie may flip (bf16 sums in another order); then the continuations differ.
      EXPECT_NEAR(one.logprobs[i], group.logprobs[i], 2e-2) << "step " << i << " flipped far from a tie";
      break;
    }
    EXPECT_NEAR(one.logprobs[i], group.logprobs[i], 2e-2) << "step " << i;
  }
}

// The decode graphs' all-reduce through the residual exchange (residual_exchange.h) against
// NCCL's: at TP 2 both compute (residual + P_0) + P_1, so what differs is only what differs
// between two backends (each tunes its own cuBLASLt algorithms at start-up: the last bits of the
// prefill); at TP 4 NCCL may also sum in another order.
TEST_P(CudaTensorParallel, ResidualExchangeMatchesNccl) {
  ZINFER_REQUIRE_CUDA();
  const auto& [name, tp] = GetParam();
  if (device_count() < tp) GTEST_SKIP() << "needs " << tp << " CUDA devices, found " << device_count();
  const TpRun nccl = run_model(name, tp, false), exchange = run_model(name, tp, true);
  for (size_t i = 0; i < nccl.tokens.size(); ++i) {
    if (nccl.tokens[i] != exchange.tokens[i]) {
      EXPECT_NEAR(nccl.logprobs[i], exchange.logprobs[i], 2e-4) << "step " << i << " flipped far from a tie";
      break;
    }
    EXPECT_NEAR(nccl.logprobs[i], exchange.logprobs[i], 2e-4) << "step " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CudaTensorParallel,
                         ::testing::Combine(::testing::Values("llama", "llama_bias", "mistral", "phi3", "qwen2", "qwen3"),
                                            ::testing::Values(2, 4)),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_tp" + std::to_string(std::get<1>(info.param));
                         });

TEST(CudaTensorParallelSetup, MoreRanksThanGpusIsRefusedByName) {
  ZINFER_REQUIRE_CUDA();
  BackendOptions o = options_for("llama", device_count() + 1);
  try {
    make_backend(o);
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("CUDA devices"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace zinfer::gpu::cuda::test
