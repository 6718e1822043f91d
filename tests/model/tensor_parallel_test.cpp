// Tensor parallelism on the CPU backend (gpu/models/tensor_parallel.h, gpu/tensor_parallel_backend.h):
// the sharding arithmetic, the slices a store keeps, the rank group's collectives, and TP = 2 and
// 4 computing what TP = 1 computes on the transformers fixtures (greedy tokens equal, logprobs
// within 1e-4), with a failing rank stopping the group by name instead of hanging it, whether the
// group's threads sleep or poll between steps.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <thread>

#include "gpu/backend.h"
#include "gpu/cpu/cpu_backend.h"
#include "gpu/models/tensor_parallel.h"
#include "gpu/random_model.h"
#include "gpu/rank_group.h"
#include "gpu/tensor_parallel_backend.h"
#include "gpu/tensor_slice.h"
#include "test_util.h"

namespace zinfer::gpu {
namespace {

namespace fs = std::filesystem;
using models::Range;
using models::TensorParallel;

const fs::path kFixtures = fs::path(ZINFER_SOURCE_DIR) / "tests/data/models";

TEST(TensorParallelSharding, SplitsHeadsColumnsAndVocabulary) {
  ModelConfig c = test::tiny_config(Architecture::kLlama);  // 6 heads, 2 KV heads, I 72, V 97
  const models::Sharding s = models::shard(c, {1, 2});
  EXPECT_EQ(s.q_heads.begin, 3);
  EXPECT_EQ(s.q_heads.count, 3);
  EXPECT_EQ(s.kv_heads.begin, 1);
  EXPECT_EQ(s.kv_heads.count, 1);
  EXPECT_EQ(s.intermediate.begin, 36);
  EXPECT_EQ(s.intermediate.count, 36);
  EXPECT_EQ(s.vocab.begin, 49);  // ceil(97 / 2): the last row is padding
  EXPECT_EQ(s.vocab.count, 49);
  EXPECT_EQ(s.q_rows(8).begin, 24);
  const ModelConfig local = models::local_config(c, {1, 2});
  EXPECT_EQ(local.num_attention_heads, 3);
  EXPECT_EQ(local.num_key_value_heads, 1);
  EXPECT_EQ(local.intermediate_size, 36);
  EXPECT_EQ(local.vocab_size, 97);
}

TEST(TensorParallelSharding, ReplicatesKvHeadsWhenRanksOutnumberThem) {
  ModelConfig c = test::tiny_config(Architecture::kLlama);
  c.num_attention_heads = 8;
  c.intermediate_size = 64;
  // 2 KV heads over 4 ranks: ranks 0, 1 keep head 0 (their queries 0-3 read it), ranks 2, 3 head 1.
  const int64_t want[] = {0, 0, 1, 1};
  for (int32_t r = 0; r < 4; ++r) {
    const models::Sharding s = models::shard(c, {r, 4});
    EXPECT_EQ(s.kv_heads.begin, want[r]) << r;
    EXPECT_EQ(s.kv_heads.count, 1);
    EXPECT_EQ(s.q_heads.begin / (8 / 2), s.kv_heads.begin) << "rank " << r << "'s queries read its KV head";
  }
}

TEST(TensorParallelSharding, RefusesSizesThatDoNotDivideNamingTheField) {
  ModelConfig c = test::tiny_config(Architecture::kLlama);
  auto message = [&](TensorParallel tp) {
    try {
      models::shard(c, tp);
    } catch (const ModelConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({0, 4}).find("num_attention_heads 6"), std::string::npos);
  EXPECT_NE(message({0, 3}).find("num_key_value_heads 2"), std::string::npos);  // 3 ranks, 2 KV heads
  c.intermediate_size = 71;
  EXPECT_NE(message({0, 2}).find("intermediate_size 71"), std::string::npos);
  EXPECT_NE(message({2, 2}).find("not a rank"), std::string::npos);
}

TEST(TensorSlice, KeepsRowsAsAViewAndCopiesColumnsAndPadding) {
  std::vector<float> data(4 * 3);
  for (size_t i = 0; i < data.size(); ++i) data[i] = float(i);
  TensorView t;
  t.name = "w";
  t.file = "f.safetensors";
  t.dtype = DType::kF32;
  t.shape = {4, 3};
  t.data = reinterpret_cast<const std::byte*>(data.data());
  t.nbytes = data.size() * 4;

  const TensorSlice rows(t, {"w", {4, 3}, {1, 2}});
  EXPECT_EQ(rows.view().data, t.data + 12);
  EXPECT_EQ(rows.view().shape, (std::vector<int64_t>{2, 3}));

  const TensorSlice cols(t, {"w", {4, 3}, {}, {1, 2}});
  ASSERT_EQ(cols.view().shape, (std::vector<int64_t>{4, 2}));
  const auto* c = reinterpret_cast<const float*>(cols.view().data);
  EXPECT_EQ(c[0], 1.0f);
  EXPECT_EQ(c[1], 2.0f);
  EXPECT_EQ(c[6], 10.0f);

  const TensorSlice padded(t, {"w", {4, 3}, {2, 3}});  // rows 2, 3 and one past the end
  const auto* p = reinterpret_cast<const float*>(padded.view().data);
  EXPECT_EQ(p[0], 6.0f);
  EXPECT_EQ(p[5], 11.0f);
  EXPECT_EQ(p[6], 0.0f);
  EXPECT_EQ(p[8], 0.0f);

  EXPECT_THROW(TensorSlice(t, {"w", {4, 3}, {}, {2, 2}}), SafetensorsError);
  EXPECT_THROW(TensorSlice(t, {"w", {4, 3}, {5, 1}}), SafetensorsError);
}

TEST(RankGroup, CollectivesGiveEveryRankTheSameBits) {
  constexpr int32_t kRanks = 3;
  RankGroup group(kRanks);
  std::vector<std::vector<float>> data(kRanks), gathered(kRanks, std::vector<float>(kRanks * 5));
  std::vector<int64_t> mins(kRanks);
  std::vector<std::thread> threads;
  for (int32_t r = 0; r < kRanks; ++r) {
    data[r] = {0.1f * r, 1e8f, -1e8f, 3.0f + r, 1e-3f * r};
    threads.emplace_back([&, r] {
      std::vector<float> mine = data[r];
      group.all_gather(r, mine.data(), 5, gathered[r].data());
      group.all_reduce_sum(r, data[r].data(), 5);
      mins[r] = group.all_reduce_min(r, 10 - r);
    });
  }
  for (auto& t : threads) t.join();
  for (int32_t r = 0; r < kRanks; ++r) {
    EXPECT_EQ(std::memcmp(data[r].data(), data[0].data(), 5 * sizeof(float)), 0) << r;
    EXPECT_EQ(gathered[r], gathered[0]);
    EXPECT_EQ(mins[r], 10 - (kRanks - 1));
  }
  EXPECT_FLOAT_EQ(data[0][3], 3.0f + 4.0f + 5.0f);
  EXPECT_EQ(gathered[0][5 * 2 + 3], 5.0f);  // rank 2's fourth value
}

TEST(RankGroup, AbortReleasesRanksWaitingForOneThatNeverCame) {
  RankGroup group(2);
  std::atomic<bool> released{false};
  std::thread waiter([&] {
    float x = 1.0f;
    EXPECT_THROW(group.all_reduce_sum(0, &x, 1), RankGroupAborted);
    released = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(released.load());
  group.abort("rank 1 failed");
  waiter.join();
  EXPECT_TRUE(released.load());
  EXPECT_THROW(group.all_reduce_min(1, 0), RankGroupAborted);
}

// A prompt prefilled in two chunks (with another sequence's decode beside it), then greedy decode.
struct Trace {
  std::vector<int32_t> tokens;
  std::vector<float> logprobs;
  std::vector<std::vector<std::pair<int32_t, float>>> tops;
};

std::vector<Trace> run_greedy(Backend& backend, int steps) {
  const std::vector<std::vector<int32_t>> prompts = {{1, 5, 9, 14, 27, 3, 8, 21, 40, 2, 7}, {3, 11, 6}};
  std::vector<Trace> out(prompts.size());
  std::vector<SequenceInput> seqs(prompts.size());
  for (size_t i = 0; i < prompts.size(); ++i) {
    seqs[i].seq_id = 100 + i;
    seqs[i].block_table = {int32_t(7 - 2 * i), int32_t(2 + 2 * i), int32_t(10 + i), int32_t(13 + i)};
    seqs[i].sample = true;
    seqs[i].sampling.temperature = 0.0f;
    seqs[i].sampling.top_logprobs = 3;
  }
  std::vector<int32_t> pos(prompts.size(), 0);
  for (int step = 0; step < steps + 1; ++step) {
    BatchInput batch;
    for (size_t i = 0; i < prompts.size(); ++i) {
      SequenceInput s = seqs[i];
      if (pos[i] < int32_t(prompts[i].size())) {
        // The first prompt takes two steps (a chunk without sampling, then the rest).
        const int32_t n = (i == 0 && pos[i] == 0) ? 6 : int32_t(prompts[i].size()) - pos[i];
        s.token_ids.assign(prompts[i].begin() + pos[i], prompts[i].begin() + pos[i] + n);
        s.num_tokens = n;
        s.sample = pos[i] + n == int32_t(prompts[i].size());
      } else {
        s.use_last_sampled = true;
        s.num_tokens = 1;
      }
      s.start_pos = pos[i];
      pos[i] += s.num_tokens;
      batch.seqs.push_back(s);
    }
    for (const SampledToken& t : backend.step(batch)) {
      Trace& tr = out[t.seq_id - 100];
      tr.tokens.push_back(t.token);
      tr.logprobs.push_back(t.logprob);
      tr.tops.push_back(t.top);
    }
  }
  return out;
}

class TensorParallelFixture : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

// TP = N computes TP = 1's model: the same greedy tokens, logprobs and top alternatives within 1e-4.
TEST_P(TensorParallelFixture, MatchesOneRank) {
  const auto& [name, ranks] = GetParam();
  BackendOptions options;
  options.model_dir = (kFixtures / name).string();
  options.num_gpu_blocks = 24;
  options.num_threads = 2;
  auto one = make_backend(options);
  options.tensor_parallel_size = ranks;
  auto group = make_backend(options);
  EXPECT_EQ(group->cache_geometry().num_gpu_blocks, 24);
  EXPECT_NE(group->name().find("x" + std::to_string(ranks)), std::string::npos) << group->name();
  const std::vector<Trace> want = run_greedy(*one, 10), got = run_greedy(*group, 10);
  ASSERT_EQ(got.size(), want.size());
  for (size_t s = 0; s < want.size(); ++s) {
    ASSERT_EQ(got[s].tokens, want[s].tokens) << "sequence " << s;
    for (size_t i = 0; i < want[s].tokens.size(); ++i) {
      EXPECT_NEAR(got[s].logprobs[i], want[s].logprobs[i], 1e-4) << "sequence " << s << " step " << i;
      ASSERT_EQ(got[s].tops[i].size(), want[s].tops[i].size());
      for (size_t k = 0; k < want[s].tops[i].size(); ++k) {
        EXPECT_EQ(got[s].tops[i][k].first, want[s].tops[i][k].first);
        EXPECT_NEAR(got[s].tops[i][k].second, want[s].tops[i][k].second, 1e-4);
      }
    }
  }
}

// mistral: one KV head replicated on every rank; phi3: slices of fused tensors; qwen2/qwen3: tied
// vocab-parallel embedding and head, biases, q/k norms; llama_bias: a row-parallel o_proj bias.
INSTANTIATE_TEST_SUITE_P(
    Fixtures, TensorParallelFixture,
    ::testing::Combine(::testing::Values("llama", "llama_bf16", "llama_bias", "mistral", "phi3", "qwen2", "qwen3",
                                         "qwen3_bf16"),
                       ::testing::Values(2, 4)),
    [](const auto& info) { return std::get<0>(info.param) + "_tp" + std::to_string(std::get<1>(info.param)); });

// A vocabulary the group size does not divide: the last rank's padding rows must not reach the
// logits (97 = 49 + 48 over two ranks).
TEST(TensorParallel, PaddedVocabularyMatchesOneRank) {
  test::ScratchDir dir("tp-vocab");
  ModelConfig c = test::tiny_config(Architecture::kQwen3);
  RandomModelOptions ro;
  ro.seed = 5;
  ro.stddev = 0.2f;
  write_random_model(dir.str(), c, ro);
  BackendOptions options;
  options.model_dir = dir.str();
  options.num_gpu_blocks = 24;
  options.num_threads = 2;
  auto one = make_backend(options);
  options.tensor_parallel_size = 2;
  auto group = make_backend(options);
  SequenceInput s;
  s.seq_id = 1;
  s.token_ids = {1, 96, 50, 48, 49, 3};
  s.num_tokens = 6;
  s.block_table = {0};
  const std::vector<float> a = one->forward_logits(s), b = group->forward_logits(s);
  ASSERT_EQ(a.size(), size_t(6 * 97));
  ASSERT_EQ(b.size(), a.size());
  for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-4) << i;
}

// Unseeded sampling: the ranks draw alike, so rank 1 feeds back the token rank 0 reported; were
// they apart, the group's later logprobs would not be the model's on the reported tokens.
TEST(TensorParallel, RanksAgreeOnUnseededSamples) {
  BackendOptions options;
  options.model_dir = (kFixtures / "qwen3").string();
  options.num_gpu_blocks = 24;
  options.num_threads = 2;
  options.tensor_parallel_size = 2;
  auto group = make_backend(options);
  SequenceInput s;
  s.seq_id = 9;
  s.token_ids = {1, 2, 3, 4};
  s.num_tokens = 4;
  s.block_table = {0, 1};
  s.sample = true;
  s.sampling.temperature = 1.5f;
  std::vector<int32_t> tokens = s.token_ids;
  std::vector<float> logprobs;
  for (int i = 0; i < 8; ++i) {
    BatchInput batch;
    batch.seqs.push_back(s);
    const SampledToken t = group->step(batch).at(0);
    tokens.push_back(t.token);
    logprobs.push_back(t.logprob);
    s.start_pos += s.num_tokens;
    s.token_ids.clear();
    s.use_last_sampled = true;
    s.num_tokens = 1;
  }
  options.tensor_parallel_size = 1;
  auto one = make_backend(options);
  SequenceInput all;
  all.seq_id = 1;
  all.token_ids.assign(tokens.begin(), tokens.end() - 1);
  all.num_tokens = int32_t(all.token_ids.size());
  all.block_table = {0, 1};
  const std::vector<float> logits = one->forward_logits(all);
  const int64_t V = one->config().vocab_size;
  for (int i = 0; i < 8; ++i) {
    const float* row = logits.data() + (3 + i) * V;
    double mx = row[0], sum = 0.0;
    for (int64_t v = 0; v < V; ++v) mx = std::max<double>(mx, row[v]);
    for (int64_t v = 0; v < V; ++v) sum += std::exp(row[v] - mx);
    const double lp = row[tokens[4 + i]] - mx - std::log(sum);
    EXPECT_NEAR(logprobs[i], lp, 1e-4) << "step " << i;
  }
}

// A group's threads polling for `poll` before they sleep, as a CUDA group's do
// (RankGroupHooks::poll); zero: they sleep at once, as a CPU group's.
class PollingHooks final : public RankGroupHooks {
 public:
  explicit PollingHooks(std::chrono::microseconds poll) : poll_(poll) {}
  std::chrono::microseconds poll() const override { return poll_; }

 private:
  std::chrono::microseconds poll_;
};

class TensorParallelThreads : public ::testing::TestWithParam<int> {  // the polling time, µs
 protected:
  std::unique_ptr<RankGroupHooks> hooks() const {
    return std::make_unique<PollingHooks>(std::chrono::microseconds{GetParam()});
  }
};

// Invariant: a failing rank stops its group with an error naming it, and nobody hangs, whether
// the group's threads sleep or poll.
TEST_P(TensorParallelThreads, AFailingRankStopsTheGroupByName) {
  BackendOptions options;
  options.model_dir = (kFixtures / "llama").string();
  options.num_gpu_blocks = 8;
  options.num_threads = 2;
  std::atomic<int> steps{0};
  // Rank 1 fails in its third step, after rank 0 has entered the step's first collective.
  class Failing final : public Backend {
   public:
    Failing(std::unique_ptr<Backend> inner, bool fail, std::atomic<int>& steps)
        : inner_(std::move(inner)), fail_(fail), steps_(steps) {}
    const ModelConfig& config() const override { return inner_->config(); }
    CacheGeometry cache_geometry() const override { return inner_->cache_geometry(); }
    std::string name() const override { return inner_->name(); }
    std::vector<SampledToken> step(const BatchInput& b) override {
      if (fail_ && ++steps_ == 3) throw std::runtime_error("device lost");
      return inner_->step(b);
    }
    std::vector<float> forward_logits(const SequenceInput& s) override { return inner_->forward_logits(s); }

   private:
    std::unique_ptr<Backend> inner_;
    bool fail_;
    std::atomic<int>& steps_;
  };
  auto group = make_tensor_parallel_backend(
      2,
      [&](const RankContext& rank) -> std::unique_ptr<Backend> {
        return std::make_unique<Failing>(cpu::make_cpu_backend(options, rank), rank.rank == 1, steps);
      },
      hooks());
  SequenceInput s;
  s.seq_id = 1;
  s.token_ids = {1, 2, 3};
  s.num_tokens = 3;
  s.block_table = {0};
  s.sample = true;
  s.sampling.temperature = 0.0f;
  BatchInput batch;
  batch.seqs.push_back(s);
  EXPECT_NO_THROW(group->step(batch));
  EXPECT_NO_THROW(group->step(batch));
  try {
    group->step(batch);
    FAIL() << "no error";
  } catch (const BackendFailure& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1 of 2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("device lost"), std::string::npos) << e.what();
  }
  EXPECT_THROW(group->step(batch), BackendFailure);
}

// A group whose threads poll gives the tokens of one that sleeps, steps coming back to back and
// steps coming after the threads have given up polling and gone to sleep.
TEST_P(TensorParallelThreads, StepsAfterPollingOrSleepingGiveTheSameTokens) {
  BackendOptions options;
  options.model_dir = (kFixtures / "llama").string();
  options.num_gpu_blocks = 8;
  options.num_threads = 1;
  auto make = [&](std::unique_ptr<RankGroupHooks> h) {
    return make_tensor_parallel_backend(
        2, [&](const RankContext& rank) { return cpu::make_cpu_backend(options, rank); }, std::move(h));
  };
  auto sleeping = make(nullptr), polling = make(hooks());
  auto decode = [](Backend& group, bool pause) {
    SequenceInput s;
    s.seq_id = 1;
    s.token_ids = {1, 2, 3};
    s.num_tokens = 3;
    s.block_table = {0, 1};
    s.sample = true;
    s.sampling.temperature = 0.0f;
    std::vector<int32_t> tokens;
    for (int i = 0; i < 6; ++i) {
      if (pause && i % 2 == 1) std::this_thread::sleep_for(std::chrono::milliseconds(5));  // past the polling
      BatchInput batch;
      batch.seqs.push_back(s);
      tokens.push_back(group.step(batch).at(0).token);
      s.start_pos += s.num_tokens;
      s.token_ids.clear();
      s.use_last_sampled = true;
      s.num_tokens = 1;
    }
    return tokens;
  };
  const std::vector<int32_t> expected = decode(*sleeping, false);
  EXPECT_EQ(decode(*polling, false), expected);
  BatchInput done;
  done.finished = {1};
  polling->step(done);
  EXPECT_EQ(decode(*polling, true), expected);
}

// A CUDA group polls where the host has a core for each poller and three more, else sleeps.
TEST(TensorParallelPolling, DeviceGroupsPollOnlyWhereTheHostHasCoresToSpare) {
  using std::chrono::milliseconds;
  EXPECT_EQ(device_group_polling(32, 2), milliseconds{20});
  EXPECT_EQ(device_group_polling(6, 2), milliseconds{20});
  EXPECT_EQ(device_group_polling(5, 2), milliseconds{0});
  EXPECT_EQ(device_group_polling(12, 8), milliseconds{20});
  EXPECT_EQ(device_group_polling(11, 8), milliseconds{0});
  EXPECT_EQ(device_group_polling(0, 2), milliseconds{0});  // unknown
}

// Sleeping at once, and polling for 1 ms (the sleep between steps above outlasts it).
INSTANTIATE_TEST_SUITE_P(Polling, TensorParallelThreads, ::testing::Values(0, 1000),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return info.param == 0 ? std::string("Sleeping") : std::string("Polling1ms");
                         });

TEST(TensorParallel, ARankThatFailsToStartIsNamed) {
  BackendOptions options;
  options.model_dir = (kFixtures / "llama").string();
  options.num_gpu_blocks = 8;
  try {
    // Rank 0 reaches the KV cache's agreement on block counts and waits there for rank 1.
    make_tensor_parallel_backend(2, [&](const RankContext& rank) -> std::unique_ptr<Backend> {
      if (rank.rank == 1) throw std::runtime_error("out of memory");
      return cpu::make_cpu_backend(options, rank);
    });
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1 of 2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("out of memory"), std::string::npos) << e.what();
  }
}

TEST(TensorParallel, SizesTheModelCannotTakeAreRefusedByName) {
  BackendOptions options;
  options.model_dir = (kFixtures / "llama").string();  // 4 heads
  options.num_gpu_blocks = 8;
  options.tensor_parallel_size = 8;
  try {
    make_backend(options);
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("num_attention_heads"), std::string::npos) << e.what();
  }
  options.device = "synthetic";
  EXPECT_THROW(make_backend(options), std::runtime_error);
}

}  // namespace
}  // namespace zinfer::gpu
