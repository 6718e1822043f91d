// Frames of the step path that do not decode: a typed ProtocolError naming where, never a crash
// or a read outside the frame.
#include <random>

#include <gtest/gtest.h>

#include "tests/protocol/step_codec_fixtures.h"

namespace zinfer::protocol {
namespace {

using namespace testing;

template <class T>
DecodeErrorKind error_of(std::string_view bytes, std::string* message = nullptr) {
  try {
    (void)open(bytes).as<T>();
  } catch (const ProtocolError& e) {
    if (message) *message = e.what();
    return e.kind();
  }
  ADD_FAILURE() << "no error";
  return DecodeErrorKind::kUnknownType;
}

template <class T>
void expect_every_prefix_refused(const std::string& frame) {
  for (size_t len = 0; len < frame.size(); ++len) {
    const std::string prefix = frame.substr(0, len);  // its own allocation: ASan sees overreads
    EXPECT_EQ(error_of<T>(prefix), DecodeErrorKind::kMalformed) << "prefix of " << len << " bytes";
  }
}

TEST(StepCodecErrors, EveryTruncationIsMalformed) {
  StepPlan plan = make_plan(3, 11, 4);
  plan.swap_in.push_back({1, 2});
  expect_every_prefix_refused<StepPlan>(encode(plan));
  expect_every_prefix_refused<StepResult>(encode(make_result(3, 2)));
  expect_every_prefix_refused<TokenDeltaBatch>(encode(make_batch(3, 4)));
  std::mt19937 rng(1);
  expect_every_prefix_refused<TokenDelta>(encode(make_delta(rng)));
}

TEST(StepCodecErrors, TrailingBytesAreMalformed) {
  std::string frame = encode(make_plan(2, 5));
  frame += '\x01';
  std::string message;
  EXPECT_EQ(error_of<StepPlan>(frame, &message), DecodeErrorKind::kMalformed);
  EXPECT_NE(message.find("trailing"), std::string::npos) << message;
}

TEST(StepCodecErrors, OtherTypesAreStillCheckedWholeByOpen) {
  // For the msgpack-c types open() itself refuses truncation and trailing bytes.
  const std::string frame = encode(Abort{5, "stop", 1});
  for (size_t len = 0; len < frame.size(); ++len) {
    EXPECT_THROW((void)open(frame.substr(0, len)), ProtocolError) << "prefix of " << len;
  }
  try {
    (void)open(frame + "x");
    FAIL() << "trailing byte accepted";
  } catch (const ProtocolError& e) {
    EXPECT_EQ(e.kind(), DecodeErrorKind::kMalformed);
  }
  EXPECT_EQ(decode<Abort>(frame).reason, "stop");
}

TEST(StepCodecErrors, WrongTypedFieldIsWrongPayloadAndNamed) {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(buf);
  pk.pack_array(4);
  pk.pack(1);
  pk.pack(0);
  pk.pack(static_cast<uint16_t>(MessageType::kStepPlan));
  pk.pack_map(1);
  pk.pack(std::string("seqs"));
  pk.pack_array(2);
  pk.pack(SeqWork{});
  pk.pack_array(6);
  pk.pack(uint64_t{1});
  pk.pack(std::vector<int32_t>{});
  pk.pack(false);
  pk.pack(1);
  pk.pack(0);
  pk.pack(std::vector<std::string>{"not", "ints"});  // block_table
  std::string message;
  EXPECT_EQ(error_of<StepPlan>(std::string(buf.data(), buf.size()), &message), DecodeErrorKind::kWrongPayload);
  EXPECT_NE(message.find("seqs[1].block_table"), std::string::npos) << message;
  EXPECT_NE(message.find("StepPlan"), std::string::npos) << message;
}

TEST(StepCodecErrors, OutOfRangeAndNilAndNonStringKeysAreWrongPayload) {
  auto frame_with = [](auto&& pack_payload) {
    msgpack::sbuffer buf;
    msgpack::packer<msgpack::sbuffer> pk(buf);
    pk.pack_array(4);
    pk.pack(1);
    pk.pack(0);
    pk.pack(static_cast<uint16_t>(MessageType::kStepResult));
    pack_payload(pk);
    return std::string(buf.data(), buf.size());
  };
  std::string message;
  // forward_us is an int64: 2^64-1 does not fit.
  EXPECT_EQ(error_of<StepResult>(frame_with([](auto& pk) {
              pk.pack_map(1);
              pk.pack(std::string("forward_us"));
              pk.pack(std::numeric_limits<uint64_t>::max());
            }), &message),
            DecodeErrorKind::kWrongPayload);
  EXPECT_NE(message.find("forward_us"), std::string::npos) << message;
  // SeqOutput.token is an int32.
  EXPECT_EQ(error_of<StepResult>(frame_with([](auto& pk) {
              pk.pack_map(1);
              pk.pack(std::string("outputs"));
              pk.pack_array(1);
              pk.pack_array(2);
              pk.pack(1);
              pk.pack(int64_t{1} << 40);
            }), &message),
            DecodeErrorKind::kWrongPayload);
  EXPECT_NE(message.find("outputs[0].token"), std::string::npos) << message;
  EXPECT_EQ(error_of<StepResult>(frame_with([](auto& pk) {
              pk.pack_map(1);
              pk.pack(std::string("error"));
              pk.pack_nil();
            })),
            DecodeErrorKind::kWrongPayload);
  EXPECT_EQ(error_of<StepResult>(frame_with([](auto& pk) {
              pk.pack_map(1);
              pk.pack(5);  // msgpack-c refuses a non-string key in a struct map too
              pk.pack(5);
            })),
            DecodeErrorKind::kWrongPayload);
  // A payload of the wrong shape: the struct map is an array.
  EXPECT_EQ(error_of<StepResult>(frame_with([](auto& pk) { pk.pack_array(0); })), DecodeErrorKind::kWrongPayload);
}

TEST(StepCodecErrors, HostileCountsAreRefusedWithoutAllocating) {
  // A plan whose seqs claims 2^31 - 1 records: refused before any vector is sized.
  std::string frame = std::string("\x94\x01\x00\x14\x81\xa4seqs\xdd\x7f\xff\xff\xff", 14);
  EXPECT_EQ(error_of<StepPlan>(frame), DecodeErrorKind::kMalformed);
  // And a TokenDelta whose token_ids claims 65535 ints in a few bytes.
  std::string delta = std::string("\x94\x01\x00\x0e\x93\x01\x00\xdc\xff\xff\x01\x02", 12);
  EXPECT_EQ(error_of<TokenDelta>(delta), DecodeErrorKind::kMalformed);
}

TEST(StepCodecErrors, AnotherTypesFrameIsUnexpectedType) {
  EXPECT_EQ(error_of<StepPlan>(encode(make_result(1, 1))), DecodeErrorKind::kUnexpectedType);
  EXPECT_EQ(error_of<TokenDelta>(encode(make_batch(1, 1))), DecodeErrorKind::kUnexpectedType);
}

// Invariant 25 (docs/architecture.md): no input aborts a process.
TEST(StepCodecErrors, RandomCorruptionNeverCrashes) {
  std::mt19937 rng(17);
  const std::string valid[] = {encode(make_plan(5, 1, 6)), encode(make_result(5, 1)), encode(make_batch(4, 1))};
  int decoded = 0;
  int refused = 0;
  for (int i = 0; i < 30000; ++i) {
    std::string b = valid[i % 3];
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < flips; ++k) b[rng() % b.size()] = static_cast<char>(rng());
    if (rng() % 3 == 0) b.resize(rng() % (b.size() + 1));
    try {
      Frame f = open(b);
      switch (f.type()) {
        case MessageType::kStepPlan: (void)f.as<StepPlan>(); break;
        case MessageType::kStepResult: (void)f.as<StepResult>(); break;
        case MessageType::kTokenDeltaBatch: (void)f.as<TokenDeltaBatch>(); break;
        default: (void)f.as<TokenDelta>(); break;
      }
      ++decoded;
    } catch (const ProtocolError&) {
      ++refused;
    }
  }
  // Both outcomes occur (a flipped value byte often still decodes): the loop is not vacuous.
  EXPECT_GT(decoded, 0);
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace zinfer::protocol
