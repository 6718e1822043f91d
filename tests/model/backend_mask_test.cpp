// Grammar masks through a whole backend step (Invariant 37, docs/architecture.md): the CPU
// backend asks for the step's masks once, after its forward pass, and a masked row draws only
// allowed tokens (greedy: the best allowed one) with the raw logits' logprob; a tensor-parallel
// group fills the masks once and every rank samples the same token from them.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <filesystem>

#include "gpu/backend.h"

namespace zinfer::gpu {
namespace {

namespace fs = std::filesystem;
const fs::path kQwen3 = fs::path(ZINFER_SOURCE_DIR) / "tests/data/models/qwen3";

SequenceInput prompt_row(uint64_t id, bool masked) {
  SequenceInput s;
  s.seq_id = id;
  s.token_ids = {1, 2, 3, 4};
  s.num_tokens = 4;
  s.block_table = {static_cast<int32_t>(2 * id), static_cast<int32_t>(2 * id + 1)};
  s.sample = true;
  s.sampling.temperature = 0.f;
  s.sampling.token_mask = masked;
  return s;
}

bool allowed(int32_t id) { return id % 5 == 3; }

TEST(BackendMask, AMaskedRowTakesTheBestAllowedTokenOnOneRankAndOnTwo) {
  BackendOptions options;
  options.model_dir = kQwen3.string();
  options.num_gpu_blocks = 24;
  options.num_threads = 2;
  auto reference = make_backend(options);
  const int32_t V = static_cast<int32_t>(reference->config().vocab_size);
  SequenceInput all = prompt_row(1, false);
  all.sample = false;
  const std::vector<float> logits = reference->forward_logits(all);
  const float* last = logits.data() + static_cast<size_t>(3) * V;
  int32_t best = -1, raw_best = 0;
  double mx = last[0], z = 0;
  for (int32_t id = 0; id < V; ++id) {
    if (allowed(id) && (best < 0 || last[id] > last[best])) best = id;
    if (last[id] > last[raw_best]) raw_best = id;
    mx = std::max<double>(mx, last[id]);
  }
  for (int32_t id = 0; id < V; ++id) z += std::exp(last[id] - mx);
  ASSERT_FALSE(allowed(raw_best)) << "pick another mask: the raw argmax is allowed";
  const size_t words = (static_cast<size_t>(V) + 31) / 32;
  for (int32_t ranks : {1, 2}) {
    options.tensor_parallel_size = ranks;
    auto backend = make_backend(options);
    std::atomic<int> fills{0};
    TokenMasks masks;
    masks.reset(1, words, [&](uint32_t* w, size_t rows, size_t row_words) {
      ++fills;
      EXPECT_EQ(rows, 1u);
      for (size_t i = 0; i < row_words; ++i) w[i] = 0;
      for (int32_t id = 0; id < V; ++id)
        if (allowed(id)) w[id / 32] |= 1u << (id % 32);
    });
    BatchInput batch;
    batch.seqs = {prompt_row(1, true), prompt_row(2, false)};
    batch.token_masks = &masks;
    const std::vector<SampledToken> out = backend->step(batch);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].token, best) << ranks << " ranks";
    EXPECT_NEAR(out[0].logprob, last[best] - mx - std::log(z), 1e-4) << "the raw logits' logprob";
    EXPECT_EQ(out[1].token, raw_best) << "the unmasked row";
    EXPECT_EQ(fills.load(), 1) << ranks << " ranks";
  }
}

TEST(BackendMask, AMaskedRowWithoutMasksIsAnError) {
  BackendOptions options;
  options.model_dir = kQwen3.string();
  options.num_gpu_blocks = 24;
  options.num_threads = 2;
  auto backend = make_backend(options);
  BatchInput batch;
  batch.seqs = {prompt_row(1, true)};
  EXPECT_THROW(backend->step(batch), std::invalid_argument);
}

}  // namespace
}  // namespace zinfer::gpu
