// The hand-written codec of the step-path messages: byte-identical to msgpack-c's encoding,
// round trips at odd sizes, and both directions across the two codecs, including maps with
// unknown and missing keys and records of older and newer minor versions.
#include <gtest/gtest.h>

#include "tests/protocol/step_codec_fixtures.h"

namespace zinfer::protocol {
namespace {

using namespace testing;

template <class T>
void expect_both_codecs_agree(const T& msg) {
  const std::string ours = encode(msg);
  // Byte for byte what msgpack-c writes for the same struct.
  ASSERT_EQ(ours, msgpack_c_encode(msg));
  // Ours reads it back ...
  Frame f = open(ours);
  EXPECT_EQ(f.type(), T::kType);
  EXPECT_EQ(f.minor(), kVersionMinor);
  expect_same(f.as<T>(), msg);
  // ... and so does msgpack-c.
  expect_same(msgpack_c_decode<T>(ours), msg);
}

// Invariant 7 (docs/architecture.md): one message, one envelope; every message struct round-trips.
TEST(StepCodec, StepPlanAtOddSizes) {
  for (size_t n : {0, 1, 17, 257}) {
    SCOPED_TRACE(std::to_string(n) + " sequences");
    expect_both_codecs_agree(make_plan(n, static_cast<uint32_t>(n) + 1));
  }
}

TEST(StepCodec, StepPlanWithLongBlockTables) {
  StepPlan p = make_plan(3, 99, 0);
  for (auto& s : p.seqs) {
    s.block_table.clear();
    for (int i = 0; i < 5000; ++i) s.block_table.push_back(i * 13);  // array16, uint16 and fixints
  }
  p.seqs[1].block_table.resize(70000, 123456);  // array32, uint32
  expect_both_codecs_agree(p);
}

TEST(StepCodec, StepResultTokenDeltaAndBatchAtOddSizes) {
  for (size_t n : {0, 1, 17, 257}) {
    SCOPED_TRACE(std::to_string(n) + " records");
    expect_both_codecs_agree(make_result(n, static_cast<uint32_t>(n) + 7));
    expect_both_codecs_agree(make_batch(n, static_cast<uint32_t>(n) + 3));
  }
  std::mt19937 rng(5);
  for (int i = 0; i < 50; ++i) expect_both_codecs_agree(make_delta(rng));
}

TEST(StepCodec, TopLogprobsSurvive) {
  TokenDelta d;
  d.request_id = 1;
  d.token_ids = {5, 6};
  d.logprobs = {-0.5f, -1.25f};
  d.top_logprobs = {{{5, -0.5f}, {7, -2.0f}}, {{6, -1.25f}, {-9, std::numeric_limits<float>::quiet_NaN()}}};
  expect_both_codecs_agree(d);
  StepResult r;
  r.outputs.push_back({42, 6, -1.25f, {{6, -1.25f}, {100000, -3.5f}}});
  expect_both_codecs_agree(r);
}

// Invariant 8 (docs/architecture.md): a peer of another minor version is read; anything else is a ProtocolError.
// A StepPlan map written by hand with msgpack-c: keys in another order, a key this version does
// not know (holding a nested value), keys missing, a SeqWork of an older minor version (5 fields)
// and one of a newer (17 fields).
TEST(StepCodec, PlanMapWithUnknownAndMissingKeysAndRecordsOfOtherVersions) {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(buf);
  pk.pack_array(4);
  pk.pack(1);
  pk.pack(7);  // a newer minor version
  pk.pack(static_cast<uint16_t>(MessageType::kStepPlan));
  pk.pack_map(4);
  pk.pack(std::string("future_field"));
  pk.pack(std::map<std::string, std::vector<double>>{{"x", {1.5, -2}}});
  pk.pack(std::string("seqs"));
  pk.pack_array(2);
  pk.pack_array(5);  // older: seq_id, token_ids, use_last_sampled, num_tokens, start_pos
  pk.pack(uint64_t{11});
  pk.pack(std::vector<int32_t>{1, 2, 3});
  pk.pack(false);
  pk.pack(3);
  pk.pack(-7);
  pk.pack_array(17);  // newer: all 15 fields and two more
  pk.pack(uint64_t{12});
  pk.pack(std::vector<int32_t>{});
  pk.pack(true);
  pk.pack(1);
  pk.pack(99);
  pk.pack(std::vector<int32_t>{4, 5});
  pk.pack(true);
  pk.pack(0.5f);
  pk.pack(0.25f);
  pk.pack(40);
  pk.pack(int64_t{-1});
  pk.pack(8);
  pk.pack(2);
  pk.pack(1);  // block_table_start
  pk.pack_nil();  // rules
  pk.pack(std::string("a new field"));
  pk.pack(std::vector<std::string>{"and", "another"});
  pk.pack(std::string("finished"));
  pk.pack(std::vector<uint64_t>{9, 10});
  pk.pack(std::string("step_id"));
  pk.pack(uint64_t{1234567890123ull});
  const std::string frame(buf.data(), buf.size());

  auto check = [](const StepPlan& p) {
    EXPECT_EQ(p.step_id, 1234567890123ull);
    ASSERT_EQ(p.seqs.size(), 2u);
    EXPECT_EQ(p.seqs[0].seq_id, 11u);
    EXPECT_EQ(p.seqs[0].token_ids, (std::vector<int32_t>{1, 2, 3}));
    EXPECT_EQ(p.seqs[0].num_tokens, 3);
    EXPECT_EQ(p.seqs[0].start_pos, -7);
    EXPECT_TRUE(p.seqs[0].block_table.empty());  // missing trailing fields: defaults
    EXPECT_FALSE(p.seqs[0].sample);
    EXPECT_EQ(p.seqs[0].temperature, 1.0f);
    EXPECT_EQ(p.seqs[0].top_k, -1);
    EXPECT_EQ(p.seqs[0].seed, -1);
    EXPECT_EQ(p.seqs[1].seq_id, 12u);
    EXPECT_TRUE(p.seqs[1].use_last_sampled);
    EXPECT_EQ(p.seqs[1].block_table, (std::vector<int32_t>{4, 5}));
    EXPECT_EQ(p.seqs[1].temperature, 0.5f);
    EXPECT_EQ(p.seqs[1].top_p, 0.25f);
    EXPECT_EQ(p.seqs[1].top_k, 40);
    EXPECT_EQ(p.seqs[1].sample_index, 8);
    EXPECT_EQ(p.seqs[1].top_logprobs, 2);
    EXPECT_EQ(p.seqs[0].block_table_start, 0);
    EXPECT_EQ(p.seqs[1].block_table_start, 1);
    EXPECT_TRUE(p.swap_out.empty());  // missing keys: defaults
    EXPECT_TRUE(p.copy.empty());
    EXPECT_EQ(p.finished, (std::vector<uint64_t>{9, 10}));
  };
  SCOPED_TRACE("hand-written decoder");
  check(decode<StepPlan>(frame));
  SCOPED_TRACE("msgpack-c, for reference: the contract is the same");
  check(msgpack_c_decode<StepPlan>(frame));
}

TEST(StepCodec, ResultAndBatchMapsWithUnknownAndMissingKeys) {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(buf);
  pk.pack_array(4);
  pk.pack(1);
  pk.pack(0);
  pk.pack(static_cast<uint16_t>(MessageType::kStepResult));
  pk.pack_map(2);
  pk.pack(std::string("outputs"));
  pk.pack_array(1);
  pk.pack_array(2);  // seq_id and token only
  pk.pack(uint64_t{3});
  pk.pack(77);
  pk.pack(std::string("gpu_temperature"));
  pk.pack(61.5);
  StepResult r = decode<StepResult>(std::string(buf.data(), buf.size()));
  EXPECT_EQ(r.step_id, 0u);
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_EQ(r.outputs[0].seq_id, 3u);
  EXPECT_EQ(r.outputs[0].token, 77);
  EXPECT_EQ(r.outputs[0].logprob, 0.0f);
  EXPECT_TRUE(r.error.empty());

  msgpack::sbuffer b2;
  msgpack::packer<msgpack::sbuffer> p2(b2);
  p2.pack_array(4);
  p2.pack(1);
  p2.pack(1);
  p2.pack(static_cast<uint16_t>(MessageType::kTokenDeltaBatch));
  p2.pack_map(2);
  p2.pack(std::string("step"));
  p2.pack(5);
  p2.pack(std::string("deltas"));
  p2.pack_array(2);
  TokenDelta d;
  d.request_id = 8;
  d.token_ids = {1};
  p2.pack(d);
  p2.pack_array(2);  // an older, shorter TokenDelta
  p2.pack(uint64_t{9});
  p2.pack(1);
  TokenDeltaBatch batch = decode<TokenDeltaBatch>(std::string(b2.data(), b2.size()));
  ASSERT_EQ(batch.deltas.size(), 2u);
  EXPECT_EQ(batch.deltas[0].request_id, 8u);
  EXPECT_EQ(batch.deltas[0].token_ids, (std::vector<int32_t>{1}));
  EXPECT_EQ(batch.deltas[1].request_id, 9u);
  EXPECT_EQ(batch.deltas[1].index, 1);
  EXPECT_TRUE(batch.deltas[1].token_ids.empty());
}

TEST(StepCodec, FrameOwnsItsBytes) {
  const StepPlan plan = make_plan(17, 3);
  Frame kept;
  {
    std::string bytes = encode(plan);
    kept = open(bytes);
    bytes.assign(bytes.size(), '\0');  // the buffer it was opened from is gone
  }
  expect_same(kept.as<StepPlan>(), plan);

  Frame owned = open_owned(encode(plan));
  Frame copy = owned;
  Frame moved = std::move(owned);
  expect_same(copy.as<StepPlan>(), plan);
  expect_same(moved.as<StepPlan>(), plan);

  // A small frame (in std::string's inline buffer, which moves by copying) stays valid too.
  TokenDelta d;
  d.request_id = 4;
  Frame small = open_owned(encode(d));
  Frame small_moved = std::move(small);
  EXPECT_EQ(small_moved.as<TokenDelta>().request_id, 4u);
  // The generic view still works for tools that walk the tree.
  EXPECT_EQ(small_moved.payload().type, msgpack::type::ARRAY);
}

}  // namespace
}  // namespace zinfer::protocol
