// Every message struct of protocol/messages.h survives encode -> open -> as<T> with all fields.
#include <gtest/gtest.h>

#include "protocol/envelope.h"

namespace zinfer::protocol {
namespace {

SamplingParams sample_params() {
  SamplingParams s;
  s.max_tokens = 77;
  s.min_tokens = 3;
  s.temperature = 0.7f;
  s.top_p = 0.9f;
  s.top_k = 40;
  s.seed = 1234567890123ll;
  s.n = 3;
  s.stop = {"\n\n", "END", "ü"};
  s.stop_token_ids = {2, 151645};
  s.ignore_eos = true;
  s.logprobs = true;
  s.top_logprobs = 5;
  s.skip_special_tokens = false;
  s.repetition_penalty = 1.25f;
  s.frequency_penalty = -0.5f;
  s.presence_penalty = 2.0f;
  s.min_p = 0.05f;
  s.logit_bias = {{50256, -100.0f}, {7, 3.5f}};
  s.allowed_token_ids = {1, 5, 151643};
  s.bad_words = {"foo", " bar baz"};
  s.bad_words_token_ids = {{9}, {10, 11}};
  s.truncate_prompt_tokens = -1;
  s.include_stop_str_in_output = true;
  s.structured = StructuredOutput{StructuredKind::kChoice, "", {"yes", "no \xe4\xb8\x96"}};
  s.prompt_logprobs = 4;
  s.return_prompt = true;
  return s;
}

void expect_same(const SamplingParams& a, const SamplingParams& b) {
  EXPECT_EQ(a.max_tokens, b.max_tokens);
  EXPECT_EQ(a.min_tokens, b.min_tokens);
  EXPECT_FLOAT_EQ(a.temperature, b.temperature);
  EXPECT_FLOAT_EQ(a.top_p, b.top_p);
  EXPECT_EQ(a.top_k, b.top_k);
  EXPECT_EQ(a.seed, b.seed);
  EXPECT_EQ(a.n, b.n);
  EXPECT_EQ(a.stop, b.stop);
  EXPECT_EQ(a.stop_token_ids, b.stop_token_ids);
  EXPECT_EQ(a.ignore_eos, b.ignore_eos);
  EXPECT_EQ(a.logprobs, b.logprobs);
  EXPECT_EQ(a.top_logprobs, b.top_logprobs);
  EXPECT_EQ(a.skip_special_tokens, b.skip_special_tokens);
  EXPECT_FLOAT_EQ(a.repetition_penalty, b.repetition_penalty);
  EXPECT_FLOAT_EQ(a.frequency_penalty, b.frequency_penalty);
  EXPECT_FLOAT_EQ(a.presence_penalty, b.presence_penalty);
  EXPECT_FLOAT_EQ(a.min_p, b.min_p);
  ASSERT_EQ(a.logit_bias.size(), b.logit_bias.size());
  for (size_t i = 0; i < a.logit_bias.size(); ++i) {
    EXPECT_EQ(a.logit_bias[i].token, b.logit_bias[i].token);
    EXPECT_FLOAT_EQ(a.logit_bias[i].bias, b.logit_bias[i].bias);
  }
  EXPECT_EQ(a.allowed_token_ids, b.allowed_token_ids);
  EXPECT_EQ(a.bad_words, b.bad_words);
  EXPECT_EQ(a.bad_words_token_ids, b.bad_words_token_ids);
  EXPECT_EQ(a.truncate_prompt_tokens, b.truncate_prompt_tokens);
  EXPECT_EQ(a.include_stop_str_in_output, b.include_stop_str_in_output);
  ASSERT_EQ(a.structured.has_value(), b.structured.has_value());
  if (a.structured) {
    EXPECT_EQ(a.structured->kind, b.structured->kind);
    EXPECT_EQ(a.structured->text, b.structured->text);
    EXPECT_EQ(a.structured->choices, b.structured->choices);
    EXPECT_EQ(a.structured->begin_after, b.structured->begin_after);
  }
  EXPECT_EQ(a.prompt_logprobs, b.prompt_logprobs);
  EXPECT_EQ(a.return_prompt, b.return_prompt);
}

PromptLogprobs prompt_logprobs_example() {
  PromptLogprobs p;
  p.id = 77;
  p.first_position = 3;
  p.logprobs = {-0.5f, -2.25f};
  p.ranks = {1, 40};
  p.top_logprobs = {{{5, -0.5f}, {6, -1.0f}}, {}};
  return p;
}

void expect_same(const PromptLogprobs& a, const PromptLogprobs& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.first_position, b.first_position);
  EXPECT_EQ(a.logprobs, b.logprobs);
  EXPECT_EQ(a.ranks, b.ranks);
  ASSERT_EQ(a.top_logprobs.size(), b.top_logprobs.size());
  for (size_t i = 0; i < a.top_logprobs.size(); ++i) {
    ASSERT_EQ(a.top_logprobs[i].size(), b.top_logprobs[i].size());
    for (size_t k = 0; k < a.top_logprobs[i].size(); ++k) {
      EXPECT_EQ(a.top_logprobs[i][k].token, b.top_logprobs[i][k].token);
      EXPECT_FLOAT_EQ(a.top_logprobs[i][k].logprob, b.top_logprobs[i][k].logprob);
    }
  }
}

template <class T>
T roundtrip(const T& msg) {
  std::string bytes = encode(msg);
  Frame f = open(bytes);
  EXPECT_EQ(f.type(), T::kType);
  EXPECT_EQ(f.major(), kVersionMajor);
  EXPECT_EQ(f.minor(), kVersionMinor);
  return f.as<T>();
}

// Invariant 7 (docs/architecture.md): one message, one envelope; every message struct round-trips.
TEST(ProtocolRoundTrip, GenerateRequest) {
  GenerateRequest m;
  m.request_id = 0xfedcba9876543210ull;
  m.model = "default";
  m.prompt = "Hello, 世界 \x01";
  m.prompt_ids = {1, 2, 3, 2147483647};
  m.messages = {{"system", "be brief"}, {"user", "hi\n"}};
  ChatMessage call;
  call.role = "assistant";
  call.tool_calls = {{"call_1", "get_weather", "{\"city\": \"Paris\"}"}, {"call_2", "f", "{}"}};
  ChatMessage answer;
  answer.role = "tool";
  answer.content = "20C";
  answer.tool_call_id = "call_1";
  answer.name = "get_weather";
  m.messages.push_back(call);
  m.messages.push_back(answer);
  m.tools = R"([{"type":"function","function":{"name":"get_weather","parameters":{}}}])";
  m.is_chat = true;
  m.add_generation_prompt = false;
  m.enable_thinking = false;
  m.sampling = sample_params();
  m.priority = -5;
  m.arrival_ns = 123456789012345;
  m.tenant = "team \xe4\xb8\x96";
  m.predicted_output_tokens = 2147483647;
  m.api_key = "sk-\x7f key";
  m.add_special_tokens = 0;
  m.cache_salt = "salt \x01";
  m.continue_final_message = true;
  m.chat_template = "{{ messages[0].content }}";
  m.chat_template_kwargs = R"({"style":"terse"})";
  auto r = roundtrip(m);
  EXPECT_EQ(r.cache_salt, m.cache_salt);
  EXPECT_TRUE(r.continue_final_message);
  EXPECT_EQ(r.chat_template, m.chat_template);
  EXPECT_EQ(r.chat_template_kwargs, m.chat_template_kwargs);
  EXPECT_EQ(r.request_id, m.request_id);
  EXPECT_EQ(r.model, m.model);
  EXPECT_EQ(r.prompt, m.prompt);
  EXPECT_EQ(r.prompt_ids, m.prompt_ids);
  ASSERT_EQ(r.messages.size(), 4u);
  EXPECT_EQ(r.messages[1].role, "user");
  EXPECT_EQ(r.messages[1].content, "hi\n");
  ASSERT_EQ(r.messages[2].tool_calls.size(), 2u);
  EXPECT_EQ(r.messages[2].tool_calls[0].id, "call_1");
  EXPECT_EQ(r.messages[2].tool_calls[0].name, "get_weather");
  EXPECT_EQ(r.messages[2].tool_calls[0].arguments, call.tool_calls[0].arguments);
  EXPECT_EQ(r.messages[2].tool_calls[1].name, "f");
  EXPECT_EQ(r.messages[3].tool_call_id, "call_1");
  EXPECT_EQ(r.messages[3].name, "get_weather");
  EXPECT_EQ(r.tools, m.tools);
  EXPECT_TRUE(r.is_chat);
  EXPECT_FALSE(r.add_generation_prompt);
  EXPECT_FALSE(r.enable_thinking);
  expect_same(r.sampling, m.sampling);
  EXPECT_EQ(r.priority, -5);
  EXPECT_EQ(r.arrival_ns, m.arrival_ns);
  EXPECT_EQ(r.tenant, m.tenant);
  EXPECT_EQ(r.predicted_output_tokens, 2147483647);
  EXPECT_EQ(r.api_key, m.api_key);
  EXPECT_EQ(r.add_special_tokens, 0);
}

TEST(ProtocolRoundTrip, TokenizeRequestAndReply) {
  TokenizeRequest m;
  m.request_id = 77;
  m.detokenize = true;
  m.prompt = "héllo";
  m.messages = {{"user", "hi"}};
  m.is_chat = true;
  m.add_generation_prompt = false;
  m.enable_thinking = false;
  m.add_special_tokens = 1;
  m.return_token_strs = true;
  m.tokens = {4, 5, 2147483647};
  m.chat_template_kwargs = R"({"a":1})";
  m.tools = R"([{"type":"function"}])";
  m.continue_final_message = true;
  m.chat_template = "{{ 1 }}";
  auto r = roundtrip(m);
  EXPECT_EQ(r.chat_template_kwargs, m.chat_template_kwargs);
  EXPECT_EQ(r.tools, m.tools);
  EXPECT_TRUE(r.continue_final_message);
  EXPECT_EQ(r.chat_template, m.chat_template);
  EXPECT_EQ(r.request_id, 77u);
  EXPECT_TRUE(r.detokenize);
  EXPECT_EQ(r.prompt, m.prompt);
  ASSERT_EQ(r.messages.size(), 1u);
  EXPECT_EQ(r.messages[0].content, "hi");
  EXPECT_TRUE(r.is_chat);
  EXPECT_FALSE(r.add_generation_prompt);
  EXPECT_FALSE(r.enable_thinking);
  EXPECT_EQ(r.add_special_tokens, 1);
  EXPECT_TRUE(r.return_token_strs);
  EXPECT_EQ(r.tokens, m.tokens);

  TokenizeReply a;
  a.request_id = 77;
  a.tokens = {1, 2};
  a.token_strs = {"\u0120a", "b"};
  a.text = "ab";
  a.max_model_len = 4096;
  auto ra = roundtrip(a);
  EXPECT_EQ(ra.request_id, 77u);
  EXPECT_EQ(ra.tokens, a.tokens);
  EXPECT_EQ(ra.token_strs, a.token_strs);
  EXPECT_EQ(ra.text, "ab");
  EXPECT_EQ(ra.max_model_len, 4096);
}

TEST(ProtocolRoundTrip, TokenizedRequest) {
  TokenizedRequest m;
  m.request_id = 9;
  m.prompt_ids = {5, 6, 7};
  m.sampling = sample_params();
  m.priority = 2;
  m.arrival_ns = 42;
  m.tenant = "b";
  m.predicted_output_tokens = 17;
  m.cache_salt = "s";
  auto r = roundtrip(m);
  EXPECT_EQ(r.cache_salt, "s");
  EXPECT_EQ(r.request_id, 9u);
  EXPECT_EQ(r.prompt_ids, m.prompt_ids);
  expect_same(r.sampling, m.sampling);
  EXPECT_EQ(r.priority, 2);
  EXPECT_EQ(r.arrival_ns, 42);
  EXPECT_EQ(r.tenant, "b");
  EXPECT_EQ(r.predicted_output_tokens, 17);
}

// A 1.2 peer does not send the 1.3 fields: they take their defaults (anonymous, no prediction).
TEST(ProtocolRoundTrip, RequestsWithoutThe13FieldsTakeTheDefaults) {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(buf);
  pk.pack_array(4);
  pk.pack(1);
  pk.pack(2);
  pk.pack(static_cast<uint16_t>(MessageType::kTokenizedRequest));
  pk.pack_map(2);
  pk.pack(std::string("request_id"));
  pk.pack(7);
  pk.pack(std::string("prompt_ids"));
  pk.pack(std::vector<int32_t>{1, 2});
  Frame f = open(std::string_view(buf.data(), buf.size()));
  auto r = f.as<TokenizedRequest>();
  EXPECT_EQ(r.request_id, 7u);
  EXPECT_EQ(r.tenant, "");
  EXPECT_EQ(r.predicted_output_tokens, 0);
}

TEST(ProtocolRoundTrip, AbortAndErrorAndPing) {
  auto a = roundtrip(Abort{11, "stop", 2});
  EXPECT_EQ(a.request_id, 11u);
  EXPECT_EQ(a.reason, "stop");
  EXPECT_EQ(a.index, 2);
  EXPECT_EQ(roundtrip(ExecutorInfoRequest{6}).seq, 6u);
  ExecutorInfo info{"cuda", 16, 1000, 200, 4096, 151936, {151645, 151643}, ""};
  auto ri = roundtrip(info);
  EXPECT_EQ(ri.backend, "cuda");
  EXPECT_EQ(ri.block_size, 16);
  EXPECT_EQ(ri.num_gpu_blocks, 1000);
  EXPECT_EQ(ri.num_cpu_blocks, 200);
  EXPECT_EQ(ri.max_model_len, 4096);
  EXPECT_EQ(ri.vocab_size, 151936);
  EXPECT_EQ(ri.eos_token_ids, info.eos_token_ids);
  auto e = roundtrip(ErrorReply{12, 413, "too_large", "prompt has 5000 tokens"});
  EXPECT_EQ(e.request_id, 12u);
  EXPECT_EQ(e.code, 413);
  EXPECT_EQ(e.kind, "too_large");
  EXPECT_EQ(e.message, "prompt has 5000 tokens");
  auto p = roundtrip(Ping{3, -7});
  EXPECT_EQ(p.seq, 3u);
  EXPECT_EQ(p.sent_ns, -7);
  auto q = roundtrip(Pong{4, 8});
  EXPECT_EQ(q.seq, 4u);
  EXPECT_EQ(q.sent_ns, 8);
  auto b = roundtrip(BenchPayload{5, std::string(8192, 'x')});
  EXPECT_EQ(b.seq, 5u);
  EXPECT_EQ(b.blob.size(), 8192u);
  EXPECT_EQ(roundtrip(StatsRequest{77}).seq, 77u);
}

TEST(ProtocolRoundTrip, RequestStartTokenDeltaTextDelta) {
  RequestStart s{21, 2, 130, {"a", "bc"}, false, true, {7, 151645}, true, {1, 2, 3}};
  auto rs = roundtrip(s);
  EXPECT_EQ(rs.prompt_ids, s.prompt_ids);
  EXPECT_EQ(rs.stop_token_ids, s.stop_token_ids);
  EXPECT_TRUE(rs.include_stop_str_in_output);
  EXPECT_EQ(rs.request_id, 21u);
  EXPECT_EQ(rs.n, 2);
  EXPECT_EQ(rs.prompt_tokens, 130);
  EXPECT_EQ(rs.stop, s.stop);
  EXPECT_FALSE(rs.skip_special_tokens);
  EXPECT_TRUE(rs.logprobs);

  TokenDelta d;
  d.request_id = 21;
  d.index = 1;
  d.token_ids = {9, 8};
  d.logprobs = {-0.5f, -1.25f};
  d.top_logprobs = {{{9, -0.5f}, {3, -2.0f}}, {{8, -1.25f}}};
  d.finish_reason = "length";
  d.prompt_tokens = 130;
  d.completion_tokens = 16;
  d.cached_tokens = 112;
  auto rd = roundtrip(d);
  EXPECT_EQ(rd.token_ids, d.token_ids);
  EXPECT_EQ(rd.logprobs, d.logprobs);
  ASSERT_EQ(rd.top_logprobs.size(), 2u);
  EXPECT_EQ(rd.top_logprobs[0][1].token, 3);
  EXPECT_FLOAT_EQ(rd.top_logprobs[0][1].logprob, -2.0f);
  EXPECT_EQ(rd.finish_reason, "length");
  EXPECT_EQ(rd.index, 1);
  EXPECT_EQ(rd.completion_tokens, 16);
  EXPECT_EQ(rd.cached_tokens, 112);

  TextDelta t;
  t.request_id = 21;
  t.index = 1;
  t.text = "héllo";
  t.token_ids = {9};
  t.logprobs = {-0.5f};
  t.top_logprobs = {{{9, -0.5f}}};
  t.finish_reason = "stop";
  t.prompt_tokens = 5;
  t.completion_tokens = 6;
  t.cached_tokens = 0;
  t.stop_string = "END";
  t.stop_token = 151645;
  t.prompt_token_ids = {4, 5};
  t.prompt_text = "ab";
  t.prompt_logprobs = prompt_logprobs_example();
  t.token_texts = {{9, "x"}, {226, "\xe2"}};
  auto rt = roundtrip(t);
  EXPECT_EQ(rt.prompt_token_ids, t.prompt_token_ids);
  EXPECT_EQ(rt.prompt_text, "ab");
  ASSERT_TRUE(rt.prompt_logprobs.has_value());
  expect_same(*rt.prompt_logprobs, *t.prompt_logprobs);
  EXPECT_EQ(rt.token_texts, t.token_texts);
  EXPECT_FALSE(roundtrip(TextDelta{}).prompt_logprobs.has_value());

  TokenDeltaBatch batch;
  batch.deltas = {d};
  batch.prompt_logprobs = {prompt_logprobs_example()};
  auto rb = roundtrip(batch);
  ASSERT_EQ(rb.deltas.size(), 1u);
  EXPECT_EQ(rb.deltas[0].token_ids, d.token_ids);
  ASSERT_EQ(rb.prompt_logprobs.size(), 1u);
  expect_same(rb.prompt_logprobs[0], batch.prompt_logprobs[0]);
  EXPECT_EQ(rt.stop_string, "END");
  EXPECT_EQ(rt.stop_token, 151645);
  EXPECT_EQ(rt.text, "héllo");
  EXPECT_EQ(rt.token_ids, t.token_ids);
  EXPECT_EQ(rt.finish_reason, "stop");
  EXPECT_EQ(rt.prompt_tokens, 5);
  EXPECT_EQ(rt.completion_tokens, 6);
  EXPECT_EQ(rt.top_logprobs[0][0].token, 9);
}

TEST(ProtocolRoundTrip, StepPlanAndResult) {
  StepPlan p;
  p.step_id = 1000;
  SeqWork w;
  w.seq_id = 5;
  w.token_ids = {1, 2, 3};
  w.num_tokens = 3;
  w.start_pos = 32;
  w.block_table = {7, 9, 11};
  w.sample = true;
  w.temperature = 0.0f;
  w.top_p = 0.5f;
  w.top_k = 3;
  w.seed = 99;
  w.sample_index = 4;
  w.top_logprobs = 2;
  w.rules = SamplingRules{};
  w.rules->repetition_penalty = 1.5f;
  w.rules->frequency_penalty = 0.25f;
  w.rules->presence_penalty = -1.0f;
  w.rules->min_p = 0.1f;
  w.rules->logit_bias = {{3, 2.0f}};
  w.rules->allowed_token_ids = {1, 2, 3};
  w.rules->bad_words = {{4}, {5, 6}};
  w.rules->min_tokens = 4;
  w.rules->min_tokens_stop_ids = {2};
  w.rules->prompt_ids = {1, 2, 3, 3};
  w.rules->output_ids = {6};
  w.rules->structured = StructuredOutput{StructuredKind::kJsonSchema, R"({"type":"integer"})", {}, "</think>"};
  SeqWork d;
  d.seq_id = 6;
  d.use_last_sampled = true;
  d.num_tokens = 1;
  d.start_pos = 70;
  d.block_table = {1, 2, 3, 4, 5};
  d.sample = true;
  p.seqs = {w, d};
  p.swap_out = {{1, 2}};
  p.swap_in = {{3, 4}};
  p.copy = {{5, 6}, {7, 8}};
  p.finished = {1, 2, 3};
  p.prompt_scoring = {{5, 2, 17}, {6, 0, -1}};
  auto r = roundtrip(p);
  ASSERT_EQ(r.prompt_scoring.size(), 2u);
  EXPECT_EQ(r.prompt_scoring[0].seq_id, 5u);
  EXPECT_EQ(r.prompt_scoring[0].top_logprobs, 2);
  EXPECT_EQ(r.prompt_scoring[0].next_token, 17);
  EXPECT_EQ(r.prompt_scoring[1].next_token, -1);
  // Decoded into a plan that had prompt scoring, a plan without any has none.
  StepPlan reused = r;
  StepPlan plain;
  plain.step_id = 1001;
  open(encode(plain)).as_into(reused);
  EXPECT_TRUE(reused.prompt_scoring.empty());
  EXPECT_EQ(r.step_id, 1000u);
  ASSERT_EQ(r.seqs.size(), 2u);
  EXPECT_EQ(r.seqs[0].token_ids, w.token_ids);
  EXPECT_EQ(r.seqs[0].start_pos, 32);
  EXPECT_EQ(r.seqs[0].block_table, w.block_table);
  EXPECT_FLOAT_EQ(r.seqs[0].temperature, 0.0f);
  EXPECT_FLOAT_EQ(r.seqs[0].top_p, 0.5f);
  EXPECT_EQ(r.seqs[0].top_k, 3);
  EXPECT_EQ(r.seqs[0].seed, 99);
  EXPECT_EQ(r.seqs[0].sample_index, 4);
  EXPECT_EQ(r.seqs[0].top_logprobs, 2);
  ASSERT_TRUE(r.seqs[0].rules.has_value());
  EXPECT_FLOAT_EQ(r.seqs[0].rules->repetition_penalty, 1.5f);
  EXPECT_FLOAT_EQ(r.seqs[0].rules->frequency_penalty, 0.25f);
  EXPECT_FLOAT_EQ(r.seqs[0].rules->presence_penalty, -1.0f);
  EXPECT_FLOAT_EQ(r.seqs[0].rules->min_p, 0.1f);
  ASSERT_EQ(r.seqs[0].rules->logit_bias.size(), 1u);
  EXPECT_EQ(r.seqs[0].rules->logit_bias[0].token, 3);
  EXPECT_FLOAT_EQ(r.seqs[0].rules->logit_bias[0].bias, 2.0f);
  EXPECT_EQ(r.seqs[0].rules->allowed_token_ids, w.rules->allowed_token_ids);
  EXPECT_EQ(r.seqs[0].rules->bad_words, w.rules->bad_words);
  EXPECT_EQ(r.seqs[0].rules->min_tokens, 4);
  EXPECT_EQ(r.seqs[0].rules->min_tokens_stop_ids, w.rules->min_tokens_stop_ids);
  EXPECT_EQ(r.seqs[0].rules->prompt_ids, w.rules->prompt_ids);
  EXPECT_EQ(r.seqs[0].rules->output_ids, w.rules->output_ids);
  ASSERT_TRUE(r.seqs[0].rules->structured.has_value());
  EXPECT_EQ(r.seqs[0].rules->structured->kind, StructuredKind::kJsonSchema);
  EXPECT_EQ(r.seqs[0].rules->structured->text, w.rules->structured->text);
  EXPECT_EQ(r.seqs[0].rules->structured->begin_after, "</think>");
  EXPECT_FALSE(r.seqs[1].rules.has_value());
  EXPECT_TRUE(r.seqs[1].use_last_sampled);
  EXPECT_EQ(r.seqs[1].num_tokens, 1);
  EXPECT_EQ(r.swap_out[0].src, 1);
  EXPECT_EQ(r.swap_out[0].dst, 2);
  EXPECT_EQ(r.swap_in[0].dst, 4);
  EXPECT_EQ(r.copy.size(), 2u);
  EXPECT_EQ(r.copy[1].src, 7);
  EXPECT_EQ(r.finished, p.finished);

  StepResult res;
  res.step_id = 1000;
  res.outputs = {{5, 42, -0.25f, {{42, -0.25f}, {1, -3.0f}}}, {6, 7, -1.0f, {}}};
  res.forward_us = 5000;
  res.error = "";
  res.prompt_logprobs = {prompt_logprobs_example()};
  auto rr = roundtrip(res);
  ASSERT_EQ(rr.prompt_logprobs.size(), 1u);
  expect_same(rr.prompt_logprobs[0], res.prompt_logprobs[0]);
  ASSERT_EQ(rr.outputs.size(), 2u);
  EXPECT_EQ(rr.outputs[0].token, 42);
  EXPECT_FLOAT_EQ(rr.outputs[0].logprob, -0.25f);
  EXPECT_EQ(rr.outputs[0].top_logprobs[1].token, 1);
  EXPECT_EQ(rr.outputs[1].seq_id, 6u);
  EXPECT_EQ(rr.forward_us, 5000);
  EXPECT_TRUE(rr.seq_errors.empty());
  res.seq_errors = {{6, "structured output: the regex does not compile"}, {9, ""}};
  auto re = roundtrip(res);
  ASSERT_EQ(re.seq_errors.size(), 2u);
  EXPECT_EQ(re.seq_errors[0].seq_id, 6u);
  EXPECT_EQ(re.seq_errors[0].message, "structured output: the regex does not compile");
  EXPECT_EQ(re.seq_errors[1].seq_id, 9u);
  EXPECT_EQ(re.outputs.size(), 2u);
}

TEST(ProtocolRoundTrip, Stats) {
  Stats s;
  s.running = 3;
  s.waiting = 4;
  s.swapped = 1;
  s.kv_usage = 0.5;
  s.prefix_hit_rate = 0.25;
  s.num_preemptions = 7;
  s.prompt_tokens = 1000;
  s.generation_tokens = 2000;
  s.steps = 55;
  s.num_gpu_blocks = 100;
  s.free_gpu_blocks = 50;
  s.num_cpu_blocks = 10;
  s.free_cpu_blocks = 9;
  auto r = roundtrip(s);
  EXPECT_EQ(r.running, 3);
  EXPECT_EQ(r.waiting, 4);
  EXPECT_EQ(r.swapped, 1);
  EXPECT_DOUBLE_EQ(r.kv_usage, 0.5);
  EXPECT_DOUBLE_EQ(r.prefix_hit_rate, 0.25);
  EXPECT_EQ(r.num_preemptions, 7);
  EXPECT_EQ(r.prompt_tokens, 1000);
  EXPECT_EQ(r.generation_tokens, 2000);
  EXPECT_EQ(r.steps, 55);
  EXPECT_EQ(r.num_gpu_blocks, 100);
  EXPECT_EQ(r.free_gpu_blocks, 50);
  EXPECT_EQ(r.num_cpu_blocks, 10);
  EXPECT_EQ(r.free_cpu_blocks, 9);
}

}  // namespace
}  // namespace zinfer::protocol
