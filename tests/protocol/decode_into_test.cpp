// protocol::decode_into / Frame::as_into: a plan decoded into the previous one (the executor
// does so every step, reusing its records' memory) is the plan a fresh decode gives, whatever the
// previous one held: more or fewer sequences, longer vectors, keys the new frame leaves out,
// records of other versions; and a bad frame fails with the same error.
#include <gtest/gtest.h>

#include "tests/protocol/step_codec_fixtures.h"

namespace zinfer::protocol {
namespace {

using namespace testing;

// A plan map without "seqs" and "copy", whose one SeqWork (when `with_seqs`) has 5 fields.
std::string sparse_plan_frame(bool with_seqs) {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(buf);
  pack_envelope_header(pk, MessageType::kStepPlan);
  pk.pack_map(with_seqs ? 2 : 1);
  pk.pack(std::string("finished"));
  pk.pack(std::vector<uint64_t>{4});
  if (with_seqs) {
    pk.pack(std::string("seqs"));
    pk.pack_array(1);
    pk.pack_array(5);
    pk.pack(uint64_t{11});
    pk.pack(std::vector<int32_t>{1, 2});
    pk.pack(false);
    pk.pack(2);
    pk.pack(7);
  }
  return std::string(buf.data(), buf.size());
}

// Invariant 16 (docs/architecture.md): recycled memory is invisible.
TEST(DecodeInto, EachPlanIsWhatAFreshDecodeGives) {
  std::vector<std::string> frames;
  for (size_t n : {17, 3, 0, 257, 1, 40}) frames.push_back(encode(make_plan(n, static_cast<uint32_t>(n) + 5)));
  frames.push_back(sparse_plan_frame(true));
  frames.push_back(encode(make_plan(9, 2)));
  frames.push_back(sparse_plan_frame(false));
  StepPlan plan, from_frame;
  for (int round = 0; round < 2; ++round) {
    for (size_t i = 0; i < frames.size(); ++i) {
      SCOPED_TRACE("frame " + std::to_string(i));
      const StepPlan fresh = decode<StepPlan>(frames[i]);
      decode_into(frames[i], plan);
      expect_same(plan, fresh);
      open(frames[i]).as_into(from_frame);
      expect_same(from_frame, fresh);
    }
  }
}

TEST(DecodeInto, BadFramesFailAsDecodeDoes) {
  const std::string good = encode(make_plan(5, 1));
  std::vector<std::string> bad = {good.substr(0, good.size() / 2), good + '\x01', encode(make_result(2, 1))};
  StepPlan plan;
  decode_into(good, plan);
  for (const auto& frame : bad) {
    std::string expected = "no error", got = "no error";
    try {
      decode<StepPlan>(frame);
    } catch (const ProtocolError& e) {
      expected = e.what();
    }
    try {
      decode_into(frame, plan);
    } catch (const ProtocolError& e) {
      got = e.what();
    }
    EXPECT_EQ(got, expected);
    EXPECT_NE(got, "no error");
  }
  decode_into(good, plan);  // usable again after a failure
  expect_same(plan, decode<StepPlan>(good));
}

}  // namespace
}  // namespace zinfer::protocol
