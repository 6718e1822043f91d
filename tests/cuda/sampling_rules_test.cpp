// The CUDA sampler's rules (penalties from device-side token counts, min_p, logit_bias,
// min_tokens, bad words, allowed tokens) against the float64 reference of vLLM's definitions
// (tests/model/logits_reference.h), the one the CPU sampler is tested against: the processed
// logits, greedy choices over several steps whose counts stay on the device, and the
// distribution of draws.
#include <gtest/gtest.h>

#include <cstring>
#include <map>

#include "gpu/cuda/sampling.h"
#include "gpu/cuda/sampling_rules_state.h"
#include "gpu/cuda/step_inputs.h"
#include "tests/cuda/cuda_test_util.h"
#include "tests/model/logits_reference.h"

namespace zinfer::gpu::cuda::test {
namespace {

constexpr int kVocab = 5003;  // several slices of the statistics kernel, odd

StepCapacity capacity() {
  StepCapacity c;
  c.max_tokens = 64;
  c.max_seqs = 8;
  c.max_blocks_per_seq = 4;
  c.block_size = 16;
  c.num_gpu_blocks = 64;
  c.scratch_block = 63;
  c.vocab = kVocab;
  return c;
}

SequenceInput decode_row(uint64_t id, int sample_index, std::shared_ptr<const SamplingRules> rules, float temperature,
                         float top_p = 1.f, int top_k = -1, int64_t seed = 7) {
  SequenceInput s;
  s.seq_id = id;
  s.token_ids = {1};
  s.num_tokens = 1;
  s.start_pos = 3;
  s.block_table = {static_cast<int32_t>(id)};
  s.sample = true;
  s.sampling.temperature = temperature;
  s.sampling.top_p = top_p;
  s.sampling.top_k = top_k;
  s.sampling.seed = seed;
  s.sampling.sample_index = sample_index;
  s.sampling.rules = std::move(rules);
  return s;
}

// One step of the backend's sampling path: pack_step + SamplingRulesState::pack, the upload,
// launch_sampling_rules and launch_sampling over the given logits rows (one per sequence).
struct Sampler {
  StepLayout layout{capacity()};
  LastTokenSlots slots{64};
  SamplingRulesState state{8, 8, kVocab};
  std::vector<uint32_t> words = std::vector<uint32_t>(layout.total_words);
  DeviceArray<uint32_t> meta{layout.total_words};
  DeviceArray<int32_t> out_token{8}, top_ids{8 * kMaxTopLogprobs}, last{64};
  DeviceArray<float> out_lp{8}, top_lps{8 * kMaxTopLogprobs};
  DeviceArray<float> scratch{sampling_scratch_bytes(8, kVocab) / sizeof(float)};
  std::vector<float> processed_rows;  // the last step's processed logits (rows with rules)

  std::vector<int32_t> step(const std::vector<SequenceInput>& seqs, const std::vector<std::vector<float>>& rows) {
    const PackedStep st = pack_step(seqs, layout, true, 0, slots, 1, words.data());
    const PackedRules rules = state.pack(seqs, st, words.data(), nullptr);
    meta.upload(words);
    std::vector<float> flat;
    for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
    DeviceArray<float> logits(flat);
    const auto* m = reinterpret_cast<const int32_t*>(meta.get());
    const int n = static_cast<int>(rows.size());
    SamplingBatch sb;
    sb.logits = logits.get();
    sb.temperature = reinterpret_cast<const float*>(m + layout.temperature);
    sb.top_p = reinterpret_cast<const float*>(m + layout.top_p);
    sb.top_k = m + layout.top_k;
    sb.seed = reinterpret_cast<const uint64_t*>(m + layout.seed);
    sb.sample_index = m + layout.sample_index;
    sb.num_top = m + layout.num_top;
    sb.num_rows = n;
    sb.vocab = kVocab;
    sb.out_token = out_token.get();
    sb.out_logprob = out_lp.get();
    sb.out_top_ids = top_ids.get();
    sb.out_top_logprobs = top_lps.get();
    sb.dest_slot = m + layout.dest_slot;
    sb.last_sampled = last.get();
    sb.scratch = scratch.get();
    if (rules.any_min_p) sb.min_p = reinterpret_cast<const float*>(m + layout.min_p);
    if (rules.any_counts) {
      sb.count_row = m + layout.count_row;
      sb.counts = state.counts();
    }
    processed_rows.clear();
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
      rb.vocab = kVocab;
      check_cuda(launch_sampling_rules(rb, nullptr), "sampling rules");
      sb.processed = rb.processed;
      sb.processed_row = rb.processed_row;
      processed_rows.resize(static_cast<size_t>(n) * kVocab);
      check_cuda(cudaDeviceSynchronize(), "sync");
      check_cuda(cudaMemcpy(processed_rows.data(), state.processed(), processed_rows.size() * 4, cudaMemcpyDeviceToHost),
                 "download of processed logits");
    }
    check_cuda(launch_sampling(sb, nullptr), "sampling");
    std::vector<int32_t> tokens = out_token.download();
    tokens.resize(n);
    state.record(tokens.data(), tokens.size());
    return tokens;
  }
};

std::vector<float> row_of(uint32_t seed) {
  std::mt19937 rng(seed);
  return random_floats(kVocab, rng, 2.f);
}

// Rules in the ranges the reference exercises, on tokens of this vocabulary; the prompt holds
// tokens with large logits so that the repetition penalty changes the choice.
SamplingRules rules_for(const std::vector<float>& logits) {
  SamplingRules r = reference::every_rule(kVocab);
  std::vector<int> order(kVocab);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return logits[a] > logits[b]; });
  r.prompt_ids.push_back(order[0]);
  r.prompt_ids.push_back(order[2]);
  r.output_ids.push_back(order[1]);
  r.output_ids.push_back(20);  // bans 21 next
  return r;
}

void expect_same_logits(const float* got, const std::vector<double>& want) {
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isinf(want[i])) {
      EXPECT_TRUE(std::isinf(got[i]) && got[i] < 0) << "token " << i;
    } else {
      EXPECT_NEAR(got[i], want[i], 1e-4 * (1 + std::abs(want[i]))) << "token " << i;
    }
  }
}

TEST(CudaSamplingRules, ProcessedLogitsAndGreedyChoicesFollowTheReferenceOverSteps) {
  ZINFER_REQUIRE_CUDA();
  Sampler s;
  const std::vector<float> a = row_of(1), b = row_of(2), c = row_of(3);
  auto ra = std::make_shared<const SamplingRules>(rules_for(a));
  SamplingRules only_allowed;
  only_allowed.allowed_token_ids = {4, 77, 5000};
  only_allowed.logit_bias = {{77, -3.0f}};
  auto rb = std::make_shared<const SamplingRules>(only_allowed);
  std::vector<int32_t> outputs_a = ra->output_ids, outputs_b;
  // Six greedy steps: row a's penalties read counts the sampling kernel keeps on the device,
  // row c has no rules.
  for (int step = 0; step < 6; ++step) {
    const int ia = static_cast<int>(outputs_a.size());
    const auto tokens = s.step({decode_row(1, ia, ra, 0.f), decode_row(2, step, rb, 0.f), decode_row(3, step, nullptr, 0.f)},
                               {a, b, c});
    const auto want_a = reference::processed_logits(a, *ra, outputs_a, ia);
    const auto want_b = reference::processed_logits(b, *rb, outputs_b, step);
    ASSERT_EQ(s.processed_rows.size(), 3u * kVocab);
    expect_same_logits(s.processed_rows.data(), want_a);
    expect_same_logits(s.processed_rows.data() + kVocab, want_b);
    EXPECT_EQ(tokens[0], std::max_element(want_a.begin(), want_a.end()) - want_a.begin()) << "step " << step;
    EXPECT_EQ(tokens[1], std::max_element(want_b.begin(), want_b.end()) - want_b.begin()) << "step " << step;
    EXPECT_EQ(tokens[2], std::max_element(c.begin(), c.end()) - c.begin());
    outputs_a.push_back(tokens[0]);
    outputs_b.push_back(tokens[1]);
  }
  EXPECT_GE(s.state.count_row_of(1), 0);
  EXPECT_EQ(s.state.count_row_of(2), -1);  // no penalties: no counts
  s.state.finish(1);
  EXPECT_EQ(s.state.count_row_of(1), -1);
}

TEST(CudaSamplingRules, MinTokensMasksStopTokensUntilEnoughAreGenerated) {
  ZINFER_REQUIRE_CUDA();
  Sampler s;
  std::vector<float> l = row_of(5);
  l[42] = 50.f;  // the stop token dominates
  SamplingRules r;
  r.min_tokens = 3;
  r.min_tokens_stop_ids = {42, 43};
  auto rules = std::make_shared<const SamplingRules>(r);
  for (int i = 0; i < 5; ++i) {
    const int32_t token = s.step({decode_row(9, i, rules, 0.f)}, {l})[0];
    if (i < 3) {
      EXPECT_NE(token, 42) << i;
    } else {
      EXPECT_EQ(token, 42) << i;
    }
  }
}

TEST(CudaSamplingRules, DrawsFollowTheReferenceDistribution) {
  ZINFER_REQUIRE_CUDA();
  // A short vocabulary's worth of tokens carries the mass: the rest sit far below.
  std::vector<float> l(kVocab, -30.f);
  std::mt19937 rng(9);
  for (int i = 0; i < 64; ++i) l[i] = std::normal_distribution<float>(0.f, 2.f)(rng);
  struct Case {
    float temperature, min_p, top_p;
    int top_k;
  };
  for (const Case& cs : {Case{1.0f, 0.05f, 1.0f, -1}, Case{1.3f, 0.1f, 0.9f, -1}, Case{0.7f, 0.02f, 1.0f, 6}}) {
    SamplingRules r = reference::every_rule(64);
    r.min_p = cs.min_p;
    auto rules = std::make_shared<const SamplingRules>(r);
    const int draws = 8000;
    std::map<int, int> h;
    // Eight rows per step, each its own sequence at sample index 1000 + i (past min_tokens),
    // finished after the step so that the next draws start from the same counts.
    Sampler s;
    for (int i = 0; i < draws; i += 8) {
      std::vector<SequenceInput> seqs;
      std::vector<std::vector<float>> rows;
      for (int k = 0; k < 8; ++k) {
        seqs.push_back(decode_row(10 + k, 1000 + i + k, rules, cs.temperature, cs.top_p, cs.top_k, 42));
        rows.push_back(l);
      }
      for (int32_t t : s.step(seqs, rows)) ++h[t];
      for (const auto& q : seqs) s.state.finish(q.seq_id);
    }
    std::vector<double> x = reference::processed_logits(l, r, r.output_ids, 1000);
    const auto want = reference::probabilities(x, cs.temperature, cs.min_p, cs.top_k, cs.top_p);
    SCOPED_TRACE("temperature " + std::to_string(cs.temperature) + " min_p " + std::to_string(cs.min_p));
    for (int t = 0; t < kVocab; ++t) {
      const double f = h.count(t) ? h[t] / double(draws) : 0.0;
      if (want[t] == 0) {
        EXPECT_EQ(f, 0.0) << "token " << t << " has probability 0";
      } else {
        EXPECT_NEAR(f, want[t], 5 * std::sqrt(want[t] * (1 - want[t]) / draws) + 1e-3) << "token " << t;
      }
    }
  }
}

}  // namespace
}  // namespace zinfer::gpu::cuda::test
