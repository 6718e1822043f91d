// The CPU backend end to end on small random checkpoints of each architecture: logits against an
// independent float64 forward, chunked prefill against one-shot, decode through step() with
// use_last_sampled, batch-composition independence, swap and copy-on-write, and input errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "gpu/backend.h"
#include "gpu/random_model.h"
#include "tests/model/logits_reference.h"
#include "tests/model/reference_forward.h"
#include "tests/model/test_util.h"

namespace zinfer::gpu {
namespace {

using test::ScratchDir;

struct Checkpoint {
  ScratchDir dir{"ckpt"};
  ModelConfig config;
};

// A random checkpoint of `arch`; weights large enough that logits are far from flat.
std::unique_ptr<Checkpoint> make_checkpoint(Architecture arch, bool bf16 = false, bool llama_bias = false) {
  auto ck = std::make_unique<Checkpoint>();
  ck->config = test::tiny_config(arch);
  ck->config.attention_bias = ck->config.attention_bias || llama_bias;
  ck->config.o_proj_bias = llama_bias;
  if (arch == Architecture::kMistral) ck->config.sliding_window = 20;
  if (arch == Architecture::kQwen3) {  // Llama-3.1 scaling with bands inside the tested positions
    ck->config.rope_scaling.type = "llama3";
    ck->config.rope_scaling.factor = 8;
    ck->config.rope_scaling.original_max_position_embeddings = 64;
  }
  RandomModelOptions o;
  o.seed = 42 + static_cast<int>(arch);
  o.stddev = 0.15f;
  o.norm_stddev = 0.2f;
  o.bias_stddev = 0.3f;
  o.bf16 = bf16;
  write_random_model(ck->dir.str(), ck->config, o);
  return ck;
}

std::unique_ptr<Backend> open_backend(const Checkpoint& ck, int blocks = 64, int host_blocks = 8,
                                      KvCacheDtype kv_cache_dtype = KvCacheDtype::kAuto) {
  BackendOptions o;
  o.kv_cache_dtype = kv_cache_dtype;
  o.model_dir = ck.dir.str();
  o.num_gpu_blocks = blocks;
  o.num_cpu_blocks = host_blocks;
  o.swap_space_bytes = 0;  // host_blocks = 0: no host pool at all
  return make_backend(o);
}

std::vector<int32_t> random_tokens(int n, int vocab, uint32_t seed) {
  std::mt19937 g(seed);
  std::vector<int32_t> t(n);
  for (auto& x : t) x = int32_t(g() % uint32_t(vocab));
  return t;
}

// A block table of `n` distinct blocks in shuffled order, starting from `first`.
std::vector<int32_t> shuffled_blocks(int n, int first, uint32_t seed) {
  std::vector<int32_t> b(n);
  std::iota(b.begin(), b.end(), first);
  std::shuffle(b.begin(), b.end(), std::mt19937(seed));
  return b;
}

SequenceInput chunk(uint64_t id, const std::vector<int32_t>& all, int begin, int end, std::vector<int32_t> table,
                    bool sample) {
  SequenceInput s;
  s.seq_id = id;
  s.token_ids.assign(all.begin() + begin, all.begin() + end);
  s.num_tokens = end - begin;
  s.start_pos = begin;
  s.block_table = std::move(table);
  s.sample = sample;
  s.sampling.temperature = 0.0f;
  return s;
}

// One greedy decode step of sequence `id` at `start_pos`, feeding the token it sampled last.
SequenceInput decode_input(uint64_t id, int start_pos, std::vector<int32_t> table) {
  SequenceInput s;
  s.seq_id = id;
  s.use_last_sampled = true;
  s.num_tokens = 1;
  s.start_pos = start_pos;
  s.block_table = std::move(table);
  s.sample = true;
  s.sampling.temperature = 0.0f;
  return s;
}

double log_softmax_at(const std::vector<double>& l, int i) {
  double mx = *std::max_element(l.begin(), l.end()), z = 0;
  for (double x : l) z += std::exp(x - mx);
  return l[i] - mx - std::log(z);
}

class EachArchitecture : public ::testing::TestWithParam<std::tuple<Architecture, bool, bool>> {};

// Invariant 17 (docs/architecture.md): both backends compute the same model, and it is transformers' model.
TEST_P(EachArchitecture, LogitsMatchFloat64Reference) {
  const auto [arch, bf16, bias] = GetParam();
  auto ck = make_checkpoint(arch, bf16, bias);
  auto backend = open_backend(*ck);
  EXPECT_EQ(backend->config().o_proj_bias, bias);
  const auto tokens = random_tokens(45, ck->config.vocab_size, 1);
  auto logits = backend->forward_logits(chunk(1, tokens, 0, 45, shuffled_blocks(3, 0, 2), false));
  test::ReferenceForward ref(backend->config(), ck->dir.str());
  auto expected = ref.logits(tokens);
  const int V = ck->config.vocab_size;
  double spread = 0, worst = 0;
  for (int t = 0; t < 45; ++t)
    for (int v = 0; v < V; ++v) {
      worst = std::max(worst, std::abs(logits[size_t(t) * V + v] - expected[t][v]));
      spread = std::max(spread, std::abs(expected[t][v] - expected[t][0]));
    }
  EXPECT_LT(worst, 2e-4) << "max |logit - float64 reference|";
  EXPECT_GT(spread, 1.0) << "logits are too flat to test anything";
}

INSTANTIATE_TEST_SUITE_P(Models, EachArchitecture,
                         ::testing::Values(std::make_tuple(Architecture::kLlama, false, false),
                                           std::make_tuple(Architecture::kLlama, false, true),  // attention_bias
                                           std::make_tuple(Architecture::kMistral, false, false),
                                           std::make_tuple(Architecture::kQwen2, false, false),
                                           std::make_tuple(Architecture::kQwen3, false, false),
                                           std::make_tuple(Architecture::kQwen3, true, false)));

// Invariant 13 (docs/architecture.md): scheduling never changes a token.
TEST(CpuBackend, ChunkedPrefillEqualsOneShot) {
  auto ck = make_checkpoint(Architecture::kQwen3);
  auto one = open_backend(*ck), chunked = open_backend(*ck);
  const auto tokens = random_tokens(70, ck->config.vocab_size, 3);
  const auto table = shuffled_blocks(5, 3, 4);
  auto all = one->forward_logits(chunk(1, tokens, 0, 70, table, false));
  const int V = ck->config.vocab_size;
  int begin = 0;
  for (int end : {17, 47, 70}) {
    auto part = chunked->forward_logits(chunk(1, tokens, begin, end, table, false));
    ASSERT_EQ(part.size(), size_t(end - begin) * V);
    for (size_t i = 0; i < part.size(); ++i) ASSERT_NEAR(part[i], all[size_t(begin) * V + i], 1e-5);
    begin = end;
  }
}

// Greedy decode through step(): the prefill samples the first token, then each decode feeds the
// previous sample (use_last_sampled); every token must be the float64 reference's argmax.
TEST(CpuBackend, GreedyDecodeThroughStepMatchesReference) {
  auto ck = make_checkpoint(Architecture::kLlama);
  auto backend = open_backend(*ck);
  test::ReferenceForward ref(backend->config(), ck->dir.str());
  std::vector<int32_t> seq = random_tokens(20, ck->config.vocab_size, 5);
  const auto table = shuffled_blocks(4, 10, 6);
  BatchInput prefill;
  prefill.seqs.push_back(chunk(7, seq, 0, 20, table, true));
  auto out = backend->step(prefill);
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(out.size(), 1u);
    auto expected = ref.logits(seq).back();
    const int argmax = int(std::max_element(expected.begin(), expected.end()) - expected.begin());
    EXPECT_EQ(out[0].token, argmax) << "step " << i;
    EXPECT_NEAR(out[0].logprob, log_softmax_at(expected, out[0].token), 1e-4);
    seq.push_back(out[0].token);
    BatchInput decode;
    decode.seqs.push_back(decode_input(7, int32_t(seq.size()) - 1, table));
    out = backend->step(decode);
  }
}

// Sampling rules through step(): greedy decode under penalties, bad words and min_tokens equals
// the argmax of the float64 reference of vLLM's processing applied to the reference logits, with
// the output the backend generated so far (it keeps it per sequence); a sequence listed as
// finished starts again from its rules.
TEST(CpuBackend, SamplingRulesReadTheTokensGeneratedSoFar) {
  auto ck = make_checkpoint(Architecture::kLlama);
  auto backend = open_backend(*ck);
  test::ReferenceForward ref(backend->config(), ck->dir.str());
  const int V = ck->config.vocab_size;
  std::vector<int32_t> seq = random_tokens(12, V, 9);
  auto rules = std::make_shared<SamplingRules>();
  rules->repetition_penalty = 1.5f;
  rules->frequency_penalty = 0.8f;
  rules->presence_penalty = 0.3f;
  rules->prompt_ids = seq;
  rules->min_tokens = 2;
  rules->min_tokens_stop_ids = {1, 2};
  rules->bad_words = {{seq.back(), 5}};
  const auto table = shuffled_blocks(4, 10, 3);
  std::vector<int32_t> outputs;
  BatchInput b;
  b.seqs.push_back(chunk(3, seq, 0, 12, table, true));
  b.seqs[0].sampling.rules = rules;
  auto out = backend->step(b);
  for (int i = 0; i < 8; ++i) {
    ASSERT_EQ(out.size(), 1u);
    const auto raw64 = ref.logits(seq).back();
    const std::vector<float> raw(raw64.begin(), raw64.end());
    const auto want = reference::processed_logits(raw, *rules, outputs, i);
    EXPECT_EQ(out[0].token, std::max_element(want.begin(), want.end()) - want.begin()) << "step " << i;
    seq.push_back(out[0].token);
    outputs.push_back(out[0].token);
    BatchInput decode;
    SequenceInput s = decode_input(3, int32_t(seq.size()) - 1, table);
    s.sampling.sample_index = i + 1;
    s.sampling.rules = rules;
    decode.seqs.push_back(s);
    out = backend->step(decode);
  }
  // Invalid rules are an error naming the field, checked when a sequence first brings them.
  auto bad = std::make_shared<SamplingRules>();
  bad->logit_bias = {{V, 1.0f}};
  BatchInput again;
  again.finished = {3};
  again.seqs.push_back(chunk(4, random_tokens(4, V, 2), 0, 4, table, true));
  again.seqs[0].sampling.rules = bad;
  try {
    backend->step(again);
    FAIL() << "out-of-vocabulary logit_bias accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("logit_bias"), std::string::npos) << e.what();
  }
}

// Invariant 19 (docs/architecture.md): sampling depends on the request (seed, token index), not on the batch.
// Two seeded sequences sampled alone and together in one step give the same tokens.
TEST(CpuBackend, SeededSamplingIndependentOfBatch) {
  auto ck = make_checkpoint(Architecture::kQwen2);
  auto a = open_backend(*ck), b = open_backend(*ck);
  const auto t1 = random_tokens(30, ck->config.vocab_size, 7), t2 = random_tokens(5, ck->config.vocab_size, 8);
  auto s1 = chunk(1, t1, 0, 30, {0, 1}, true), s2 = chunk(2, t2, 0, 5, {2}, true);
  for (auto* s : {&s1, &s2}) {
    s->sampling.temperature = 1.5f;
    s->sampling.top_k = 50;
    s->sampling.seed = 77;
    s->sampling.sample_index = 3;
    s->sampling.top_logprobs = 2;
  }
  BatchInput alone1, alone2, together;
  alone1.seqs = {s1};
  alone2.seqs = {s2};
  together.seqs = {s2, s1};
  auto r1 = a->step(alone1), r2 = a->step(alone2), rt = b->step(together);
  ASSERT_EQ(rt.size(), 2u);
  EXPECT_EQ(rt[0].seq_id, 2u);
  EXPECT_EQ(rt[1].token, r1[0].token);
  EXPECT_EQ(rt[0].token, r2[0].token);
  EXPECT_NEAR(rt[1].logprob, r1[0].logprob, 1e-5);
  ASSERT_EQ(rt[1].top.size(), 2u);
  EXPECT_EQ(rt[1].top[0].first, r1[0].top[0].first);
}

// Runs `steps` greedy decode steps of one sequence, returning the tokens.
std::vector<int32_t> decode(Backend& be, uint64_t id, int start_pos, const std::vector<int32_t>& table, int steps) {
  std::vector<int32_t> out;
  for (int i = 0; i < steps; ++i) {
    BatchInput in;
    in.seqs.push_back(decode_input(id, start_pos + i, table));
    out.push_back(be.step(in).at(0).token);
  }
  return out;
}

// Invariant 24 (docs/architecture.md): KV layout [num_blocks, block_size, num_kv_heads, head_dim] per layer for K and V, same on the host.
// Both with float32 blocks and with fp8 ones ([cache] kv_cache_dtype; a block moves as its bytes).
class EachKvCacheDtype : public ::testing::TestWithParam<KvCacheDtype> {};

TEST_P(EachKvCacheDtype, SwapOutAndInPreservesTheSequence) {
  auto ck = make_checkpoint(Architecture::kMistral);
  auto plain = open_backend(*ck, 64, 8, GetParam()), swapped = open_backend(*ck, 64, 8, GetParam());
  const auto prompt = random_tokens(40, ck->config.vocab_size, 9);
  const std::vector<int32_t> table = {4, 1, 6, 2};  // 64 positions
  BatchInput prefill;
  prefill.seqs.push_back(chunk(3, prompt, 0, 40, table, true));
  plain->step(prefill);
  swapped->step(prefill);
  const auto expected = decode(*plain, 3, 40, table, 6);

  // Swap the three used blocks out, let another sequence overwrite them, swap them back into
  // other device blocks.
  BatchInput out;
  out.swap_out = {{4, 0}, {1, 1}, {6, 2}};
  swapped->step(out);
  const auto other = random_tokens(48, ck->config.vocab_size, 10);
  BatchInput clobber;
  clobber.seqs.push_back(chunk(9, other, 0, 48, {4, 1, 6}, false));
  swapped->step(clobber);
  BatchInput in;
  in.swap_in = {{0, 20}, {1, 21}, {2, 22}};
  swapped->step(in);
  EXPECT_EQ(decode(*swapped, 3, 40, {20, 21, 22, 23}, 6), expected);
}

TEST_P(EachKvCacheDtype, CopyOnWriteForksASequence) {
  auto ck = make_checkpoint(Architecture::kLlama);
  auto be = open_backend(*ck, 64, 8, GetParam());
  const auto prompt = random_tokens(20, ck->config.vocab_size, 11);  // the last block is partly full
  BatchInput prefill;
  prefill.seqs.push_back(chunk(1, prompt, 0, 20, {0, 1}, true));
  const int32_t first = be->step(prefill)[0].token;
  // Fork: a second sequence shares block 0 and gets a copy of block 1.
  BatchInput fork;
  fork.copy = {{1, 5}};
  SequenceInput child = chunk(2, {first}, 0, 1, {0, 5}, true);
  child.start_pos = 20;
  fork.seqs.push_back(child);
  SequenceInput parent = child;
  parent.seq_id = 1;
  parent.block_table = {0, 1};
  fork.seqs.push_back(parent);
  auto r = be->step(fork);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].token, r[1].token);
  EXPECT_NEAR(r[0].logprob, r[1].logprob, 1e-6);
}

INSTANTIATE_TEST_SUITE_P(CpuBackend, EachKvCacheDtype, ::testing::Values(KvCacheDtype::kAuto, KvCacheDtype::kFp8));

// Invariant 26 (docs/architecture.md): a failed step fails only its plan's requests.
TEST(CpuBackend, BadInputsAreErrors) {
  auto ck = make_checkpoint(Architecture::kLlama);
  auto be = open_backend(*ck, 8, 0);
  const auto tokens = random_tokens(20, ck->config.vocab_size, 12);
  BatchInput short_table;
  short_table.seqs.push_back(chunk(1, tokens, 0, 20, {0}, true));
  EXPECT_THROW(be->step(short_table), std::invalid_argument);
  BatchInput bad_block;
  bad_block.seqs.push_back(chunk(1, tokens, 0, 20, {0, 8}, true));
  EXPECT_THROW(be->step(bad_block), std::invalid_argument);
  BatchInput bad_token;
  bad_token.seqs.push_back(chunk(1, {5, ck->config.vocab_size}, 0, 2, {0}, true));
  EXPECT_THROW(be->step(bad_token), std::invalid_argument);
  BatchInput nothing_sampled;
  SequenceInput s;
  s.seq_id = 99;
  s.use_last_sampled = true;
  s.num_tokens = 1;
  s.block_table = {0};
  nothing_sampled.seqs.push_back(s);
  EXPECT_THROW(be->step(nothing_sampled), std::invalid_argument);
  BatchInput bad_top_p;
  bad_top_p.seqs.push_back(chunk(1, tokens, 0, 16, {0}, true));
  bad_top_p.seqs.back().sampling.temperature = 1.0f;
  bad_top_p.seqs.back().sampling.top_p = 0.0f;
  EXPECT_THROW(be->step(bad_top_p), std::invalid_argument);
  BatchInput bad_swap;
  bad_swap.swap_out = {{0, 0}};  // no host blocks
  EXPECT_THROW(be->step(bad_swap), std::out_of_range);
}

TEST(CpuBackend, DeviceSelection) {
  auto ck = make_checkpoint(Architecture::kLlama);
  BackendOptions o;
  o.model_dir = ck->dir.str();
  o.num_gpu_blocks = 4;
  o.device = "tpu";
  try {
    make_backend(o);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("'tpu'"), std::string::npos);
  }
#if !ZINFER_HAVE_CUDA
  o.device = "cuda";
  try {
    make_backend(o);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("this build has no CUDA backend"), std::string::npos);
  }
#endif
  o.device = "cpu";
  EXPECT_EQ(make_backend(o)->name(), "cpu");
  EXPECT_EQ(make_backend(o)->cache_geometry().num_gpu_blocks, 4);
}

TEST(CpuBackend, MissingTensorIsNamed) {
  auto ck = make_checkpoint(Architecture::kQwen3);
  // A Qwen3 config over weights without q_norm: rewrite config to Qwen3 over a Llama checkpoint.
  auto llama = make_checkpoint(Architecture::kLlama);
  std::filesystem::copy_file(ck->dir.path() / "config.json", llama->dir.path() / "config.json",
                             std::filesystem::copy_options::overwrite_existing);
  BackendOptions o;
  o.model_dir = llama->dir.str();
  o.num_gpu_blocks = 4;
  try {
    make_backend(o);
    FAIL();
  } catch (const SafetensorsError& e) {
    EXPECT_NE(std::string(e.what()).find("model.layers.0."), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace zinfer::gpu
