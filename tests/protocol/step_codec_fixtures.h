// Shared by the step-codec tests: messages with every field set (seeded, odd sizes), msgpack-c's
// encoding of a message (the reference the hand-written codec must match byte for byte), and
// field-by-field comparisons that treat NaN as equal to NaN.
#pragma once

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "protocol/envelope.h"

namespace zinfer::protocol::testing {

// The envelope's first three elements (array of 4, version, type), packed by msgpack-c; the
// payload is the caller's to pack next.
inline void pack_envelope_header(msgpack::packer<msgpack::sbuffer>& pk, MessageType type) {
  pk.pack_array(4);
  pk.pack(kVersionMajor);
  pk.pack(kVersionMinor);
  pk.pack(static_cast<uint16_t>(type));
}

// msgpack-c's encoding of a message with its envelope (the generic path encode() takes for the
// other types).
template <class T>
std::string msgpack_c_encode(const T& msg) {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(buf);
  pack_envelope_header(pk, T::kType);
  pk.pack(msg);
  return std::string(buf.data(), buf.size());
}

// msgpack-c's decoding of a frame's payload.
template <class T>
T msgpack_c_decode(const std::string& frame) {
  msgpack::object_handle h = msgpack::unpack(frame.data(), frame.size());
  T out;
  h.get().via.array.ptr[3].convert(out);
  return out;
}

// Floats that exercise every encoding: whole numbers (packed as ints), fractions, negatives,
// huge values, NaN and the infinities.
inline float odd_float(std::mt19937& rng) {
  static const float kValues[] = {0.0f, 1.0f, 0.7f, -2.0f, -0.125f, 1e19f, -1e18f, 3.4e38f, 1e-30f,
                                  std::numeric_limits<float>::quiet_NaN(),
                                  std::numeric_limits<float>::infinity(),
                                  -std::numeric_limits<float>::infinity(), 65536.0f, -40000.5f};
  return kValues[rng() % (sizeof(kValues) / sizeof(kValues[0]))];
}

// Integers of every msgpack width, both signs.
inline int64_t odd_int(std::mt19937& rng) {
  static const int64_t kValues[] = {0,       1,          127,        128,        255,         256,
                                    65535,   65536,      2147483647, -1,         -32,         -33,
                                    -128,    -129,       -32768,     -32769,     -2147483647 - 1, 4294967296ll,
                                    -4294967297ll, INT64_MAX, INT64_MIN, 300, 4000};
  return kValues[rng() % (sizeof(kValues) / sizeof(kValues[0]))];
}

inline int32_t odd_int32(std::mt19937& rng) {
  for (;;) {
    int64_t v = odd_int(rng);
    if (v >= INT32_MIN && v <= INT32_MAX) return static_cast<int32_t>(v);
  }
}

inline SeqWork make_seq_work(std::mt19937& rng, size_t table_len) {
  SeqWork s;
  s.seq_id = (uint64_t{rng()} << 32) | rng();
  const size_t tokens = rng() % 3 == 0 ? 0 : rng() % 40;
  for (size_t i = 0; i < tokens; ++i) s.token_ids.push_back(odd_int32(rng));
  s.use_last_sampled = tokens == 0;
  s.num_tokens = s.use_last_sampled ? 1 : static_cast<int32_t>(tokens);
  s.start_pos = odd_int32(rng);
  for (size_t i = 0; i < table_len; ++i) s.block_table.push_back(static_cast<int32_t>(rng() % 70000));
  s.sample = rng() % 2 == 0;
  s.temperature = odd_float(rng);
  s.top_p = odd_float(rng);
  s.top_k = odd_int32(rng);
  s.seed = odd_int(rng);
  s.sample_index = odd_int32(rng);
  s.top_logprobs = static_cast<int32_t>(rng() % 21);
  s.block_table_start = static_cast<int32_t>(rng() % 3 == 0 ? rng() % 200 : 0);
  if (rng() % 4 == 0) {
    SamplingRules r;
    r.repetition_penalty = odd_float(rng);
    r.frequency_penalty = odd_float(rng);
    r.presence_penalty = odd_float(rng);
    r.min_p = odd_float(rng);
    r.logit_bias = {{odd_int32(rng), odd_float(rng)}, {odd_int32(rng), -100.0f}};
    r.allowed_token_ids = {odd_int32(rng), odd_int32(rng)};
    r.bad_words = {{odd_int32(rng)}, {odd_int32(rng), odd_int32(rng)}};
    r.min_tokens = odd_int32(rng);
    r.min_tokens_stop_ids = {odd_int32(rng)};
    for (size_t i = rng() % 300; i > 0; --i) r.prompt_ids.push_back(odd_int32(rng));
    r.output_ids = {odd_int32(rng)};
    s.rules = std::move(r);
  }
  return s;
}

inline StepPlan make_plan(size_t seqs, uint32_t seed, size_t max_table = 20) {
  std::mt19937 rng(seed);
  StepPlan p;
  p.step_id = (uint64_t{rng()} << 32) | rng();
  for (size_t i = 0; i < seqs; ++i) p.seqs.push_back(make_seq_work(rng, rng() % (max_table + 1)));
  for (size_t i = 0; i < seqs % 5; ++i) p.swap_out.push_back({odd_int32(rng), odd_int32(rng)});
  for (size_t i = 0; i < seqs % 3; ++i) p.swap_in.push_back({odd_int32(rng), odd_int32(rng)});
  for (size_t i = 0; i < seqs % 7; ++i) p.copy.push_back({odd_int32(rng), odd_int32(rng)});
  for (size_t i = 0; i < seqs % 4; ++i) p.finished.push_back(static_cast<uint64_t>(odd_int(rng)));
  return p;
}

inline std::vector<TopLogprob> make_top(std::mt19937& rng, size_t n) {
  std::vector<TopLogprob> top;
  for (size_t i = 0; i < n; ++i) top.push_back({odd_int32(rng), odd_float(rng)});
  return top;
}

inline StepResult make_result(size_t outputs, uint32_t seed) {
  std::mt19937 rng(seed);
  StepResult r;
  r.step_id = static_cast<uint64_t>(odd_int(rng));
  for (size_t i = 0; i < outputs; ++i) {
    SeqOutput o;
    o.seq_id = (uint64_t{rng()} << 32) | rng();
    o.token = odd_int32(rng);
    o.logprob = odd_float(rng);
    o.top_logprobs = make_top(rng, rng() % 4 == 0 ? 5 : 0);
    r.outputs.push_back(std::move(o));
  }
  r.forward_us = odd_int(rng);
  r.error = outputs % 2 ? std::string(outputs, 'e') : "";
  return r;
}

inline TokenDelta make_delta(std::mt19937& rng) {
  TokenDelta d;
  d.request_id = (uint64_t{rng()} << 32) | rng();
  d.index = odd_int32(rng);
  const size_t tokens = rng() % 4;
  const bool logprobs = rng() % 2 == 0;
  for (size_t i = 0; i < tokens; ++i) {
    d.token_ids.push_back(odd_int32(rng));
    if (logprobs) {
      d.logprobs.push_back(odd_float(rng));
      d.top_logprobs.push_back(make_top(rng, 3));
    }
  }
  static const char* kReasons[] = {"", "", "stop", "length", "abort", "error"};
  d.finish_reason = kReasons[rng() % 6];
  d.prompt_tokens = odd_int32(rng);
  d.completion_tokens = odd_int32(rng);
  d.cached_tokens = odd_int32(rng);
  return d;
}

inline TokenDeltaBatch make_batch(size_t deltas, uint32_t seed) {
  std::mt19937 rng(seed);
  TokenDeltaBatch b;
  for (size_t i = 0; i < deltas; ++i) b.deltas.push_back(make_delta(rng));
  return b;
}

// ---- comparisons ----------------------------------------------------------------------------

// Equal, or both NaN. (-0.0 travels as the integer 0, as msgpack-c packs it: compare values.)
inline bool same_float(float a, float b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

inline void expect_same(const std::vector<TopLogprob>& a, const std::vector<TopLogprob>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].token, b[i].token);
    EXPECT_TRUE(same_float(a[i].logprob, b[i].logprob)) << a[i].logprob << " vs " << b[i].logprob;
  }
}

inline void expect_same(const SeqWork& a, const SeqWork& b) {
  EXPECT_EQ(a.seq_id, b.seq_id);
  EXPECT_EQ(a.token_ids, b.token_ids);
  EXPECT_EQ(a.use_last_sampled, b.use_last_sampled);
  EXPECT_EQ(a.num_tokens, b.num_tokens);
  EXPECT_EQ(a.start_pos, b.start_pos);
  EXPECT_EQ(a.block_table, b.block_table);
  EXPECT_EQ(a.sample, b.sample);
  EXPECT_TRUE(same_float(a.temperature, b.temperature)) << a.temperature << " vs " << b.temperature;
  EXPECT_TRUE(same_float(a.top_p, b.top_p)) << a.top_p << " vs " << b.top_p;
  EXPECT_EQ(a.top_k, b.top_k);
  EXPECT_EQ(a.seed, b.seed);
  EXPECT_EQ(a.sample_index, b.sample_index);
  EXPECT_EQ(a.top_logprobs, b.top_logprobs);
  EXPECT_EQ(a.block_table_start, b.block_table_start);
  ASSERT_EQ(a.rules.has_value(), b.rules.has_value());
  if (a.rules) {
    const SamplingRules &x = *a.rules, &y = *b.rules;
    EXPECT_TRUE(same_float(x.repetition_penalty, y.repetition_penalty));
    EXPECT_TRUE(same_float(x.frequency_penalty, y.frequency_penalty));
    EXPECT_TRUE(same_float(x.presence_penalty, y.presence_penalty));
    EXPECT_TRUE(same_float(x.min_p, y.min_p));
    ASSERT_EQ(x.logit_bias.size(), y.logit_bias.size());
    for (size_t i = 0; i < x.logit_bias.size(); ++i) {
      EXPECT_EQ(x.logit_bias[i].token, y.logit_bias[i].token);
      EXPECT_TRUE(same_float(x.logit_bias[i].bias, y.logit_bias[i].bias));
    }
    EXPECT_EQ(x.allowed_token_ids, y.allowed_token_ids);
    EXPECT_EQ(x.bad_words, y.bad_words);
    EXPECT_EQ(x.min_tokens, y.min_tokens);
    EXPECT_EQ(x.min_tokens_stop_ids, y.min_tokens_stop_ids);
    EXPECT_EQ(x.prompt_ids, y.prompt_ids);
    EXPECT_EQ(x.output_ids, y.output_ids);
  }
}

inline void expect_same(const std::vector<BlockCopy>& a, const std::vector<BlockCopy>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].src, b[i].src);
    EXPECT_EQ(a[i].dst, b[i].dst);
  }
}

inline void expect_same(const StepPlan& a, const StepPlan& b) {
  EXPECT_EQ(a.step_id, b.step_id);
  ASSERT_EQ(a.seqs.size(), b.seqs.size());
  for (size_t i = 0; i < a.seqs.size(); ++i) {
    SCOPED_TRACE("seqs[" + std::to_string(i) + "]");
    expect_same(a.seqs[i], b.seqs[i]);
  }
  expect_same(a.swap_out, b.swap_out);
  expect_same(a.swap_in, b.swap_in);
  expect_same(a.copy, b.copy);
  EXPECT_EQ(a.finished, b.finished);
}

inline void expect_same(const StepResult& a, const StepResult& b) {
  EXPECT_EQ(a.step_id, b.step_id);
  ASSERT_EQ(a.outputs.size(), b.outputs.size());
  for (size_t i = 0; i < a.outputs.size(); ++i) {
    EXPECT_EQ(a.outputs[i].seq_id, b.outputs[i].seq_id);
    EXPECT_EQ(a.outputs[i].token, b.outputs[i].token);
    EXPECT_TRUE(same_float(a.outputs[i].logprob, b.outputs[i].logprob));
    expect_same(a.outputs[i].top_logprobs, b.outputs[i].top_logprobs);
  }
  EXPECT_EQ(a.forward_us, b.forward_us);
  EXPECT_EQ(a.error, b.error);
}

inline void expect_same(const TokenDelta& a, const TokenDelta& b) {
  EXPECT_EQ(a.request_id, b.request_id);
  EXPECT_EQ(a.index, b.index);
  EXPECT_EQ(a.token_ids, b.token_ids);
  ASSERT_EQ(a.logprobs.size(), b.logprobs.size());
  for (size_t i = 0; i < a.logprobs.size(); ++i) EXPECT_TRUE(same_float(a.logprobs[i], b.logprobs[i]));
  ASSERT_EQ(a.top_logprobs.size(), b.top_logprobs.size());
  for (size_t i = 0; i < a.top_logprobs.size(); ++i) expect_same(a.top_logprobs[i], b.top_logprobs[i]);
  EXPECT_EQ(a.finish_reason, b.finish_reason);
  EXPECT_EQ(a.prompt_tokens, b.prompt_tokens);
  EXPECT_EQ(a.completion_tokens, b.completion_tokens);
  EXPECT_EQ(a.cached_tokens, b.cached_tokens);
}

inline void expect_same(const TokenDeltaBatch& a, const TokenDeltaBatch& b) {
  ASSERT_EQ(a.deltas.size(), b.deltas.size());
  for (size_t i = 0; i < a.deltas.size(); ++i) {
    SCOPED_TRACE("deltas[" + std::to_string(i) + "]");
    expect_same(a.deltas[i], b.deltas[i]);
  }
}

}  // namespace zinfer::protocol::testing
