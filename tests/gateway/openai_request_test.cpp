// Parsing and validation of OpenAI request bodies, without a server.
#include <gtest/gtest.h>

#include <map>

#include "gateway/api_error.h"
#include "gateway/openai_request.h"

namespace zinfer::gateway {
namespace {

HttpOptions options() {
  HttpOptions o;
  o.served_model_name = "m";
  o.max_model_len = 100;
  return o;
}

int status_of(ApiKind kind, const std::string& body) {
  try {
    parse_openai_request(kind, body, options());
    return 200;
  } catch (const ApiError& e) {
    return e.status();
  }
}

TEST(OpenAiRequestTest, CompletionFieldsMapToTheRequest) {
  auto r = parse_openai_request(ApiKind::kCompletions,
                                R"({"model":"m","prompt":"hi","max_tokens":5,"top_k":0,"stop":"END","n":2,
                                    "min_tokens":1,"stop_token_ids":[7],"skip_special_tokens":false,"seed":null,
                                    "stream":true,"stream_options":{"include_usage":true},"logprobs":0})",
                                options());
  EXPECT_EQ(r.request.prompt, "hi");
  EXPECT_EQ(r.request.sampling.max_tokens, 5);
  EXPECT_EQ(r.request.sampling.top_k, -1);  // 0 also means off
  EXPECT_EQ(r.request.sampling.stop, std::vector<std::string>{"END"});
  EXPECT_EQ(r.request.sampling.n, 2);
  EXPECT_EQ(r.request.sampling.min_tokens, 1);
  EXPECT_EQ(r.request.sampling.stop_token_ids, std::vector<int32_t>{7});
  EXPECT_FALSE(r.request.sampling.skip_special_tokens);
  EXPECT_EQ(r.request.sampling.seed, -1);  // null is "not given"
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
  EXPECT_TRUE(r.want_logprobs);  // logprobs: 0 still asks for the chosen tokens' logprobs
  EXPECT_EQ(r.request.sampling.top_logprobs, 0);
}

TEST(OpenAiRequestTest, ChatFields) {
  auto r = parse_openai_request(ApiKind::kChat,
                                R"({"messages":[{"role":"user","content":"q"},{"role":"assistant"},
                                                {"role":"user","content":null}],
                                    "add_generation_prompt":false,"priority":-2})",
                                options());
  ASSERT_EQ(r.request.messages.size(), 3u);
  EXPECT_EQ(r.request.messages[1].content, "");
  EXPECT_TRUE(r.request.is_chat);
  EXPECT_FALSE(r.request.add_generation_prompt);
  EXPECT_EQ(r.request.priority, -2);
  EXPECT_EQ(r.request.sampling.max_tokens, 0);  // not given: until the context is full (0)
}

// The scheduling fields: `user` is the tenant (fair share), `predicted_output_tokens` (a zinfer
// extension) the expected output length (sjf). Neither is ignored: a bad value is a 400 naming it.
TEST(OpenAiRequestTest, UserAndPredictedOutputTokensReachTheRequest) {
  auto r = parse_openai_request(ApiKind::kChat,
                                R"({"messages":[{"role":"user","content":"q"}],"user":"team-7",
                                    "predicted_output_tokens":42})",
                                options());
  EXPECT_EQ(r.request.tenant, "team-7");
  EXPECT_EQ(r.request.predicted_output_tokens, 42);
  auto plain = parse_openai_request(ApiKind::kCompletions, R"({"prompt":"x","user":null})", options());
  EXPECT_EQ(plain.request.tenant, "");                  // anonymous
  EXPECT_EQ(plain.request.predicted_output_tokens, 0);  // no prediction
  auto param_of = [](const std::string& body) -> std::string {
    try {
      parse_openai_request(ApiKind::kCompletions, body, options());
      return "accepted";
    } catch (const ApiError& e) {
      EXPECT_EQ(e.status(), 400) << body;
      return e.param();
    }
  };
  EXPECT_EQ(param_of(R"({"prompt":"x","user":7})"), "user");
  EXPECT_EQ(param_of(R"({"prompt":"x","predicted_output_tokens":0})"), "predicted_output_tokens");
  EXPECT_EQ(param_of(R"({"prompt":"x","predicted_output_tokens":-3})"), "predicted_output_tokens");
  EXPECT_EQ(param_of(R"({"prompt":"x","predicted_output_tokens":2.5})"), "predicted_output_tokens");
  EXPECT_EQ(param_of(R"({"prompt":"x","predicted_output_tokens":"9"})"), "predicted_output_tokens");
  EXPECT_EQ(param_of(R"({"prompt":"x","predicted_output_tokens":3000000000})"), "predicted_output_tokens");
  EXPECT_EQ(param_of(R"({"prompt":"x","predicted_output_tokens":1,"user":""})"), "accepted");
}

// The logits processing fields reach the request as vLLM reads them: logit_bias in OpenAI's form
// (token id strings, biases clamped to [-100, 100]), the others as given.
TEST(OpenAiRequestTest, LogitsProcessingFieldsReachTheRequest) {
  for (ApiKind kind : {ApiKind::kCompletions, ApiKind::kChat}) {
    const std::string input =
        kind == ApiKind::kChat ? R"("messages":[{"role":"user","content":"q"}])" : R"("prompt":"q")";
    auto r = parse_openai_request(kind, "{" + input + R"(,"repetition_penalty":1.2,"frequency_penalty":-0.5,
                                      "presence_penalty":1.5,"min_p":0.05,"logit_bias":{"50256":-150,"7":2.5},
                                      "allowed_token_ids":[3,1,2],"bad_words":["foo"," bar"],
                                      "truncate_prompt_tokens":-1,"min_tokens":2})",
                                  options());
    const auto& s = r.request.sampling;
    EXPECT_FLOAT_EQ(s.repetition_penalty, 1.2f);
    EXPECT_FLOAT_EQ(s.frequency_penalty, -0.5f);
    EXPECT_FLOAT_EQ(s.presence_penalty, 1.5f);
    EXPECT_FLOAT_EQ(s.min_p, 0.05f);
    ASSERT_EQ(s.logit_bias.size(), 2u);
    std::map<int32_t, float> bias;
    for (const auto& b : s.logit_bias) bias[b.token] = b.bias;
    EXPECT_FLOAT_EQ(bias.at(50256), -100.0f);  // clamped
    EXPECT_FLOAT_EQ(bias.at(7), 2.5f);
    EXPECT_EQ(s.allowed_token_ids, (std::vector<int32_t>{3, 1, 2}));
    EXPECT_EQ(s.bad_words, (std::vector<std::string>{"foo", " bar"}));
    EXPECT_EQ(s.truncate_prompt_tokens, -1);
    EXPECT_EQ(s.min_tokens, 2);
  }
  auto param_of = [](const std::string& body) -> std::string {
    try {
      parse_openai_request(ApiKind::kCompletions, body, options());
      return "accepted";
    } catch (const ApiError& e) {
      EXPECT_EQ(e.status(), 400) << body;
      return e.param();
    }
  };
  EXPECT_EQ(param_of(R"({"prompt":"x","logit_bias":{"-1":1}})"), "logit_bias");
  EXPECT_EQ(param_of(R"({"prompt":"x","logit_bias":{"1x":1}})"), "logit_bias");
  EXPECT_EQ(param_of(R"({"prompt":"x","logit_bias":{"1":"a"}})"), "logit_bias");
  EXPECT_EQ(param_of(R"({"prompt":"x","logit_bias":{}})"), "accepted");
  EXPECT_EQ(param_of(R"({"prompt":"x","allowed_token_ids":[-4]})"), "allowed_token_ids");
  EXPECT_EQ(param_of(R"({"prompt":"x","allowed_token_ids":[1.5]})"), "allowed_token_ids");
  EXPECT_EQ(param_of(R"({"prompt":"x","bad_words":[1]})"), "bad_words");
  EXPECT_EQ(param_of(R"({"prompt":"x","bad_words":["  "]})"), "bad_words");
  EXPECT_EQ(param_of(R"({"prompt":"x","repetition_penalty":-1})"), "repetition_penalty");
  EXPECT_EQ(param_of(R"({"prompt":"x","presence_penalty":2.01})"), "presence_penalty");
  EXPECT_EQ(param_of(R"({"prompt":"x","min_p":-0.1})"), "min_p");
  EXPECT_EQ(param_of(R"({"prompt":"x","truncate_prompt_tokens":-2})"), "truncate_prompt_tokens");
  EXPECT_EQ(param_of(R"({"prompt":"x","truncate_prompt_tokens":101})"), "truncate_prompt_tokens");
  // A token-id prompt longer than the context fits once truncated.
  std::string ids = "[";
  for (int i = 0; i < 150; ++i) ids += (i ? ",1" : "1");
  ids += "]";
  EXPECT_EQ(param_of(R"({"prompt":)" + ids + R"(,"max_tokens":5})"), "prompt");
  EXPECT_EQ(param_of(R"({"prompt":)" + ids + R"(,"max_tokens":5,"truncate_prompt_tokens":50})"), "accepted");
}

TEST(OpenAiRequestTest, StatusOfBadRequests) {
  EXPECT_EQ(status_of(ApiKind::kCompletions, R"({"prompt":"x","model":"other"})"), 404);
  EXPECT_EQ(status_of(ApiKind::kCompletions, R"({"prompt":"x","max_tokens":101})"), 400);
  EXPECT_EQ(status_of(ApiKind::kCompletions, R"({"prompt":"x","temperature":1e400})"), 400);
  EXPECT_EQ(status_of(ApiKind::kCompletions, R"({"prompt":"x","n":1000})"), 400);
  EXPECT_EQ(status_of(ApiKind::kCompletions, R"({"prompt":"x","max_tokens":3,"min_tokens":4})"), 400);
  EXPECT_EQ(status_of(ApiKind::kCompletions, R"({"prompt":[[1],[2]]})"), 200);  // a batch of two
  EXPECT_EQ(status_of(ApiKind::kCompletions, R"({"prompt":[[1],"x"]})"), 400);  // of two forms
  EXPECT_EQ(status_of(ApiKind::kCompletions, R"({"prompt":[3000000000]})"), 400);
  EXPECT_EQ(status_of(ApiKind::kChat, R"({"messages":[{"content":"x"}]})"), 400);
  EXPECT_EQ(status_of(ApiKind::kChat, R"({"messages":[{"role":"user"}]})"), 400);
  EXPECT_EQ(status_of(ApiKind::kChat, R"({"messages":[{"role":"user","content":"x"}],"chat_template_kwargs":1})"), 400);
  EXPECT_EQ(status_of(ApiKind::kCompletions, R"({"prompt":"x","frequency_penalty":0})"), 200);
}

TEST(OpenAiRequestTest, ErrorJsonShape) {
  try {
    parse_openai_request(ApiKind::kCompletions, R"({"prompt":"x","top_p":2})", options());
    FAIL() << "no error";
  } catch (const ApiError& e) {
    auto j = e.to_json();
    EXPECT_EQ(j["error"]["param"], "top_p");
    EXPECT_EQ(j["error"]["type"], "invalid_request_error");
    EXPECT_EQ(j["error"]["code"], 400);
    EXPECT_NE(j["error"]["message"].get<std::string>().find("top_p"), std::string::npos);
  }
}

TEST(OpenAiRequestTest, ValidateGenerateRequestFromNativeClients) {
  protocol::GenerateRequest g;
  g.prompt = "x";
  EXPECT_NO_THROW(validate_generate_request(g, 100));
  g.prompt_ids = {1, 2};
  EXPECT_THROW(validate_generate_request(g, 100), ApiError);  // two inputs
  g.prompt.clear();
  EXPECT_NO_THROW(validate_generate_request(g, 100));
  g.prompt_ids.assign(100, 1);
  EXPECT_THROW(validate_generate_request(g, 100), ApiError);  // fills the context
  g.sampling.truncate_prompt_tokens = 50;
  EXPECT_NO_THROW(validate_generate_request(g, 100));  // not once truncated
  g.sampling.truncate_prompt_tokens = 0;
  g.sampling.frequency_penalty = 3.0f;  // the sampling fields' ranges hold here too
  g.prompt_ids = {1};
  try {
    validate_generate_request(g, 100);
    ADD_FAILURE() << "frequency_penalty 3 was accepted";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.param(), "frequency_penalty");
  }
  g.sampling.frequency_penalty = 0.0f;
  g.prompt_ids = {-1};
  EXPECT_THROW(validate_generate_request(g, 100), ApiError);
  g.prompt_ids.clear();
  g.messages = {{"user", "hi"}};
  EXPECT_THROW(validate_generate_request(g, 100), ApiError);  // is_chat not set
  g.is_chat = true;
  EXPECT_NO_THROW(validate_generate_request(g, 100));
  g.sampling.top_p = 0.0f;
  EXPECT_THROW(validate_generate_request(g, 100), ApiError);
  g.sampling.top_p = 1.0f;
  g.tenant = "anyone";
  g.predicted_output_tokens = 5;
  EXPECT_NO_THROW(validate_generate_request(g, 100));
  g.predicted_output_tokens = -1;
  try {
    validate_generate_request(g, 100);
    ADD_FAILURE() << "a negative predicted_output_tokens was accepted";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.param(), "predicted_output_tokens");
  }
}

TEST(ApiErrorTest, EngineRepliesMapToStatuses) {
  protocol::ErrorReply r;
  r.code = 400;
  r.message = "prompt too long";
  EXPECT_EQ(api_error_from_reply(r).status(), 400);
  EXPECT_STREQ(api_error_from_reply(r).what(), "prompt too long");
  r.code = 503;
  EXPECT_EQ(api_error_from_reply(r).type(), "service_unavailable_error");
  r.code = 0;  // not an HTTP code: the engine's own failure
  EXPECT_EQ(api_error_from_reply(r).status(), 500);
}

}  // namespace
}  // namespace zinfer::gateway
