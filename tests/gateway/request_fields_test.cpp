// No silent ignores (issue 20): every field of OpenAI's and vLLM's request schemas for
// /v1/completions and /v1/chat/completions is either honoured (a value other than its default
// changes the request the gateway builds) or refused with a 400 naming it. The rows below walk
// every field of both endpoints; the name lists are the schemas' (OpenAI's API reference; vLLM's
// vllm/entrypoints/openai/protocol.py, CompletionRequest and ChatCompletionRequest), so a field
// of theirs without a row fails, and so does a row the gateway's table (gateway/request_fields.h)
// lacks, or a table entry without a row.
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <msgpack.hpp>
#include <nlohmann/json.hpp>

#include "gateway/api_error.h"
#include "gateway/openai_request.h"
#include "gateway/request_fields.h"

namespace zinfer::gateway {
namespace {

using nlohmann::json;

HttpOptions options() {
  HttpOptions o;
  o.served_model_name = "m";
  o.max_model_len = 100;
  o.tool_call_parser = "hermes";  // tool_choice "auto" is served
  o.enable_auto_tool_choice = true;
  return o;
}

enum class Expect {
  kHonoured,  // the value changes the parsed request
  kRefused,   // a 400 whose param is the field
  kNotFound,  // 404 naming the field (`model` with another name)
};

struct Row {
  const char* field;
  bool completions, chat;
  json value;       // a value that asks for something
  Expect expect;
  json no_op;       // for refused fields: a value that asks for nothing and must be accepted (null: none)
  json extra = json::object();  // fields the probe needs besides (added to the base too)
};

constexpr bool C = true, NoC = false, Ch = true, NoCh = false;

const std::vector<Row>& rows() {
  static const std::vector<Row> r = {
      {"model", C, Ch, "other", Expect::kNotFound, "m"},
      {"prompt", C, NoCh, "another prompt", Expect::kHonoured, nullptr},
      {"messages", NoC, Ch, json::array({{{"role", "user"}, {"content", "other"}}}), Expect::kHonoured, nullptr},
      {"max_tokens", C, Ch, 5, Expect::kHonoured, nullptr},
      {"max_completion_tokens", NoC, Ch, 5, Expect::kHonoured, nullptr},
      {"n", C, Ch, 2, Expect::kHonoured, nullptr},
      {"seed", C, Ch, 7, Expect::kHonoured, nullptr},
      {"stop", C, Ch, "END", Expect::kHonoured, nullptr},
      {"stream", C, Ch, true, Expect::kHonoured, nullptr},
      {"stream_options", C, Ch, {{"include_usage", true}}, Expect::kHonoured, nullptr, {{"stream", true}}},
      {"temperature", C, Ch, 0.5, Expect::kHonoured, nullptr},
      {"top_p", C, Ch, 0.5, Expect::kHonoured, nullptr},
      {"user", C, Ch, "tenant-1", Expect::kHonoured, nullptr},
      {"logprobs", C, NoCh, 2, Expect::kHonoured, nullptr},
      {"logprobs", NoC, Ch, true, Expect::kHonoured, nullptr},
      {"top_logprobs", NoC, Ch, 3, Expect::kHonoured, nullptr, {{"logprobs", true}}},
      {"top_k", C, Ch, 5, Expect::kHonoured, nullptr},
      {"stop_token_ids", C, Ch, {7}, Expect::kHonoured, nullptr},
      {"include_stop_str_in_output", C, Ch, true, Expect::kHonoured, nullptr},
      {"ignore_eos", C, Ch, true, Expect::kHonoured, nullptr},
      {"min_tokens", C, Ch, 1, Expect::kHonoured, nullptr},
      {"skip_special_tokens", C, Ch, false, Expect::kHonoured, nullptr},
      {"truncate_prompt_tokens", C, Ch, 5, Expect::kHonoured, nullptr},
      {"add_special_tokens", C, NoCh, false, Expect::kHonoured, nullptr},
      {"add_special_tokens", NoC, Ch, true, Expect::kHonoured, nullptr},
      {"priority", C, Ch, 3, Expect::kHonoured, nullptr},
      {"request_id", C, Ch, "abc", Expect::kHonoured, nullptr},
      {"return_token_ids", C, Ch, true, Expect::kHonoured, nullptr},
      {"predicted_output_tokens", C, Ch, 4, Expect::kHonoured, nullptr},
      {"add_generation_prompt", NoC, Ch, false, Expect::kHonoured, nullptr},
      {"prompt_logprobs", C, Ch, 1, Expect::kHonoured, nullptr},
      {"return_tokens_as_token_ids", C, Ch, true, Expect::kHonoured, nullptr},
      {"echo", C, Ch, true, Expect::kHonoured, nullptr},
      {"continue_final_message", NoC, Ch, true, Expect::kHonoured, nullptr, {{"add_generation_prompt", false}}},
      {"chat_template_kwargs", NoC, Ch, {{"enable_thinking", false}}, Expect::kHonoured, nullptr},
      {"frequency_penalty", C, Ch, 0.5, Expect::kHonoured, nullptr},
      {"presence_penalty", C, Ch, 0.5, Expect::kHonoured, nullptr},
      {"repetition_penalty", C, Ch, 1.2, Expect::kHonoured, nullptr},
      {"min_p", C, Ch, 0.1, Expect::kHonoured, nullptr},
      {"logit_bias", C, Ch, {{"5", 10}}, Expect::kHonoured, nullptr},
      {"bad_words", C, Ch, {"bad"}, Expect::kHonoured, nullptr},
      {"allowed_token_ids", C, Ch, {1, 2}, Expect::kHonoured, nullptr},
      // Refused unless they ask for nothing.
      {"best_of", C, Ch, 2, Expect::kRefused, 1},
      {"use_beam_search", C, Ch, true, Expect::kRefused, false},
      {"length_penalty", C, Ch, 0.5, Expect::kRefused, 1.0},
      {"spaces_between_special_tokens", C, Ch, false, Expect::kRefused, true},
      // Structured output (tests/gateway/structured_request_test.cpp has the rest).
      {"response_format", C, Ch, {{"type", "json_object"}}, Expect::kHonoured, {{"type", "text"}}},
      {"structured_outputs", C, Ch, {{"regex", "a+"}}, Expect::kHonoured, json::object()},
      {"guided_json", C, Ch, {{"type", "object"}}, Expect::kHonoured, nullptr},
      {"guided_regex", C, Ch, "a+", Expect::kHonoured, nullptr},
      {"guided_choice", C, Ch, {"a", "b"}, Expect::kHonoured, nullptr},
      {"guided_grammar", C, Ch, "root ::= \"a\"", Expect::kHonoured, nullptr},
      {"structural_tag", C, Ch, "{}", Expect::kRefused, nullptr},
      {"guided_decoding_backend", C, Ch, "xgrammar", Expect::kRefused, "auto"},
      {"guided_whitespace_pattern", C, Ch, " ", Expect::kRefused, nullptr},
      {"logits_processors", C, Ch, {"my.Processor"}, Expect::kRefused, nullptr},
      {"cache_salt", C, Ch, "salt", Expect::kHonoured, nullptr},
      {"kv_transfer_params", C, Ch, {{"a", 1}}, Expect::kRefused, nullptr},
      {"vllm_xargs", C, Ch, {{"a", 1}}, Expect::kRefused, nullptr},
      {"mm_processor_kwargs", C, Ch, {{"a", 1}}, Expect::kRefused, nullptr},
      {"prompt_embeds", C, Ch, "AAAA", Expect::kRefused, nullptr},

      {"suffix", C, NoCh, "tail", Expect::kRefused, nullptr},
      // Refused here: options() does not trust request templates (see TrustedChatTemplate below).
      {"chat_template", NoC, Ch, "{{ messages }}", Expect::kRefused, nullptr},
      {"documents", NoC, Ch, {{{"title", "t"}, {"text", "x"}}}, Expect::kRefused, nullptr},
      {"tools", NoC, Ch, {{{"type", "function"}, {"function", {{"name", "f"}}}}}, Expect::kHonoured, nullptr,
       {{"tool_choice", "none"}}},
      {"tool_choice", NoC, Ch, "required", Expect::kHonoured, nullptr,
       {{"tools", {{{"type", "function"}, {"function", {{"name", "f"}}}}}}}},
      {"parallel_tool_calls", NoC, Ch, false, Expect::kHonoured, nullptr,
       {{"tools", {{{"type", "function"}, {"function", {{"name", "f"}}}}}}, {"tool_choice", "required"}}},
      {"functions", NoC, Ch, {{{"name", "f"}}}, Expect::kRefused, json::array()},
      {"function_call", NoC, Ch, "auto", Expect::kRefused, "none"},
      {"reasoning_effort", NoC, Ch, "low", Expect::kRefused, nullptr},
      {"include_reasoning", NoC, Ch, false, Expect::kRefused, true},  // no reasoning parser in options()
      {"thinking_token_budget", NoC, Ch, 10, Expect::kRefused, nullptr},
      {"media_io_kwargs", NoC, Ch, {{"a", 1}}, Expect::kRefused, nullptr},
      {"audio", NoC, Ch, {{"voice", "x"}}, Expect::kRefused, nullptr},
      {"modalities", NoC, Ch, {"text", "audio"}, Expect::kRefused, {"text"}},
      {"prediction", NoC, Ch, {{"type", "content"}, {"content", "x"}}, Expect::kRefused, nullptr},
      {"store", NoC, Ch, true, Expect::kRefused, false},
      {"metadata", NoC, Ch, {{"a", "b"}}, Expect::kRefused, nullptr},
      {"service_tier", NoC, Ch, "flex", Expect::kRefused, "auto"},
      {"web_search_options", NoC, Ch, json::object(), Expect::kRefused, nullptr},
      {"verbosity", NoC, Ch, "low", Expect::kRefused, nullptr},
      {"prompt_cache_key", NoC, Ch, "k", Expect::kRefused, nullptr},
      {"safety_identifier", NoC, Ch, "s", Expect::kRefused, nullptr},
  };
  return r;
}

// The schemas' field names.
const std::vector<std::string> kOpenAiCompletions = {
    "model", "prompt", "best_of", "echo", "frequency_penalty", "logit_bias", "logprobs", "max_tokens", "n",
    "presence_penalty", "seed", "stop", "stream", "stream_options", "suffix", "temperature", "top_p", "user"};
const std::vector<std::string> kOpenAiChat = {
    "messages", "model", "audio", "frequency_penalty", "function_call", "functions", "logit_bias", "logprobs",
    "max_completion_tokens", "max_tokens", "metadata", "modalities", "n", "parallel_tool_calls", "prediction",
    "presence_penalty", "prompt_cache_key", "reasoning_effort", "response_format", "safety_identifier", "seed",
    "service_tier", "stop", "store", "stream", "stream_options", "temperature", "tool_choice", "tools",
    "top_logprobs", "top_p", "user", "verbosity", "web_search_options"};
// vLLM's sampling and extra parameters, common to both.
const std::vector<std::string> kVllmBoth = {
    "use_beam_search", "top_k", "min_p", "repetition_penalty", "length_penalty", "stop_token_ids",
    "include_stop_str_in_output", "ignore_eos", "min_tokens", "skip_special_tokens", "spaces_between_special_tokens",
    "truncate_prompt_tokens", "allowed_token_ids", "prompt_logprobs", "bad_words", "add_special_tokens",
    "response_format", "structured_outputs", "guided_json", "guided_regex", "guided_choice", "guided_grammar",
    "guided_decoding_backend", "guided_whitespace_pattern", "priority", "request_id", "logits_processors",
    "return_tokens_as_token_ids", "return_token_ids", "cache_salt", "kv_transfer_params", "vllm_xargs", "echo",
    "best_of", "prompt_embeds", "mm_processor_kwargs"};
const std::vector<std::string> kVllmChatOnly = {
    "include_reasoning", "add_generation_prompt", "continue_final_message", "documents", "chat_template",
    "chat_template_kwargs", "structural_tag", "media_io_kwargs", "thinking_token_budget"};

json base_body(ApiKind kind) {
  if (kind == ApiKind::kChat) return {{"messages", json::array({{{"role", "user"}, {"content", "hi"}}})}};
  return {{"prompt", "hi"}};
}

// Everything the parse produced: the request for the pipeline and the response's switches.
std::string fingerprint(const OpenAiRequest& r) {
  msgpack::sbuffer buf;
  msgpack::pack(buf, r.request);
  return std::string(buf.data(), buf.size()) + "|" + std::to_string(r.stream) + std::to_string(r.include_usage) +
         std::to_string(r.want_logprobs) + std::to_string(r.return_token_ids) + r.client_request_id +
         std::to_string(r.echo) + std::to_string(r.echo_only) + std::to_string(r.return_tokens_as_token_ids) +
         std::to_string(r.continuous_usage) + std::to_string(r.prompt_logprobs) + std::to_string(r.prompts.size());
}

struct Outcome {
  int status = 200;
  std::string param;
  std::string fingerprint;
};

Outcome parse(ApiKind kind, const json& body) {
  Outcome o;
  try {
    o.fingerprint = fingerprint(parse_openai_request(kind, body.dump(), options()));
  } catch (const ApiError& e) {
    o.status = e.status();
    o.param = e.param();
  }
  return o;
}

const char* name(ApiKind kind) { return kind == ApiKind::kChat ? "chat" : "completions"; }

TEST(RequestFields, EveryFieldIsHonouredOrRefusedByName) {
  int honoured = 0, refused = 0;
  for (const ApiKind kind : {ApiKind::kCompletions, ApiKind::kChat}) {
    for (const Row& row : rows()) {
      if (!(kind == ApiKind::kChat ? row.chat : row.completions)) continue;
      SCOPED_TRACE(std::string(name(kind)) + " field " + row.field);
      json base = base_body(kind);
      base.update(row.extra);
      const Outcome before = parse(kind, base);
      ASSERT_EQ(before.status, 200) << before.param;
      json probe = base;
      probe[row.field] = row.value;
      const Outcome after = parse(kind, probe);
      const bool changed = after.status == 200 && after.fingerprint != before.fingerprint;
      const bool refused_by_name = after.status == 400 && after.param == row.field;
      switch (row.expect) {
        case Expect::kHonoured:
          EXPECT_TRUE(changed) << "accepted without effect, or refused (status " << after.status << ", param "
                               << after.param << ")";
          honoured += changed;
          break;
        case Expect::kRefused:
          EXPECT_TRUE(refused_by_name) << "status " << after.status << ", param " << after.param;
          refused += refused_by_name;
          break;
        case Expect::kNotFound:
          EXPECT_EQ(after.status, 404);
          EXPECT_EQ(after.param, row.field);
          break;
      }
      // A value that asks for nothing is accepted and changes nothing.
      if (!row.no_op.is_null()) {
        json quiet = base;
        quiet[row.field] = row.no_op;
        const Outcome same = parse(kind, quiet);
        EXPECT_EQ(same.status, 200) << "no-op value " << row.no_op.dump() << " refused: " << same.param;
        EXPECT_EQ(same.fingerprint, before.fingerprint) << "no-op value " << row.no_op.dump() << " changed the request";
      }
      // null is "not given" (the SDKs send it for unset fields).
      if (std::string(row.field) != "messages" && std::string(row.field) != "prompt") {
        json unset = base;
        unset[row.field] = nullptr;
        const Outcome same = parse(kind, unset);
        EXPECT_EQ(same.status, 200) << same.param;
        EXPECT_EQ(same.fingerprint, before.fingerprint);
      }
    }
  }
  EXPECT_GT(honoured, 50);
  EXPECT_GT(refused, 40);
}

TEST(RequestFields, TrustedChatTemplateAndKwargs) {
  HttpOptions trusting = options();
  trusting.trust_request_chat_template = true;
  const json body = {{"messages", json::array({{{"role", "critic"}, {"content", "hi"}}})},
                     {"chat_template", "{{ messages[0].content }}"},
                     {"chat_template_kwargs", {{"enable_thinking", false}, {"style", "terse"}}}};
  const OpenAiRequest r = parse_openai_request(ApiKind::kChat, body.dump(), trusting);
  EXPECT_EQ(r.request.chat_template, "{{ messages[0].content }}");
  EXPECT_EQ(r.request.messages[0].role, "critic");  // any role the template accepts
  EXPECT_FALSE(r.request.enable_thinking);
  EXPECT_EQ(json::parse(r.request.chat_template_kwargs), json({{"style", "terse"}}));
  try {
    parse_openai_request(ApiKind::kChat, body.dump(), options());
    ADD_FAILURE() << "a request's chat template on a server that does not trust them";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.param(), "chat_template");
    EXPECT_NE(std::string(e.what()).find("--trust-request-chat-template"), std::string::npos);
  }
  json own_field = {{"messages", json::array({{{"role", "user"}, {"content", "hi"}}})},
                    {"chat_template_kwargs", {{"add_generation_prompt", false}}}};
  EXPECT_THROW(parse_openai_request(ApiKind::kChat, own_field.dump(), options()), ApiError);
  json both = {{"messages", json::array({{{"role", "user"}, {"content", "hi"}}})}, {"continue_final_message", true}};
  try {
    parse_openai_request(ApiKind::kChat, both.dump(), options());
    ADD_FAILURE() << "continue_final_message with add_generation_prompt";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.param(), "continue_final_message");
  }
}

bool has_row(ApiKind kind, const std::string& field) {
  for (const Row& r : rows()) {
    if (r.field == field && (kind == ApiKind::kChat ? r.chat : r.completions)) return true;
  }
  return false;
}

TEST(RequestFields, TheSchemasTheTableAndTheRowsAgree) {
  std::vector<std::pair<ApiKind, std::vector<std::string>>> schemas = {
      {ApiKind::kCompletions, kOpenAiCompletions}, {ApiKind::kChat, kOpenAiChat},
      {ApiKind::kCompletions, kVllmBoth},          {ApiKind::kChat, kVllmBoth},
      {ApiKind::kChat, kVllmChatOnly}};
  for (const auto& [kind, names] : schemas) {
    for (const auto& n : names) {
      EXPECT_TRUE(has_row(kind, n)) << name(kind) << " field '" << n << "' has no row";
      EXPECT_NE(find_request_field(kind, n), nullptr) << name(kind) << " field '" << n << "' is not in the table";
    }
  }
  for (const Row& r : rows()) {
    if (r.completions) EXPECT_NE(find_request_field(ApiKind::kCompletions, r.field), nullptr) << r.field;
    if (r.chat) EXPECT_NE(find_request_field(ApiKind::kChat, r.field), nullptr) << r.field;
  }
  for (const RequestField& f : request_fields()) {
    if (f.completions) EXPECT_TRUE(has_row(ApiKind::kCompletions, std::string(f.name))) << f.name;
    if (f.chat) EXPECT_TRUE(has_row(ApiKind::kChat, std::string(f.name))) << f.name;
  }
}

// vLLM accepts a field it does not know and logs a warning; zinfer refuses it, naming it, so that
// a misspelt field cannot change what the client gets unnoticed.
TEST(RequestFields, UnknownFieldsAreRefusedByName) {
  for (const ApiKind kind : {ApiKind::kCompletions, ApiKind::kChat}) {
    json body = base_body(kind);
    body["max_token"] = 5;
    const Outcome o = parse(kind, body);
    EXPECT_EQ(o.status, 400);
    EXPECT_EQ(o.param, "max_token");
  }
  // A field of the other endpoint is unknown here too.
  json body = base_body(ApiKind::kCompletions);
  body["messages"] = json::array();
  EXPECT_EQ(parse(ApiKind::kCompletions, body).param, "messages");
  body = base_body(ApiKind::kChat);
  body["suffix"] = "x";
  EXPECT_EQ(parse(ApiKind::kChat, body).param, "suffix");
}

TEST(RequestFields, NestedFieldsAreHonouredOrRefusedByName) {
  json chat = base_body(ApiKind::kChat);
  chat["chat_template_kwargs"] = {{"tools_enabled", true}};  // a template variable: honoured
  EXPECT_EQ(parse(ApiKind::kChat, chat).status, 200);
  EXPECT_NE(parse(ApiKind::kChat, chat).fingerprint, parse(ApiKind::kChat, base_body(ApiKind::kChat)).fingerprint);
  chat["chat_template_kwargs"] = {{"messages", json::array()}};  // a request field's own variable: refused
  EXPECT_EQ(parse(ApiKind::kChat, chat).param, "chat_template_kwargs.messages");
  chat = base_body(ApiKind::kChat);
  chat["messages"][0]["weight"] = 2;
  EXPECT_EQ(parse(ApiKind::kChat, chat).param, "messages[0].weight");
  json c = base_body(ApiKind::kCompletions);
  c["stream"] = true;
  c["stream_options"] = {{"continuous_usage_stats", true}};
  EXPECT_EQ(parse(ApiKind::kCompletions, c).param, "stream_options.continuous_usage_stats");
  c["stream_options"] = {{"include_usage", true}, {"continuous_usage_stats", false}};
  EXPECT_EQ(parse(ApiKind::kCompletions, c).status, 200);
  c["stream_options"] = {{"usage", true}};
  EXPECT_EQ(parse(ApiKind::kCompletions, c).param, "stream_options.usage");
}

// generation_config.json's defaults fill the fields a request leaves out, as the client's would.
TEST(RequestFields, SamplingDefaultsFillWhatTheRequestLeavesOut) {
  HttpOptions o = options();
  o.sampling_defaults.temperature = 0.6;
  o.sampling_defaults.top_p = 0.95;
  o.sampling_defaults.top_k = 20;
  auto r = parse_openai_request(ApiKind::kCompletions, R"({"prompt":"x"})", o);
  EXPECT_FLOAT_EQ(r.request.sampling.temperature, 0.6f);
  EXPECT_FLOAT_EQ(r.request.sampling.top_p, 0.95f);
  EXPECT_EQ(r.request.sampling.top_k, 20);
  r = parse_openai_request(ApiKind::kChat,
                           R"({"messages":[{"role":"user","content":"q"}],"temperature":0,"top_k":null})", o);
  EXPECT_FLOAT_EQ(r.request.sampling.temperature, 0.0f);  // the client's value wins
  EXPECT_EQ(r.request.sampling.top_k, 20);                // null is "not given"
  EXPECT_FLOAT_EQ(r.request.sampling.top_p, 0.95f);
  // Without defaults, OpenAI's.
  r = parse_openai_request(ApiKind::kCompletions, R"({"prompt":"x"})", options());
  EXPECT_FLOAT_EQ(r.request.sampling.temperature, 1.0f);
  EXPECT_EQ(r.request.sampling.top_k, -1);
}

TEST(RequestFields, ServedModelAliasesAreAccepted) {
  HttpOptions o = options();
  o.served_model_aliases = {"alias"};
  auto r = parse_openai_request(ApiKind::kCompletions, R"({"prompt":"x","model":"alias"})", o);
  EXPECT_EQ(r.request.model, "alias");
  EXPECT_THROW(parse_openai_request(ApiKind::kCompletions, R"({"prompt":"x","model":"other"})", o), ApiError);
}

TEST(RequestFields, MaxLogprobsIsTheServersSetting) {
  HttpOptions o = options();
  o.max_logprobs = 3;
  EXPECT_NO_THROW(parse_openai_request(ApiKind::kCompletions, R"({"prompt":"x","logprobs":3})", o));
  try {
    parse_openai_request(ApiKind::kCompletions, R"({"prompt":"x","logprobs":4})", o);
    ADD_FAILURE() << "logprobs 4 accepted over max_logprobs 3";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.param(), "logprobs");
  }
}

}  // namespace
}  // namespace zinfer::gateway
