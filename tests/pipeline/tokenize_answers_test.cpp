// The tokenizer stage without sockets (actors/pipeline/tokenize_request.h), with the real Llama 2
// tokenizer (it adds bos) and Llama 3's chat template: add_special_tokens, stop_token_ids outside
// the vocabulary, /tokenize and /detokenize answers that agree with generation, and a replaced
// chat template. (tokenize_request_test.cpp has the sampling fields' share.)
#include <string>
#include <variant>

#include <gtest/gtest.h>

#include "actors/pipeline/tokenize_request.h"

namespace zinfer::actors {
namespace {

const std::string kData = std::string(ZINFER_SOURCE_DIR) + "/tests/data/tokenizers/";

TokenizerResources resources() {
  TokenizerResources r;
  r.tokenizer = tok::Tokenizer::from_file(kData + "llama2");
  r.chat = chat::TokenizerChatConfig::load(kData + "llama3");
  r.vocab_size = r.tokenizer->vocab_size();
  r.max_model_len = 4;
  return r;
}

protocol::GenerateRequest prompt_request(const std::string& text) {
  protocol::GenerateRequest g;
  g.request_id = 5;
  g.prompt = text;
  g.sampling.max_tokens = 1;
  return g;
}

std::vector<int32_t> ids_of(const std::variant<protocol::TokenizedRequest, protocol::ErrorReply>& v) {
  const auto* ok = std::get_if<protocol::TokenizedRequest>(&v);
  EXPECT_NE(ok, nullptr) << (ok ? "" : std::get<protocol::ErrorReply>(v).message);
  return ok ? ok->prompt_ids : std::vector<int32_t>{};
}

TEST(TokenizeAnswers, AddSpecialTokens) {
  TokenizerResources r = resources();
  r.max_model_len = 1000;
  const auto bos = r.tokenizer->token_to_id("<s>").value();
  auto g = prompt_request("Hello there, world");
  const auto with = ids_of(tokenize_request(r, g));
  ASSERT_GE(with.size(), 3u);
  EXPECT_EQ(with.front(), bos);  // a prompt gets bos by default
  g.add_special_tokens = 0;
  const auto without = ids_of(tokenize_request(r, g));
  EXPECT_EQ(without, std::vector<int32_t>(with.begin() + 1, with.end()));
}

TEST(TokenizeAnswers, StopTokenIdsOutsideTheVocabularyAreRefused) {
  TokenizerResources r = resources();
  r.max_model_len = 1000;
  auto g = prompt_request("Hi");
  g.sampling.stop_token_ids = {r.vocab_size};
  const auto out = tokenize_request(r, g);
  ASSERT_TRUE(std::holds_alternative<protocol::ErrorReply>(out));
  EXPECT_EQ(std::get<protocol::ErrorReply>(out).code, 400);
  EXPECT_NE(std::get<protocol::ErrorReply>(out).message.find("stop_token_ids"), std::string::npos);
  g.sampling.stop_token_ids = {r.vocab_size - 1};
  EXPECT_TRUE(std::holds_alternative<protocol::TokenizedRequest>(tokenize_request(r, g)));
}

TEST(TokenizeAnswers, TokenizeAnswersAgreeWithGeneration) {
  TokenizerResources r = resources();
  r.max_model_len = 1000;
  protocol::TokenizeRequest t;
  t.request_id = 9;
  t.prompt = "Hello there, world";
  t.add_special_tokens = 1;
  t.return_token_strs = true;
  const auto reply = std::get<protocol::TokenizeReply>(answer_tokenize(r, t));
  EXPECT_EQ(reply.request_id, 9u);
  EXPECT_EQ(reply.tokens, ids_of(tokenize_request(r, prompt_request(t.prompt))));
  ASSERT_EQ(reply.token_strs.size(), reply.tokens.size());
  EXPECT_EQ(reply.token_strs[0], "<s>");
  EXPECT_EQ(reply.max_model_len, 1000);

  protocol::GenerateRequest chat;
  chat.messages = {{"user", "What is 2+2?"}};
  chat.is_chat = true;
  chat.sampling.max_tokens = 1;
  protocol::TokenizeRequest tc;
  tc.messages = chat.messages;
  tc.is_chat = true;
  tc.add_special_tokens = 0;
  EXPECT_EQ(std::get<protocol::TokenizeReply>(answer_tokenize(r, tc)).tokens, ids_of(tokenize_request(r, chat)));

  // vLLM's /tokenize takes the chat settings generation takes: tools, continue_final_message and
  // a request's template; both render the same prompt.
  chat.messages.push_back({"assistant", "The answer"});
  chat.add_generation_prompt = false;
  chat.continue_final_message = true;
  chat.tools = R"([{"type":"function","function":{"name":"get_weather"}}])";
  chat.chat_template = "{{ tools | tojson }}\n{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}";
  tc.messages = chat.messages;
  tc.add_generation_prompt = false;
  tc.continue_final_message = true;
  tc.tools = chat.tools;
  tc.chat_template = chat.chat_template;
  const auto with_tools = std::get<protocol::TokenizeReply>(answer_tokenize(r, tc)).tokens;
  EXPECT_EQ(with_tools, ids_of(tokenize_request(r, chat)));
  const std::string rendered = r.tokenizer->decode(with_tools, false);
  EXPECT_NE(rendered.find("get_weather"), std::string::npos) << rendered;
  // continue_final_message: the prompt ends where the last message's content ends.
  EXPECT_TRUE(rendered.ends_with("assistant: The answer")) << rendered;

  protocol::TokenizeRequest d;
  d.detokenize = true;
  d.tokens = std::get<protocol::TokenizeReply>(answer_tokenize(r, t)).tokens;
  EXPECT_EQ(std::get<protocol::TokenizeReply>(answer_tokenize(r, d)).text, "<s> Hello there, world");
  d.tokens = {r.vocab_size};
  EXPECT_TRUE(std::holds_alternative<protocol::ErrorReply>(answer_tokenize(r, d)));
}

TEST(TokenizeAnswers, AReplacedChatTemplateIsTheOneRendered) {
  TokenizerResources r = resources();
  r.max_model_len = 1000;
  r.use_chat_template("{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}");
  protocol::TokenizeRequest t;
  t.messages = {{"user", "hi"}};
  t.is_chat = true;
  t.add_special_tokens = 0;
  const auto ids = std::get<protocol::TokenizeReply>(answer_tokenize(r, t)).tokens;
  EXPECT_EQ(r.tokenizer->decode(ids), "[user] hi\n");
  EXPECT_ANY_THROW(r.use_chat_template("{% for %}"));
}

}  // namespace
}  // namespace zinfer::actors

namespace zinfer::actors {
namespace {

// A request's own chat settings (vLLM's): its template, the template's extra variables, and
// continue_final_message (the prompt ends where the last message's content ends).
TEST(TokenizeAnswers, RequestChatTemplateKwargsAndContinueFinalMessage) {
  TokenizerResources r = resources();
  r.max_model_len = 1000;
  auto text_of = [&](const protocol::GenerateRequest& g) { return r.tokenizer->decode(ids_of(tokenize_request(r, g))); };
  protocol::GenerateRequest g;
  g.request_id = 6;
  g.is_chat = true;
  g.add_generation_prompt = false;
  g.sampling.max_tokens = 1;
  g.messages = {{"user", "hi"}, {"critic", "so far"}};
  g.chat_template = "{% for m in messages %}<{{ m.role }}>{{ m.content }}{{ suffix }}</{{ m.role }}>{% endfor %}";
  g.chat_template_kwargs = R"({"suffix": "!"})";
  EXPECT_EQ(text_of(g), "<user>hi!</user><critic>so far!</critic>");
  g.chat_template_kwargs.clear();
  g.continue_final_message = true;
  EXPECT_EQ(text_of(g), "<user>hi</user><critic>so far");
  // A template that does not show the final message: an error naming continue_final_message.
  g.chat_template = "{% for m in messages %}x{% endfor %}";
  const auto v = tokenize_request(r, g);
  ASSERT_TRUE(std::holds_alternative<protocol::ErrorReply>(v));
  EXPECT_NE(std::get<protocol::ErrorReply>(v).message.find("continue_final_message"), std::string::npos);
  // A template that does not parse is a 400, not a crash.
  g.chat_template = "{% for %}";
  EXPECT_TRUE(std::holds_alternative<protocol::ErrorReply>(tokenize_request(r, g)));
}

}  // namespace
}  // namespace zinfer::actors
