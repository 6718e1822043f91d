// pack_step: the packed per-token / per-sequence / per-sample arrays, prefill tiles, graph padding
// and the input checks. Host code, but part of the GPU binary, so it skips without a device too.
#include <gtest/gtest.h>

#include <cstring>

#include "gpu/cuda/step_inputs.h"
#include "tests/cuda/cuda_test_util.h"

namespace zinfer::gpu::cuda::test {
namespace {

StepCapacity capacity() {
  StepCapacity c;
  c.max_tokens = 200;
  c.max_seqs = 4;
  c.max_blocks_per_seq = 8;
  c.block_size = 16;
  c.num_gpu_blocks = 40;
  c.scratch_block = 40;
  c.vocab = 100;
  c.tile_queries = 64;
  return c;
}

SequenceInput seq(uint64_t id, int n, int start, std::vector<int32_t> blocks) {
  SequenceInput s;
  s.seq_id = id;
  s.num_tokens = n;
  s.start_pos = start;
  for (int i = 0; i < n; ++i) s.token_ids.push_back((i * 7 + static_cast<int>(id)) % 100);
  s.block_table = std::move(blocks);
  return s;
}

TEST(CudaStepInputs, PacksTokensTilesAndSamples) {
  ZINFER_REQUIRE_CUDA();
  const StepLayout L(capacity());
  std::vector<uint32_t> words(L.total_words, 0xDEADBEEFu);
  LastTokenSlots slots(16);
  std::vector<SequenceInput> seqs = {seq(1, 97, 20, {3, 9, 4, 5, 6, 7, 8, 13}), seq(2, 1, 33, {10, 11, 12})};
  seqs[0].sample = true;
  seqs[0].sampling.temperature = 0.7f;
  seqs[0].sampling.seed = 5;
  seqs[1].sample = true;
  seqs[1].sampling.top_logprobs = 2;
  const PackedStep st = pack_step(seqs, L, true, 0, slots, 77, words.data());
  EXPECT_EQ(st.num_tokens, 98);
  EXPECT_EQ(st.padded_tokens, 98);
  EXPECT_FALSE(st.decode_only);
  EXPECT_EQ(st.max_context, 117);
  // Sequence 1: 97 queries -> tiles of 64 and 33; sequence 2 -> the decode list.
  ASSERT_EQ(st.num_tiles, 2);
  EXPECT_EQ(words[L.tiles + 0], 0u);
  EXPECT_EQ(words[L.tiles + 1], 64u);
  EXPECT_EQ(words[L.tiles + 3], 64u);
  EXPECT_EQ(words[L.tiles + 4], 33u);
  EXPECT_EQ(words[L.tiles + 5], 0u);
  ASSERT_EQ(st.num_decode, 1);
  EXPECT_EQ(words[L.decode_tokens], 97u);
  // Token 50 of sequence 1 sits at position 70: logical block 4 -> physical 6, offset 6.
  EXPECT_EQ(words[L.positions + 50], 70u);
  EXPECT_EQ(words[L.slot_mapping + 50], 6u * 16 + 6);
  EXPECT_EQ(words[L.token_seq + 97], 1u);
  EXPECT_EQ(words[L.slot_mapping + 97], 12u * 16 + 1);  // position 33 of sequence 2
  // Block tables packed one after the other: 8 blocks for 117 positions, then 3.
  EXPECT_EQ(words[L.seq_block_offset + 0], 0u);
  EXPECT_EQ(words[L.seq_block_offset + 1], 8u);
  EXPECT_EQ(words[L.block_tables + 8], 10u);
  // Sampling rows: the last token of each sampling sequence.
  ASSERT_EQ(st.rows.size(), 2u);
  EXPECT_EQ(words[L.sample_rows + 0], 96u);
  EXPECT_EQ(words[L.sample_rows + 1], 97u);
  float t = 0;
  std::memcpy(&t, &words[L.temperature], 4);
  EXPECT_FLOAT_EQ(t, 0.7f);
  uint64_t seed = 0;
  std::memcpy(&seed, &words[L.seed], 8);
  EXPECT_EQ(seed, 5u);
  EXPECT_EQ(st.rows[1].num_top, 2);
  EXPECT_EQ(static_cast<int32_t>(words[L.dest_slot + 1]), slots.find(2));
  EXPECT_GE(slots.find(1), 0);
  EXPECT_LE(st.words_used, L.total_words);
  // The decode list's one token is alone in its sequence; without tiles all 97 queries of
  // sequence 1 join the list, and their keys include this step's other tokens.
  EXPECT_TRUE(st.decode_tokens_alone);
  const PackedStep untiled = pack_step(seqs, L, false, 0, slots, 77, words.data());
  EXPECT_EQ(untiled.num_decode, 98);
  EXPECT_FALSE(untiled.decode_tokens_alone);
}

TEST(CudaStepInputs, PadsDecodeStepsForGraphBuckets) {
  ZINFER_REQUIRE_CUDA();
  const StepLayout L(capacity());
  std::vector<uint32_t> words(L.total_words);
  LastTokenSlots slots(16);
  slots.acquire(9);
  SequenceInput d;
  d.seq_id = 9;
  d.use_last_sampled = true;
  d.num_tokens = 1;
  d.start_pos = 40;
  d.block_table = {1, 2, 3};
  d.sample = true;
  const PackedStep st = pack_step({d}, L, true, 4, slots, 1, words.data());
  EXPECT_TRUE(st.decode_only);
  EXPECT_TRUE(st.decode_tokens_alone);  // padding tokens attend only their own key
  EXPECT_EQ(st.num_tokens, 1);
  EXPECT_EQ(st.padded_tokens, 4);
  EXPECT_EQ(st.num_decode, 4);
  EXPECT_EQ(static_cast<int32_t>(words[L.from_slot]), slots.find(9));
  for (int p = 1; p < 4; ++p) {
    EXPECT_EQ(words[L.slot_mapping + p], 40u * 16) << "padding writes the scratch block";
    EXPECT_EQ(words[L.positions + p], 0u);
    EXPECT_EQ(words[L.token_seq + p], 4u);
    EXPECT_EQ(static_cast<int32_t>(words[L.from_slot + p]), -1);
  }
  EXPECT_EQ(words[L.block_tables + words[L.seq_block_offset + 4]], 40u);
}

// A graph bucket's layout holds the same step in a short prefix of the buffer (a decode step
// uploads that prefix), with every array where the layout says.
TEST(CudaStepInputs, GraphBucketLayoutPacksDecodeStepsIntoAShortPrefix) {
  ZINFER_REQUIRE_CUDA();
  const StepLayout full(capacity());
  for (int bucket : {1, 2, 4}) {
    const StepLayout L(capacity().for_graph_bucket(bucket));
    EXPECT_EQ(L.cap.max_tokens, bucket);
    EXPECT_EQ(L.cap.max_seqs, bucket);
    EXPECT_LE(L.total_words, full.total_words);
    std::vector<uint32_t> words(L.total_words);
    LastTokenSlots slots(16);
    std::vector<SequenceInput> seqs;
    for (int i = 0; i < (bucket + 1) / 2 + (bucket == 1 ? 0 : 1); ++i) {
      SequenceInput d = seq(5 + i, 1, 17 + i, {3 * i, 3 * i + 1, 3 * i + 2});
      d.sample = true;
      d.sampling.temperature = 0.5f + i;
      seqs.push_back(d);
    }
    const PackedStep st = pack_step(seqs, L, true, bucket, slots, 1, words.data());
    const int n = static_cast<int>(seqs.size());
    EXPECT_EQ(st.layout, &L);
    EXPECT_TRUE(st.decode_only);
    EXPECT_EQ(st.padded_tokens, bucket);
    // Per token and per sequence a few words each (the sampling rules' 12 per sequence among
    // them), then the block tables (2 of each sequence's 3 blocks are used at positions 17 + i)
    // and the padding's scratch block.
    EXPECT_LE(st.words_used, static_cast<size_t>(64 * bucket + 2 * n + 1));
    EXPECT_GT(full.block_tables, 200u) << "the full layout puts the block tables after 200-token arrays";
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ(words[L.token_ids + i], seqs[i].token_ids[0]);
      EXPECT_EQ(words[L.positions + i], static_cast<uint32_t>(17 + i));
      EXPECT_EQ(words[L.slot_mapping + i], static_cast<uint32_t>((3 * i + 1) * 16 + 1 + i));
      EXPECT_EQ(words[L.decode_tokens + i], static_cast<uint32_t>(i));
      EXPECT_EQ(words[L.sample_rows + i], static_cast<uint32_t>(i));
      float temperature = 0.f;
      std::memcpy(&temperature, &words[L.temperature + i], 4);
      EXPECT_EQ(temperature, 0.5f + i);
      EXPECT_EQ(words[L.block_tables + words[L.seq_block_offset + i] + 1], static_cast<uint32_t>(3 * i + 1));
    }
    for (int p = n; p < bucket; ++p) EXPECT_EQ(words[L.token_seq + p], static_cast<uint32_t>(bucket)) << "padding";
  }
}

TEST(CudaStepInputs, RejectsInconsistentSequences) {
  ZINFER_REQUIRE_CUDA();
  const StepLayout L(capacity());
  std::vector<uint32_t> words(L.total_words);
  LastTokenSlots slots(2);
  auto pack = [&](const std::vector<SequenceInput>& s) { return pack_step(s, L, true, 0, slots, 1, words.data()); };
  EXPECT_THROW(pack({seq(1, 20, 0, {1})}), std::invalid_argument);          // block table too short
  EXPECT_THROW(pack({seq(1, 20, 0, {1, 40})}), std::invalid_argument);      // block id out of range
  EXPECT_THROW(pack({seq(1, 20, 120, {1, 2, 3, 4, 5, 6, 7, 8, 9})}), std::invalid_argument);  // beyond max_model_len
  SequenceInput bad = seq(1, 3, 0, {1});
  bad.token_ids[1] = 100;
  EXPECT_THROW(pack({bad}), std::invalid_argument);                          // token outside the vocabulary
  bad = seq(1, 3, 0, {1});
  bad.num_tokens = 4;
  EXPECT_THROW(pack({bad}), std::invalid_argument);                          // count mismatch
  std::vector<SequenceInput> many;
  for (int i = 0; i < 5; ++i) many.push_back(seq(i, 1, 0, {1}));
  EXPECT_THROW(pack(many), std::invalid_argument);                           // more than max_seqs
  SequenceInput sampled = seq(1, 3, 0, {1});
  sampled.sample = true;
  sampled.sampling.top_logprobs = 21;
  EXPECT_THROW(pack({sampled}), std::invalid_argument);
  // Slots run out: two sequences hold one each, a third cannot sample.
  slots.acquire(100);
  slots.acquire(101);
  sampled.sampling.top_logprobs = 0;
  EXPECT_THROW(pack({sampled}), std::runtime_error);
  slots.release(100);
  EXPECT_NO_THROW(pack({sampled}));
}

}  // namespace
}  // namespace zinfer::gpu::cuda::test
