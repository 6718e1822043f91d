// The synthetic backend (`[model] device = "synthetic"`): what it decides for a step (one
// non-eos token per sampling sequence, in plan order, deterministic), its cache geometry and its
// errors. It stands in for the executor in the control-plane benchmark.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "gpu/backend.h"
#include "gpu/synthetic_backend.h"
#include "tests/model/test_util.h"

namespace zinfer::gpu {
namespace {

// A model folder of the tests: vocabulary 1000, eos ids 2 and 3 (generation_config.json),
// 3 layers, 2 KV heads of 32, float32.
const std::string kModel = std::string(ZINFER_SOURCE_DIR) + "/tests/data/models/qwen3";

BackendOptions options(int32_t gpu_blocks, int32_t cpu_blocks = 8) {
  BackendOptions o;
  o.model_dir = kModel;
  o.device = "synthetic";
  o.block_size = 16;
  o.num_gpu_blocks = gpu_blocks;
  o.num_cpu_blocks = cpu_blocks;
  return o;
}

SequenceInput decode(uint64_t seq_id, int32_t start_pos, int32_t sample_index, std::vector<int32_t> table) {
  SequenceInput s;
  s.seq_id = seq_id;
  s.use_last_sampled = true;
  s.num_tokens = 1;
  s.start_pos = start_pos;
  s.block_table = std::move(table);
  s.sample = true;
  s.sampling.sample_index = sample_index;
  return s;
}

SequenceInput prefill(uint64_t seq_id, int32_t num_tokens, bool sample, std::vector<int32_t> table) {
  SequenceInput s;
  s.seq_id = seq_id;
  s.token_ids.assign(static_cast<size_t>(num_tokens), 7);
  s.num_tokens = num_tokens;
  s.block_table = std::move(table);
  s.sample = sample;
  return s;
}

// Writes a config.json of the test model with another vocabulary and eos list.
void write_model(const std::string& dir, int vocab, const std::vector<int>& eos) {
  std::ifstream in(kModel + "/config.json");
  nlohmann::json c = nlohmann::json::parse(in);
  c["vocab_size"] = vocab;
  c["eos_token_id"] = eos;
  std::ofstream(dir + "/config.json") << c.dump();
}

TEST(SyntheticBackend, GeometryComesFromTheOptions) {
  auto b = make_backend(options(100, 7));
  EXPECT_EQ(b->name(), "synthetic");
  const CacheGeometry g = b->cache_geometry();
  EXPECT_EQ(g.block_size, 16);
  EXPECT_EQ(g.num_gpu_blocks, 100);
  EXPECT_EQ(g.num_cpu_blocks, 7);
  EXPECT_EQ(b->config().vocab_size, 1000);
  EXPECT_EQ(b->config().eos_token_ids, (std::vector<int32_t>{2, 3}));
}

TEST(SyntheticBackend, HostPoolWithoutNumCpuBlocksIsWhatTheSwapSpaceHolds) {
  BackendOptions o = options(100, 0);
  // One block of the test model: 3 layers x (K, V) x 16 tokens x 2 heads x 32 dims x 4 bytes.
  const int64_t block_bytes = 3 * 2 * 16 * 2 * 32 * 4;
  o.swap_space_bytes = 10 * block_bytes + block_bytes / 2;
  EXPECT_EQ(make_backend(o)->cache_geometry().num_cpu_blocks, 10);
  o.dtype = "bfloat16";  // half the bytes per element: twice the blocks
  EXPECT_EQ(make_backend(o)->cache_geometry().num_cpu_blocks, 21);
}

TEST(SyntheticBackend, RefusesToStartWithoutNumGpuBlocks) {
  try {
    make_backend(options(0));
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("num_gpu_blocks"), std::string::npos) << e.what();
  }
}

TEST(SyntheticBackend, OneTokenPerSamplingSequenceInPlanOrder) {
  auto b = make_backend(options(64));
  BatchInput batch;
  batch.seqs.push_back(prefill(40, 20, /*sample=*/true, {0, 1}));
  batch.seqs.push_back(prefill(41, 16, /*sample=*/false, {2}));  // a prefill chunk that samples nothing
  batch.seqs.push_back(decode(7, 33, 5, {3, 4, 5}));
  batch.seqs.push_back(decode(3, 0, 0, {6}));
  batch.copy = {{1, 9}};
  batch.swap_out = {{4, 0}};
  batch.swap_in = {{7, 10}};
  const auto out = b->step(batch);
  ASSERT_EQ(out.size(), 3u);
  const std::vector<uint64_t> order = {40, 7, 3};
  const std::vector<int32_t> index = {0, 5, 0};
  for (size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i].seq_id, order[i]);
    EXPECT_EQ(out[i].token, synthetic_token(order[i], index[i], b->config()));
    EXPECT_GE(out[i].token, 0);
    EXPECT_LT(out[i].token, 1000);
    EXPECT_EQ(out[i].logprob, 0.0f);
    EXPECT_TRUE(out[i].top.empty());
  }
  EXPECT_EQ(b->step(batch)[1].token, out[1].token) << "the same step gives the same tokens";
}

TEST(SyntheticBackend, TokensAreNeverEosAndVaryWithSequenceAndIndex) {
  auto b = make_backend(options(16));
  std::set<int32_t> seen;
  for (uint64_t seq = 0; seq < 100; ++seq) {
    for (int32_t index = 0; index < 100; ++index) {
      const int32_t t = synthetic_token(seq, index, b->config());
      ASSERT_NE(t, 2);
      ASSERT_NE(t, 3);
      seen.insert(t);
    }
  }
  EXPECT_GT(seen.size(), 900u) << "10,000 draws over a vocabulary of 1000 should reach nearly all of it";
}

TEST(SyntheticBackend, AVocabularyOfEosIdsButOneAlwaysGivesThatOne) {
  test::ScratchDir dir("synthetic");
  write_model(dir.str(), 8, {0, 1, 2, 3, 4, 6, 7});
  BackendOptions o = options(16);
  o.model_dir = dir.str();
  auto b = make_backend(o);
  for (uint64_t seq = 0; seq < 50; ++seq) EXPECT_EQ(synthetic_token(seq, static_cast<int32_t>(seq * 3), b->config()), 5);

  write_model(dir.str(), 3, {0, 1, 2});
  try {
    make_backend(o);
    FAIL() << "expected an error";
  } catch (const ModelConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("eos"), std::string::npos) << e.what();
  }
}

TEST(SyntheticBackend, TopLogprobsListTheSampledTokenFirst) {
  auto b = make_backend(options(16));
  BatchInput batch;
  batch.seqs.push_back(decode(9, 3, 2, {0}));
  batch.seqs[0].sampling.top_logprobs = 4;
  const auto out = b->step(batch);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].top.size(), 4u);
  EXPECT_EQ(out[0].top[0].first, out[0].token);
  EXPECT_EQ(out[0].top[0].second, 0.0f);
  std::set<int32_t> ids;
  for (size_t i = 0; i < out[0].top.size(); ++i) {
    ids.insert(out[0].top[i].first);
    if (i > 0) {
      EXPECT_LT(out[0].top[i].second, out[0].top[i - 1].second);
    }
  }
  EXPECT_EQ(ids.size(), 4u);
}

// Invariant 26 (docs/architecture.md): a failed step fails only its plan's requests.
TEST(SyntheticBackend, PlansOutsideTheCacheAreErrors) {
  auto b = make_backend(options(8, 4));
  BatchInput short_table;
  short_table.seqs.push_back(decode(1, 16, 0, {0}));  // position 16 needs a second block
  EXPECT_THROW(b->step(short_table), std::invalid_argument);
  BatchInput bad_block;
  bad_block.seqs.push_back(decode(1, 0, 0, {8}));
  EXPECT_THROW(b->step(bad_block), std::invalid_argument);
  BatchInput bad_swap;
  bad_swap.swap_out = {{0, 4}};  // host pool has blocks 0..3
  EXPECT_THROW(b->step(bad_swap), std::invalid_argument);
  BatchInput bad_count;
  bad_count.seqs.push_back(prefill(1, 4, true, {0}));
  bad_count.seqs[0].num_tokens = 5;
  EXPECT_THROW(b->step(bad_count), std::invalid_argument);
}

// Invariant 3 (docs/architecture.md): blocks are the scheduler's, planned then committed in full; the executor touches only the blocks a plan names.
// Every entry of a table is checked, wherever it is, and the error names the first bad one.
TEST(SyntheticBackend, EveryBlockOfATableIsChecked) {
  auto b = make_backend(options(8, 4));
  auto error_of = [&](std::vector<int32_t> table) -> std::string {
    BatchInput batch;
    batch.seqs.push_back(decode(1, 0, 0, {0, 1, 2}));
    batch.seqs.push_back(prefill(2, 4, true, std::move(table)));
    try {
      b->step(batch);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(error_of({0, 7, 3, 5}), "no error");
  EXPECT_NE(error_of({0, 1, -1, 2}).find("block -1 outside [0, 8)"), std::string::npos) << error_of({0, 1, -1, 2});
  EXPECT_NE(error_of({0, 1, 2, 3, 9, 8}).find("block 9 outside"), std::string::npos);
  EXPECT_NE(error_of({8}).find("a block table names device block 8"), std::string::npos) << error_of({8});
}

TEST(SyntheticBackend, ComputesNoLogits) {
  auto b = make_backend(options(8));
  try {
    b->forward_logits(prefill(1, 4, true, {0}));
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("synthetic"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace zinfer::gpu
