// Grammar masks in the CUDA sampler (gpu/token_masks.h; Invariant 37, docs/architecture.md):
// through the backend's path (pack_step, SamplingRulesState::pack and upload_masks, the rules
// kernel, the sampling kernel), at vocabulary sizes that end in a partial mask word. Greedy
// choices and logprobs equal the CPU sampler's with the same masks; the processed rows are -inf
// exactly where a bit is clear; seeded draws equal the draws from logits masked beforehand, and
// only allowed tokens are drawn.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>

#include "gpu/cpu/sampler.h"
#include "gpu/cuda/sampling.h"
#include "gpu/cuda/sampling_rules_state.h"
#include "gpu/cuda/step_inputs.h"
#include "gpu/token_masks.h"
#include "tests/cuda/cuda_test_util.h"

namespace zinfer::gpu::cuda::test {
namespace {

StepCapacity capacity(int vocab) {
  StepCapacity c;
  c.max_tokens = 64;
  c.max_seqs = 8;
  c.max_blocks_per_seq = 4;
  c.block_size = 16;
  c.num_gpu_blocks = 64;
  c.scratch_block = 63;
  c.vocab = vocab;
  return c;
}

SequenceInput row(uint64_t id, int sample_index, float temperature, bool masked,
                  std::shared_ptr<const SamplingRules> rules = nullptr) {
  SequenceInput s;
  s.seq_id = id;
  s.token_ids = {1};
  s.num_tokens = 1;
  s.start_pos = 3;
  s.block_table = {static_cast<int32_t>(id)};
  s.sample = true;
  s.sampling.temperature = temperature;
  s.sampling.seed = 17;
  s.sampling.sample_index = sample_index;
  s.sampling.top_logprobs = 2;
  s.sampling.rules = std::move(rules);
  s.sampling.token_mask = masked;
  return s;
}

struct Out {
  std::vector<int32_t> tokens;
  std::vector<float> logprobs;
  std::vector<float> processed;  // [rows, vocab] when some row was processed
};

// One sampling step of the backend's path; `masks` holds the masked rows' masks in row order.
Out sample(int vocab, const std::vector<SequenceInput>& seqs, const std::vector<std::vector<float>>& rows,
           const std::vector<uint32_t>& masks, size_t mask_words) {
  StepLayout layout{capacity(vocab)};
  LastTokenSlots slots{64};
  SamplingRulesState state{8, 8, vocab};
  std::vector<uint32_t> words(layout.total_words);
  const PackedStep st = pack_step(seqs, layout, true, 0, slots, 1, words.data());
  const PackedRules rules = state.pack(seqs, st, words.data(), nullptr);
  DeviceArray<uint32_t> meta(words);
  std::vector<float> flat;
  for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
  DeviceArray<float> logits(flat);
  const int n = static_cast<int>(rows.size());
  DeviceArray<int32_t> out_token(8), top_ids(8 * kMaxTopLogprobs), last(64);
  DeviceArray<float> out_lp(8), top_lps(8 * kMaxTopLogprobs);
  DeviceArray<float> scratch(sampling_scratch_bytes(8, vocab) / sizeof(float));
  const auto* m = reinterpret_cast<const int32_t*>(meta.get());
  SamplingBatch sb;
  sb.logits = logits.get();
  sb.temperature = reinterpret_cast<const float*>(m + layout.temperature);
  sb.top_p = reinterpret_cast<const float*>(m + layout.top_p);
  sb.top_k = m + layout.top_k;
  sb.seed = reinterpret_cast<const uint64_t*>(m + layout.seed);
  sb.sample_index = m + layout.sample_index;
  sb.num_top = m + layout.num_top;
  sb.num_rows = n;
  sb.vocab = vocab;
  sb.out_token = out_token.get();
  sb.out_logprob = out_lp.get();
  sb.out_top_ids = top_ids.get();
  sb.out_top_logprobs = top_lps.get();
  sb.dest_slot = m + layout.dest_slot;
  sb.last_sampled = last.get();
  sb.scratch = scratch.get();
  Out out;
  if (rules.any_processed) {
    SamplingRulesBatch rb;
    rb.logits = logits.get();
    rb.processed = state.processed();
    rb.processed_row = m + layout.processed_row;
    rb.repetition = reinterpret_cast<const float*>(m + layout.repetition);
    rb.frequency = reinterpret_cast<const float*>(m + layout.frequency);
    rb.presence = reinterpret_cast<const float*>(m + layout.presence);
    rb.count_row = m + layout.count_row;
    rb.counts = state.counts();
    rb.list_index = m + layout.rule_lists;
    rb.lists = state.lists();
    rb.num_rows = n;
    rb.vocab = vocab;
    EXPECT_EQ(static_cast<size_t>(rules.masked_rows) * mask_words, masks.size());
    if (rules.masked_rows > 0) {
      rb.masks = state.upload_masks(masks.data(), static_cast<size_t>(rules.masked_rows), mask_words, nullptr);
      rb.mask_row = m + layout.mask_row;
      rb.mask_words = static_cast<int32_t>(mask_words);
    }
    check_cuda(launch_sampling_rules(rb, nullptr), "sampling rules");
    sb.processed = rb.processed;
    sb.processed_row = rb.processed_row;
    check_cuda(cudaDeviceSynchronize(), "sync");
    out.processed.resize(static_cast<size_t>(n) * vocab);
    check_cuda(cudaMemcpy(out.processed.data(), state.processed(), out.processed.size() * 4, cudaMemcpyDeviceToHost),
               "download of processed logits");
  }
  check_cuda(launch_sampling(sb, nullptr), "sampling");
  out.tokens = out_token.download();
  out.tokens.resize(n);
  out.logprobs = out_lp.download();
  out.logprobs.resize(n);
  return out;
}

std::vector<uint32_t> random_mask(int vocab, std::mt19937& rng, double keep) {
  std::vector<uint32_t> m((vocab + 31) / 32, 0u);
  std::bernoulli_distribution d(keep);
  for (int id = 0; id < vocab; ++id)
    if (d(rng)) m[id / 32] |= 1u << (id % 32);
  m[0] |= 1u;  // never empty
  return m;
}

bool allowed(const std::vector<uint32_t>& m, int id) { return (m[id / 32] >> (id % 32)) & 1u; }

TEST(CudaSamplingMask, GreedyEqualsTheCpuSamplerWithTheSameMasks) {
  ZINFER_REQUIRE_CUDA();
  for (int vocab : {77, 4099, 128257}) {
    std::mt19937 rng(static_cast<uint32_t>(vocab));
    const size_t words = (static_cast<size_t>(vocab) + 31) / 32;
    const std::vector<float> a = random_floats(vocab, rng, 2.f), b = random_floats(vocab, rng, 2.f),
                             c = random_floats(vocab, rng, 2.f);
    const auto ma = random_mask(vocab, rng, 0.1), mc = random_mask(vocab, rng, 0.5);
    auto bias = std::make_shared<SamplingRules>();
    bias->logit_bias = {{vocab - 1, 30.f}};  // lifts the last id, unless the mask clears it
    const std::vector<SequenceInput> seqs = {row(1, 0, 0.f, true), row(2, 0, 0.f, false), row(3, 0, 0.f, true, bias)};
    std::vector<uint32_t> masks = ma;
    masks.insert(masks.end(), mc.begin(), mc.end());
    const Out got = sample(vocab, seqs, {a, b, c}, masks, words);
    const std::vector<const std::vector<float>*> logits = {&a, &b, &c};
    const std::vector<const uint32_t*> row_masks = {ma.data(), nullptr, mc.data()};
    for (int r = 0; r < 3; ++r) {
      const cpu::Sample want = cpu::sample_logits(logits[r]->data(), vocab, seqs[r].sampling, 0, {}, row_masks[r]);
      EXPECT_EQ(got.tokens[r], want.token) << "vocab " << vocab << " row " << r;
      EXPECT_NEAR(got.logprobs[r], want.logprob, 1e-4) << "vocab " << vocab << " row " << r;
    }
    ASSERT_EQ(got.processed.size(), 3u * vocab);
    for (int id = 0; id < vocab; ++id) {
      EXPECT_EQ(std::isinf(got.processed[id]), !allowed(ma, id)) << id;
      EXPECT_EQ(std::isinf(got.processed[2 * static_cast<size_t>(vocab) + id]), !allowed(mc, id)) << id;
    }
  }
}

TEST(CudaSamplingMask, DrawsEqualTheDrawsFromLogitsMaskedBeforehand) {
  ZINFER_REQUIRE_CUDA();
  for (int vocab : {77, 4099, 128257}) {
    std::mt19937 rng(static_cast<uint32_t>(vocab) + 1);
    const size_t words = (static_cast<size_t>(vocab) + 31) / 32;
    const std::vector<float> a = random_floats(vocab, rng, 2.f);
    const auto ma = random_mask(vocab, rng, 0.2);
    std::vector<float> pre = a;
    apply_token_mask(pre.data(), vocab, ma.data());
    for (int i = 0; i < 40; ++i) {
      const Out got = sample(vocab, {row(1, i, 0.8f, true)}, {a}, ma, words);
      const Out want = sample(vocab, {row(1, i, 0.8f, false)}, {pre}, {}, words);
      EXPECT_TRUE(allowed(ma, got.tokens[0])) << got.tokens[0];
      EXPECT_EQ(got.tokens[0], want.tokens[0]) << "vocab " << vocab << " draw " << i;
    }
  }
}

}  // namespace
}  // namespace zinfer::gpu::cuda::test
