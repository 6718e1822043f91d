// WireWriter produces msgpack-c's bytes value by value; WireReader reads them back and refuses
// what does not fit, with the error kinds the envelope promises.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "protocol/wire_reader.h"
#include "protocol/wire_writer.h"
#include "tests/protocol/step_codec_fixtures.h"

namespace zinfer::protocol {
namespace {

template <class V>
std::string msgpack_c_bytes(const V& v) {
  msgpack::sbuffer buf;
  msgpack::pack(buf, v);
  return std::string(buf.data(), buf.size());
}

template <class I>
void expect_int_identical(I v) {
  WireWriter w;
  w.integer(v);
  EXPECT_EQ(w.take(), msgpack_c_bytes(v)) << "value " << +v;
}

template <class I>
void check_width(std::initializer_list<int64_t> values) {
  for (int64_t v : values) {
    if (v < static_cast<int64_t>(std::numeric_limits<I>::min())) continue;
    if (v >= 0 && static_cast<uint64_t>(v) > static_cast<uint64_t>(std::numeric_limits<I>::max())) continue;
    expect_int_identical(static_cast<I>(v));
  }
}

const std::initializer_list<int64_t> kBoundaries = {
    0, 1, 31, 32, 127, 128, 255, 256, 65535, 65536, 2147483647, 2147483648ll, 4294967295ll,
    4294967296ll, INT64_MAX, -1, -31, -32, -33, -127, -128, -129, -32767, -32768, -32769,
    -2147483647, -2147483647 - 1, -2147483649ll, INT64_MIN};

// Invariant 7 (docs/architecture.md): one message, one envelope; every message struct round-trips.
TEST(WireWriter, IntegersOfEveryWidthMatchMsgpackC) {
  check_width<int8_t>(kBoundaries);
  check_width<int16_t>(kBoundaries);
  check_width<int32_t>(kBoundaries);
  check_width<int64_t>(kBoundaries);
  check_width<uint8_t>(kBoundaries);
  check_width<uint16_t>(kBoundaries);
  check_width<uint32_t>(kBoundaries);
  check_width<uint64_t>(kBoundaries);
  expect_int_identical(std::numeric_limits<uint64_t>::max());
}

TEST(WireWriter, FloatsMatchMsgpackCIncludingWholeNumbersNanAndInfinity) {
  const float kFloats[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -0.5f, 0.7f, 127.0f, 128.0f, -33.0f,
                           65536.0f, 1e10f, 1e19f, -1e18f, -9.3e18f, 3.4e38f, 1e-40f,
                           std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::denorm_min()};
  for (float f : kFloats) {
    WireWriter w;
    w.float32(f);
    EXPECT_EQ(w.take(), msgpack_c_bytes(f)) << "float " << f;
  }
  const double kDoubles[] = {0.0, 1.0, -7.0, 0.1, 1e300, -1e-300, 4294967296.0, 1e19, -9.2e18,
                             std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::infinity()};
  for (double d : kDoubles) {
    WireWriter w;
    w.float64(d);
    EXPECT_EQ(w.take(), msgpack_c_bytes(d)) << "double " << d;
  }
}

TEST(WireWriter, StringsArraysMapsAndScalarsMatchMsgpackC) {
  for (size_t n : {0, 1, 31, 32, 255, 256, 65535, 65536, 70000}) {
    std::string s(n, 'x');
    WireWriter w(1);  // a hint smaller than the value: the writer grows
    w.str(s);
    EXPECT_EQ(w.take(), msgpack_c_bytes(s)) << "string of " << n;

    std::vector<int32_t> ints(n, -5);
    WireWriter wa;
    wa.int_array(ints);
    EXPECT_EQ(wa.take(), msgpack_c_bytes(ints)) << "array of " << n;

    std::vector<float> floats(n, 0.25f);
    WireWriter wf;
    wf.float_array(floats);
    EXPECT_EQ(wf.take(), msgpack_c_bytes(floats)) << "float array of " << n;
  }
  for (size_t n : {0, 15, 16, 65535, 65536}) {
    msgpack::sbuffer buf;
    msgpack::packer<msgpack::sbuffer> pk(buf);
    pk.pack_map(static_cast<uint32_t>(n));
    WireWriter w;
    w.map_header(n);
    EXPECT_EQ(w.take(), std::string(buf.data(), buf.size())) << "map header " << n;
  }
  WireWriter w;
  w.boolean(true);
  w.boolean(false);
  w.nil();
  EXPECT_EQ(w.take(), std::string("\xc3\xc2\xc0", 3));
}

TEST(WireReader, ReadsBackEveryIntegerWidthAndRefusesOutOfRange) {
  for (int64_t v : kBoundaries) {
    WireWriter w;
    w.integer(v);
    std::string bytes = w.take();
    WireReader r(bytes);
    EXPECT_EQ(r.read_int<int64_t>(), v);
    EXPECT_TRUE(r.at_end());
    // The same bytes into an int32: in range or kWrongPayload, never a silent wrap.
    WireReader r32(bytes);
    if (v >= INT32_MIN && v <= INT32_MAX) {
      EXPECT_EQ(r32.read_int<int32_t>(), v);
    } else {
      try {
        (void)r32.read_int<int32_t>();
        ADD_FAILURE() << v << " read into an int32";
      } catch (const ProtocolError& e) {
        EXPECT_EQ(e.kind(), DecodeErrorKind::kWrongPayload);
      }
    }
    WireReader ru(bytes);
    if (v < 0) {
      EXPECT_THROW((void)ru.read_int<uint64_t>(), ProtocolError);
    } else {
      EXPECT_EQ(ru.read_int<uint64_t>(), static_cast<uint64_t>(v));
    }
  }
  WireWriter w;
  w.integer(std::numeric_limits<uint64_t>::max());
  std::string big = w.take();
  WireReader r(big);
  EXPECT_EQ(r.read_int<uint64_t>(), std::numeric_limits<uint64_t>::max());
  WireReader rs(big);
  EXPECT_THROW((void)rs.read_int<int64_t>(), ProtocolError);
}

TEST(WireReader, FloatsAcceptIntegersAndBothWidthsAsMsgpackCDoes) {
  WireWriter w;
  w.float32(2.0f);   // an int on the wire
  w.float32(0.5f);
  w.float64(0.25);
  w.integer(-3);
  std::string bytes = w.take();
  WireReader r(bytes);
  EXPECT_EQ(r.read_float(), 2.0f);
  EXPECT_EQ(r.read_float(), 0.5f);
  EXPECT_EQ(r.read_float(), 0.25f);
  EXPECT_EQ(r.read_double(), -3.0);
  EXPECT_TRUE(r.at_end());
  std::string s = "\xa1x";
  WireReader rs(s);
  try {
    (void)rs.read_float();
    FAIL();
  } catch (const ProtocolError& e) {
    EXPECT_EQ(e.kind(), DecodeErrorKind::kWrongPayload);
    EXPECT_NE(std::string(e.what()).find("expected float, got str"), std::string::npos) << e.what();
  }
}

TEST(WireReader, SkipStepsOverEveryTypeAndChecksStructure) {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(buf);
  pk.pack_array(9);
  pk.pack(std::map<std::string, std::vector<int>>{{"a", {1, 2, 300}}, {"b", {}}});
  pk.pack(std::string(300, 'y'));
  pk.pack_bin(3);
  pk.pack_bin_body("abc", 3);
  pk.pack_ext(2, 7);
  pk.pack_ext_body("xy", 2);
  pk.pack_ext(4, 1);
  pk.pack_ext_body("abcd", 4);
  pk.pack_nil();
  pk.pack(1.5);
  pk.pack(-70000);
  pk.pack(true);
  pk.pack(42);  // after the array: skip() must stop before it
  std::string bytes(buf.data(), buf.size());
  WireReader r(bytes);
  r.skip();
  EXPECT_EQ(r.read_int<int>(), 42);
  EXPECT_TRUE(r.at_end());
  // Every strict prefix of the array is truncated: kMalformed, never a read past the end.
  for (size_t len = 0; len + 1 < bytes.size(); ++len) {
    WireReader p(std::string_view(bytes).substr(0, len));
    try {
      p.skip();
      ADD_FAILURE() << "prefix of " << len << " bytes skipped";
    } catch (const ProtocolError& e) {
      EXPECT_EQ(e.kind(), DecodeErrorKind::kMalformed) << len;
    }
  }
}

TEST(WireReader, RefusesHostileCountsDeepNestingAndTheNeverUsedByte) {
  // An array claiming 2^31 elements in 5 bytes: no reserve of that, kMalformed.
  std::string huge("\xdd\x80\x00\x00\x00", 5);
  WireReader r(huge);
  try {
    (void)r.read_array_header();
    FAIL();
  } catch (const ProtocolError& e) {
    EXPECT_EQ(e.kind(), DecodeErrorKind::kMalformed);
  }
  WireReader rs(huge);
  EXPECT_THROW(rs.skip(), ProtocolError);

  std::string deep(WireReader::kMaxDepth + 1, '\x91');
  deep += '\x01';
  WireReader rd(deep);
  EXPECT_THROW(rd.skip(), ProtocolError);
  std::string ok_depth(WireReader::kMaxDepth, '\x91');
  ok_depth += '\x01';
  WireReader ro(ok_depth);
  ro.skip();
  EXPECT_TRUE(ro.at_end());

  std::string never("\x92\x01\xc1", 3);
  WireReader rn(never);
  EXPECT_THROW(rn.skip(), ProtocolError);
}

}  // namespace
}  // namespace zinfer::protocol
