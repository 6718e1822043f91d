// The fast path of the SeqWork and SeqOutput decoders (protocol/fast_cursor.h) hands any record
// it does not take in full to the checked path: records in forms a writer may legally use but
// ours does not (a positive integer as int8/int16/int32, floats as float64, arrays with 32-bit
// counts, integers at their types' limits), a record whose fast read fails at its last field
// after filling the others, and records that are errors, decode exactly as msgpack-c reads them
// or fail with the checked path's error naming the field.
#include <gtest/gtest.h>

#include "protocol/step_codec.h"
#include "tests/protocol/step_codec_fixtures.h"

namespace zinfer::protocol {
namespace {

using namespace testing;

// A SeqWork record; `last` writes its final field (block_table_start).
template <class WriteLast>
std::string seq_work_record(WriteLast&& last, bool float64 = false, bool wide_int_forms = false) {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(buf);
  pk.pack_array(14);
  if (wide_int_forms) {
    pk.pack_fix_int8(5);  // seq_id: a positive value in a signed form
  } else {
    pk.pack_fix_uint64(5);
  }
  const char array32[] = {static_cast<char>(0xdd), 0, 0, 0, 2};  // token_ids with a 32-bit count
  buf.write(array32, sizeof array32);
  pk.pack(int32_t{70000});
  pk.pack(int32_t{2147483647});
  pk.pack(false);
  if (wide_int_forms) {
    pk.pack_fix_int16(2);  // num_tokens
    pk.pack_fix_int32(300);  // start_pos
  } else {
    pk.pack(2);
    pk.pack(300);
  }
  pk.pack(std::vector<int32_t>{0, 127, 128, 255, 256, 65535, 65536});
  pk.pack(true);
  if (float64) {
    pk.pack_double(0.75);  // temperature
    pk.pack_double(-2.0);  // top_p, a whole number as a negative integer
  } else {
    pk.pack_float(0.75f);
    pk.pack(-2);
  }
  pk.pack(int32_t{-2147483647 - 1});
  pk.pack(int64_t{-9223372036854775807LL - 1});
  pk.pack(-33);
  pk.pack(-129);
  last(pk);
  return std::string(buf.data(), buf.size());
}

SeqWork expected_work() {
  SeqWork w;
  w.seq_id = 5;
  w.token_ids = {70000, 2147483647};
  w.num_tokens = 2;
  w.start_pos = 300;
  w.block_table = {0, 127, 128, 255, 256, 65535, 65536};
  w.sample = true;
  w.temperature = 0.75f;
  w.top_p = -2.0f;
  w.top_k = -2147483647 - 1;
  w.seed = -9223372036854775807LL - 1;
  w.sample_index = -33;
  w.top_logprobs = -129;
  w.block_table_start = 3;
  return w;
}

SeqWork read_work(const std::string& bytes, SeqWork into = {}) {
  WireReader r(bytes);
  read_payload(r, into);
  EXPECT_TRUE(r.at_end());
  return into;
}

TEST(FastPath, SeqWorkInOtherFormsDecodesAsTheCheckedPathReadsIt) {
  for (bool float64 : {false, true}) {
    for (bool wide : {false, true}) {
      SCOPED_TRACE(std::string(float64 ? "float64 " : "") + (wide ? "signed int forms" : ""));
      const auto bytes = seq_work_record([](auto& pk) { pk.pack(3); }, float64, wide);
      expect_same(read_work(bytes), expected_work());
      msgpack::object_handle h = msgpack::unpack(bytes.data(), bytes.size());
      expect_same(h.get().as<SeqWork>(), expected_work());
    }
  }
}

TEST(FastPath, ARecordReusedAfterAFastReadFailingAtItsLastField) {
  // Every field but the last is in the fast path's forms; the last is an int8 holding 3.
  const auto bytes = seq_work_record([](auto& pk) { pk.pack_fix_int8(3); });
  std::mt19937 rng(9);
  const SeqWork old = make_seq_work(rng, 12);
  expect_same(read_work(bytes, old), expected_work());
  expect_same(read_work(bytes), expected_work());
}

TEST(FastPath, ErrorsAreTheCheckedPathsNamingTheField) {
  auto error_of = [](const std::string& bytes) -> std::string {
    try {
      read_work(bytes);
    } catch (const ProtocolError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(error_of(seq_work_record([](auto& pk) { pk.pack(-1); })).find("block_table_start"), std::string::npos);
  EXPECT_NE(error_of(seq_work_record([](auto& pk) { pk.pack(int64_t{1} << 40); })).find("block_table_start"),
            std::string::npos);
  // Cut short inside the block table.
  const auto whole = seq_work_record([](auto& pk) { pk.pack(3); });
  EXPECT_NE(error_of(whole.substr(0, 34)).find("block_table"), std::string::npos) << error_of(whole.substr(0, 34));
}

TEST(FastPath, SeqOutputsWithAndWithoutAlternatives) {
  StepResult r;
  r.step_id = 3;
  r.outputs.push_back({1, 5, -0.5f, {}});
  r.outputs.push_back({2, 6, 0.0f, {{6, 0.0f}, {7, -1.5f}}});
  r.outputs.push_back({3, -4, -3.0f, {}});  // a negative token and a whole negative logprob
  r.outputs.push_back({(uint64_t{1} << 40), 2147483647, 1e-30f, {}});
  const std::string frame = encode(r);
  ASSERT_EQ(frame, msgpack_c_encode(r));
  expect_same(decode<StepResult>(frame), r);
}

}  // namespace
}  // namespace zinfer::protocol
