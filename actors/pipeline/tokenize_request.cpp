#include "actors/pipeline/tokenize_request.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "gpu/model_config.h"
#include "runtime/logging.h"

namespace zinfer::actors {

TokenizerResources TokenizerResources::load(const std::string& model_dir, int32_t max_model_len_override,
                                            const std::string& chat_template) {
  namespace fs = std::filesystem;
  TokenizerResources r;
  auto log = runtime::logger("tokenizer");
  gpu::ModelConfig config = gpu::load_model_config(model_dir);
  r.vocab_size = config.vocab_size;
  r.max_model_len = max_model_len_override > 0 ? max_model_len_override
                                                : static_cast<int32_t>(config.max_position_embeddings);
  if (fs::exists(fs::path(model_dir) / "tokenizer.json")) {
    r.tokenizer = tok::Tokenizer::from_file(model_dir);
    if (fs::exists(fs::path(model_dir) / "tokenizer_config.json")) {
      try {
        r.chat = chat::TokenizerChatConfig::load(model_dir);
      } catch (const std::exception& e) {
        log->warn("no usable chat template in {}: {} (chat requests will be refused)", model_dir, e.what());
      }
    }
  } else {
    log->warn("no tokenizer.json in {}: only requests with prompt token ids can be served", model_dir);
  }
  if (!chat_template.empty()) r.use_chat_template(chat_template);
  return r;
}

void TokenizerResources::use_chat_template(const std::string& template_or_file) {
  namespace fs = std::filesystem;
  if (!chat) chat.emplace();  // the model's bos/eos stay when it had a template of its own
  std::string source = template_or_file;
  if (std::error_code ec; fs::is_regular_file(template_or_file, ec)) {
    std::ifstream in(template_or_file);
    std::stringstream text;
    text << in.rdbuf();
    source = text.str();
  }
  chat->chat_template = source;
  chat->compiled = std::make_shared<const chat::ChatTemplate>(source);
}

namespace {

protocol::ErrorReply bad_request(uint64_t id, const std::string& kind, const std::string& message) {
  return protocol::ErrorReply{id, 400, kind, message};
}

// vLLM's tokenization of bad_words: each word as written (leading spaces removed) and, when it
// makes a different first token of the same length, with one leading space, so that the word is
// banned both at the start of the text and after a space.
std::vector<std::vector<int32_t>> bad_word_sequences(const tok::Tokenizer& tokenizer,
                                                     const std::vector<std::string>& words) {
  std::vector<std::vector<int32_t>> out;
  for (const std::string& word : words) {
    const size_t start = word.find_first_not_of(" \t\n\r\f\v");
    const std::string bare = start == std::string::npos ? std::string() : word.substr(start);
    if (bare.empty()) throw std::invalid_argument("'bad_words' entries must contain more than white space");
    std::vector<int32_t> plain = tokenizer.encode(bare, /*add_special_tokens=*/false);
    std::vector<int32_t> spaced = tokenizer.encode(" " + bare, /*add_special_tokens=*/false);
    if (plain.empty()) throw std::invalid_argument("'bad_words' entry '" + word + "' encodes to no token");
    const bool add_spaced = !spaced.empty() && spaced[0] != plain[0] && spaced.size() == plain.size();
    out.push_back(std::move(plain));
    if (add_spaced) out.push_back(std::move(spaced));
  }
  return out;
}

// The sampling fields that name token ids, checked against the vocabulary; "" when they are fine.
std::string out_of_vocabulary(const protocol::SamplingParams& s, int32_t vocab) {
  auto outside = [vocab](int32_t id) { return id < 0 || id >= vocab; };
  const std::string range = " is outside the vocabulary [0, " + std::to_string(vocab) + ")";
  for (const auto& b : s.logit_bias)
    if (outside(b.token)) return "'logit_bias': token id " + std::to_string(b.token) + range;
  for (int32_t id : s.allowed_token_ids)
    if (outside(id)) return "'allowed_token_ids': token id " + std::to_string(id) + range;
  for (const auto& word : s.bad_words_token_ids)
    for (int32_t id : word)
      if (outside(id)) return "'bad_words': token id " + std::to_string(id) + range;
  return {};
}

// A request's own chat settings: GenerateRequest and TokenizeRequest carry the same ones.
template <class Request>
ChatExtras chat_extras_of(const Request& r) {
  return ChatExtras{r.continue_final_message, r.chat_template, r.chat_template_kwargs, r.tools};
}

}  // namespace

nlohmann::ordered_json chat_template_messages(const std::vector<protocol::ChatMessage>& messages) {
  using nlohmann::ordered_json;
  ordered_json list = ordered_json::array();
  for (const auto& m : messages) {
    ordered_json message = {{"role", m.role}, {"content", m.content}};
    if (!m.tool_calls.empty()) {
      ordered_json calls = ordered_json::array();
      for (const auto& call : m.tool_calls) {
        ordered_json arguments = ordered_json::parse(call.arguments.empty() ? "{}" : call.arguments, nullptr,
                                                     /*allow_exceptions=*/false);
        if (arguments.is_discarded()) {
          throw std::runtime_error("the arguments of tool call '" + call.name + "' are not JSON: " + call.arguments);
        }
        ordered_json c = ordered_json::object();
        if (!call.id.empty()) c["id"] = call.id;
        c["type"] = "function";
        c["function"] = {{"name", call.name}, {"arguments", std::move(arguments)}};
        calls.push_back(std::move(c));
      }
      message["tool_calls"] = std::move(calls);
    }
    if (!m.tool_call_id.empty()) message["tool_call_id"] = m.tool_call_id;
    if (!m.name.empty()) message["name"] = m.name;
    list.push_back(std::move(message));
  }
  return list;
}

std::vector<int32_t> encode_chat(const TokenizerResources& res, const std::vector<protocol::ChatMessage>& messages,
                                 bool add_generation_prompt, bool enable_thinking, bool add_special_tokens,
                                 const ChatExtras& extras) {
  if (!res.tokenizer) throw std::runtime_error("this model has no tokenizer.json");
  if (messages.empty()) throw std::runtime_error("'messages' must not be empty");
  // A request's own template (parsed per request: it is rare, and the server let it in), else
  // the server's.
  std::optional<chat::TokenizerChatConfig> own;
  if (!extras.chat_template.empty()) {
    own = res.chat ? *res.chat : chat::TokenizerChatConfig{};
    own->chat_template = extras.chat_template;
    own->compiled = std::make_shared<const chat::ChatTemplate>(extras.chat_template);
  }
  const chat::TokenizerChatConfig* config = own ? &*own : res.chat ? &*res.chat : nullptr;
  if (!config) throw std::runtime_error("this model has no chat template");
  const nlohmann::ordered_json list = chat_template_messages(messages);
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();
  if (!extras.chat_template_kwargs.empty()) {
    extra = nlohmann::ordered_json::parse(extras.chat_template_kwargs, nullptr, /*allow_exceptions=*/false);
    if (!extra.is_object()) throw std::runtime_error("'chat_template_kwargs' is not a JSON object");
  }
  extra["enable_thinking"] = enable_thinking;
  if (!extras.tools.empty()) {
    // transformers passes the list of {"type": "function", "function": {...}} as the client gave it.
    extra["tools"] = nlohmann::ordered_json::parse(extras.tools, nullptr, /*allow_exceptions=*/false);
    if (extra["tools"].is_discarded() || !extra["tools"].is_array()) {
      throw std::runtime_error("'tools' is not a JSON array");
    }
  }
  std::string text = chat::apply_chat_template(*config, list, add_generation_prompt, extra);
  if (extras.continue_final_message) {
    // transformers' continue_final_message: the prompt ends where the last message's content
    // (without surrounding white space) last appears, so the model continues that message.
    const std::string& content = messages.back().content;
    const size_t b = content.find_first_not_of(" \t\n\r");
    const size_t e = content.find_last_not_of(" \t\n\r");
    const std::string final_text = b == std::string::npos ? std::string() : content.substr(b, e - b + 1);
    const size_t at = final_text.empty() ? std::string::npos : text.rfind(final_text);
    if (at == std::string::npos) {
      throw std::runtime_error("continue_final_message is set but the final message does not appear in the chat "
                               "after applying the chat template");
    }
    text.resize(at + final_text.size());
  }
  // The template writes the special tokens itself (bos): by default encode without adding more,
  // as transformers' apply_chat_template(tokenize=True) does.
  return res.tokenizer->encode(text, add_special_tokens);
}

std::variant<protocol::TokenizeReply, protocol::ErrorReply> answer_tokenize(const TokenizerResources& res,
                                                                              const protocol::TokenizeRequest& req) {
  protocol::TokenizeReply out;
  out.request_id = req.request_id;
  out.max_model_len = res.max_model_len;
  try {
    if (!res.tokenizer) return bad_request(req.request_id, "invalid_request", "this model has no tokenizer.json");
    if (req.detokenize) {
      for (int32_t id : req.tokens) {
        if (id < 0 || id >= res.tokenizer->vocab_size()) {
          return bad_request(req.request_id, "invalid_request",
                             "token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                                 std::to_string(res.tokenizer->vocab_size()) + ")");
        }
      }
      // vLLM's /detokenize decodes with the special tokens kept.
      out.text = res.tokenizer->decode(req.tokens, /*skip_special_tokens=*/false);
      return out;
    }
    if (req.is_chat) {
      out.tokens = encode_chat(res, req.messages, req.add_generation_prompt, req.enable_thinking,
                               req.add_special_tokens == 1, chat_extras_of(req));
    } else {
      out.tokens = res.tokenizer->encode(req.prompt, req.add_special_tokens != 0);
    }
    if (req.return_token_strs) {
      for (int32_t id : out.tokens) out.token_strs.push_back(res.tokenizer->id_to_token(id));
    }
  } catch (const std::exception& e) {
    return bad_request(req.request_id, "invalid_request", std::string("cannot tokenize: ") + e.what());
  }
  return out;
}

std::variant<protocol::TokenizedRequest, protocol::ErrorReply> tokenize_request(
    const TokenizerResources& res, const protocol::GenerateRequest& req) {
  protocol::TokenizedRequest out;
  out.request_id = req.request_id;
  out.sampling = req.sampling;
  out.priority = req.priority;
  out.arrival_ns = req.arrival_ns;
  out.tenant = req.tenant;
  out.predicted_output_tokens = req.predicted_output_tokens;
  out.cache_salt = req.cache_salt;
  try {
    if (req.is_chat) {
      out.prompt_ids = encode_chat(res, req.messages, req.add_generation_prompt, req.enable_thinking,
                                   req.add_special_tokens == 1, chat_extras_of(req));
    } else if (!req.prompt_ids.empty()) {
      out.prompt_ids = req.prompt_ids;
    } else {
      if (!res.tokenizer) {
        return bad_request(req.request_id, "invalid_request", "this model has no tokenizer.json: send prompt token ids");
      }
      out.prompt_ids = res.tokenizer->encode(req.prompt, /*add_special_tokens=*/req.add_special_tokens != 0);
    }
  } catch (const std::exception& e) {
    return bad_request(req.request_id, "invalid_request", std::string("cannot prepare the prompt: ") + e.what());
  }
  if (out.prompt_ids.empty()) return bad_request(req.request_id, "invalid_request", "the prompt is empty");
  if (const int32_t t = out.sampling.truncate_prompt_tokens; t != 0) {
    // vLLM's truncate_prompt_tokens: keep the last t tokens (-1: max_model_len of them).
    const int32_t keep = t == -1 ? res.max_model_len : t;
    if (keep < 1) {
      return bad_request(req.request_id, "invalid_request", "'truncate_prompt_tokens' must be -1 or at least 1");
    }
    if (keep > res.max_model_len) {
      return bad_request(req.request_id, "invalid_request",
                         "'truncate_prompt_tokens' " + std::to_string(keep) + " is greater than max_model_len " +
                             std::to_string(res.max_model_len));
    }
    if (static_cast<int32_t>(out.prompt_ids.size()) > keep) {
      out.prompt_ids.erase(out.prompt_ids.begin(), out.prompt_ids.end() - keep);
    }
  }
  if (!out.sampling.bad_words.empty()) {
    if (!res.tokenizer) {
      return bad_request(req.request_id, "invalid_request", "'bad_words' needs the model's tokenizer.json");
    }
    try {
      out.sampling.bad_words_token_ids = bad_word_sequences(*res.tokenizer, out.sampling.bad_words);
    } catch (const std::exception& e) {
      return bad_request(req.request_id, "invalid_request", e.what());
    }
  }
  if (std::string why = out_of_vocabulary(out.sampling, res.vocab_size); !why.empty()) {
    return bad_request(req.request_id, "invalid_request", why);
  }
  for (int32_t id : out.sampling.stop_token_ids) {
    if (id < 0 || id >= res.vocab_size) {
      return bad_request(req.request_id, "invalid_request",
                         "'stop_token_ids' holds " + std::to_string(id) + ", outside the vocabulary [0, " +
                             std::to_string(res.vocab_size) + ")");
    }
  }
  for (int32_t id : out.prompt_ids) {
    if (id < 0 || id >= res.vocab_size) {
      return bad_request(req.request_id, "invalid_request",
                         "token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                             std::to_string(res.vocab_size) + ")");
    }
  }
  const int32_t prompt_len = static_cast<int32_t>(out.prompt_ids.size());
  if (prompt_len >= res.max_model_len) {
    return bad_request(req.request_id, "context_length_exceeded",
                       "This model's maximum context length is " + std::to_string(res.max_model_len) +
                           " tokens. However, your prompt has " + std::to_string(prompt_len) +
                           " tokens (no room for any output).");
  }
  if (out.sampling.max_tokens <= 0) {
    out.sampling.max_tokens = res.max_model_len - prompt_len;  // "until the context is full"
  } else if (prompt_len + out.sampling.max_tokens > res.max_model_len) {
    return bad_request(req.request_id, "context_length_exceeded",
                       "This model's maximum context length is " + std::to_string(res.max_model_len) +
                           " tokens. However, you requested " + std::to_string(prompt_len + out.sampling.max_tokens) +
                           " tokens (" + std::to_string(prompt_len) + " in the prompt, " +
                           std::to_string(out.sampling.max_tokens) + " for the completion).");
  }
  return out;
}

}  // namespace zinfer::actors
