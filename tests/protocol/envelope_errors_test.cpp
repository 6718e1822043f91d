// Frames that do not decode give a typed ProtocolError, never a crash.
#include <random>

#include <gtest/gtest.h>

#include "protocol/envelope.h"

namespace zinfer::protocol {
namespace {

std::string pack_envelope(uint64_t major, uint64_t minor, uint64_t type, bool payload_is_map = true) {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(buf);
  pk.pack_array(4);
  pk.pack(major);
  pk.pack(minor);
  pk.pack(type);
  if (payload_is_map) {
    pk.pack_map(1);
    pk.pack(std::string("reason"));
    pk.pack(std::string("x"));
  } else {
    pk.pack(std::string("neither a map nor an array"));
  }
  return std::string(buf.data(), buf.size());
}

DecodeErrorKind kind_of(const std::string& bytes) {
  try {
    Frame f = open(bytes);
    (void)f.as<Abort>();
  } catch (const ProtocolError& e) {
    return e.kind();
  }
  ADD_FAILURE() << "no error";
  return DecodeErrorKind::kMalformed;
}

TEST(Envelope, GarbageIsMalformed) {
  EXPECT_EQ(kind_of(""), DecodeErrorKind::kMalformed);
  EXPECT_EQ(kind_of("\xc1"), DecodeErrorKind::kMalformed);          // never-used msgpack byte
  EXPECT_EQ(kind_of("\x94\x01"), DecodeErrorKind::kMalformed);      // truncated array
  EXPECT_EQ(kind_of("hello world"), DecodeErrorKind::kMalformed);
  EXPECT_EQ(kind_of(pack_envelope(1, 0, 12, false)), DecodeErrorKind::kMalformed);
}

// Invariant 8 (docs/architecture.md): a peer of another minor version is read; anything else is a ProtocolError.
TEST(Envelope, UnknownTypeAndNewerVersion) {
  EXPECT_EQ(kind_of(pack_envelope(1, 0, 999)), DecodeErrorKind::kUnknownType);
  EXPECT_EQ(kind_of(pack_envelope(kVersionMajor + 1, 0, 12)), DecodeErrorKind::kNewerVersion);
  // A newer *minor* version decodes: fields it added are skipped.
  EXPECT_EQ(decode<Abort>(pack_envelope(kVersionMajor, 9, 12)).reason, "x");
}

TEST(Envelope, WrongPayloadAndUnexpectedType) {
  // Abort's reason as an integer: the payload does not convert.
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(buf);
  pk.pack_array(4);
  pk.pack(1);
  pk.pack(0);
  pk.pack(12);
  pk.pack_map(1);
  pk.pack(std::string("reason"));
  pk.pack(5);
  EXPECT_EQ(kind_of(std::string(buf.data(), buf.size())), DecodeErrorKind::kWrongPayload);
  EXPECT_EQ(kind_of(encode(Ping{1, 2})), DecodeErrorKind::kUnexpectedType);
}

// Invariant 8 (docs/architecture.md): a peer of another minor version is read; anything else is a ProtocolError.
TEST(Envelope, ArrayRecordsToleratePeersOfOtherMinorVersions) {
  // A TokenDelta from an older peer with fewer fields, and from a newer one with an extra field.
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(buf);
  pk.pack_array(4);
  pk.pack(1);
  pk.pack(0);
  pk.pack(static_cast<uint16_t>(MessageType::kTokenDelta));
  pk.pack_array(3);
  pk.pack(uint64_t{77});
  pk.pack(2);
  pk.pack(std::vector<int32_t>{5, 6});
  auto d = decode<TokenDelta>(std::string(buf.data(), buf.size()));
  EXPECT_EQ(d.request_id, 77u);
  EXPECT_EQ(d.index, 2);
  EXPECT_EQ(d.token_ids, (std::vector<int32_t>{5, 6}));
  EXPECT_EQ(d.finish_reason, "");
  EXPECT_EQ(d.completion_tokens, 0);

  msgpack::sbuffer buf2;
  msgpack::packer<msgpack::sbuffer> pk2(buf2);
  pk2.pack_array(4);
  pk2.pack(1);
  pk2.pack(3);
  pk2.pack(static_cast<uint16_t>(MessageType::kTokenDelta));
  TokenDelta full;
  full.request_id = 9;
  full.cached_tokens = 4;
  pk2.pack_array(10);
  pk2.pack(full.request_id);
  pk2.pack(full.index);
  pk2.pack(full.token_ids);
  pk2.pack(full.logprobs);
  pk2.pack(full.top_logprobs);
  pk2.pack(full.finish_reason);
  pk2.pack(full.prompt_tokens);
  pk2.pack(full.completion_tokens);
  pk2.pack(full.cached_tokens);
  pk2.pack(std::string("a field of a newer minor version"));
  auto d2 = decode<TokenDelta>(std::string(buf2.data(), buf2.size()));
  EXPECT_EQ(d2.request_id, 9u);
  EXPECT_EQ(d2.cached_tokens, 4);
}

TEST(Envelope, ErrorReplyDescribesTheProblem) {
  try {
    open("junk");
    FAIL();
  } catch (const ProtocolError& e) {
    ErrorReply r = error_reply_for(e, 5);
    EXPECT_EQ(r.code, 400);
    EXPECT_EQ(r.request_id, 5u);
    EXPECT_EQ(r.kind, "bad_frame:malformed");
    EXPECT_NE(r.message.find("malformed"), std::string::npos);
  }
}

// Invariant 25 (docs/architecture.md): no input aborts a process.
TEST(Envelope, RandomBytesNeverCrash) {
  std::mt19937 rng(7);
  std::string valid = encode(TokenDelta{});
  for (int i = 0; i < 20000; ++i) {
    std::string b = valid;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < flips; ++k) b[rng() % b.size()] = static_cast<char>(rng());
    if (rng() % 3 == 0) b.resize(rng() % (b.size() + 1));
    try {
      (void)open(b).as<TokenDelta>();
    } catch (const ProtocolError&) {
    }
  }
  SUCCEED();
}

}  // namespace
}  // namespace zinfer::protocol
