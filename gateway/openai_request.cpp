#include "gateway/openai_request.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include "gateway/api_error.h"
#include "gateway/grammar_check.h"
#include "gateway/reasoning/reasoning_request.h"
#include "gateway/request_fields.h"
#include "gateway/structured_request.h"

namespace zinfer::gateway {
namespace {

using nlohmann::json;

constexpr int kMaxN = 128;
constexpr int kMaxTopLogprobs = 20;

// A field counts as given when present and not null (OpenAI's SDKs send null for "unset").
const json* field(const json& body, const char* name) {
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) return nullptr;
  return &*it;
}

int64_t get_int(const json& v, const char* name) {
  if (!v.is_number_integer()) throw invalid_param(name, std::string("'") + name + "' must be an integer");
  if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max())) {
    throw invalid_param(name, std::string("'") + name + "' is out of range");
  }
  return v.get<int64_t>();
}

int32_t get_int32(const json& v, const char* name) {
  int64_t x = get_int(v, name);
  if (x < std::numeric_limits<int32_t>::min() || x > std::numeric_limits<int32_t>::max()) {
    throw invalid_param(name, std::string("'") + name + "' is out of range");
  }
  return static_cast<int32_t>(x);
}

double get_number(const json& v, const char* name) {
  if (!v.is_number()) throw invalid_param(name, std::string("'") + name + "' must be a number");
  return v.get<double>();
}

bool get_bool(const json& v, const char* name) {
  if (!v.is_boolean()) throw invalid_param(name, std::string("'") + name + "' must be a boolean");
  return v.get<bool>();
}

std::string get_string(const json& v, const char* name) {
  if (!v.is_string()) throw invalid_param(name, std::string("'") + name + "' must be a string");
  return v.get<std::string>();
}

bool is_token_id_array(const json& v) {
  if (!v.is_array() || v.empty()) return false;
  for (const auto& e : v) {
    if (!e.is_number_integer()) return false;
  }
  return true;
}

std::vector<int32_t> token_ids(const json& v) {
  std::vector<int32_t> ids;
  ids.reserve(v.size());
  for (const auto& e : v) {
    int64_t id = get_int(e, "prompt");
    if (id < 0 || id > std::numeric_limits<int32_t>::max()) {
      throw invalid_param("prompt", "token id " + std::to_string(id) + " is out of range");
    }
    ids.push_back(static_cast<int32_t>(id));
  }
  return ids;
}

// At most this many prompts in one request (each is an engine request of its own).
constexpr size_t kMaxBatchPrompts = 1024;

// prompt: a string, an array of token ids, or a batch: an array of strings or of token-id arrays
// (OpenAI's four forms). Each prompt of a batch runs as an engine request of its own.
void parse_prompt(const json& body, OpenAiRequest& out) {
  const json* p = field(body, "prompt");
  if (!p) throw invalid_param("prompt", "'prompt' is required");
  auto one = [&](const json& v, size_t index, bool in_batch) {
    const std::string where = in_batch ? "prompt[" + std::to_string(index) + "]" : "prompt";
    PromptInput in;
    if (v.is_string()) {
      in.text = v.get<std::string>();
      if (in.text.empty()) throw invalid_param("prompt", "'" + where + "' must not be empty");
    } else if (is_token_id_array(v)) {
      in.ids = token_ids(v);
    } else {
      throw invalid_param("prompt", "'" + where + "' must be a string or a non-empty array of token ids");
    }
    out.prompts.push_back(std::move(in));
  };
  if (p->is_array() && !p->empty() && !is_token_id_array(*p)) {
    if (p->size() > kMaxBatchPrompts) {
      throw invalid_param("prompt", "a batch holds at most " + std::to_string(kMaxBatchPrompts) + " prompts");
    }
    for (size_t i = 0; i < p->size(); ++i) {
      // OpenAI's schema: a list of strings or a list of token-id lists, not both.
      if ((*p)[i].is_string() != (*p)[0].is_string()) {
        throw invalid_param("prompt", "'prompt' mixes strings and token-id arrays: send one form per request");
      }
      one((*p)[i], i, true);
    }
  } else {
    one(*p, 0, false);
  }
  out.request.prompt = out.prompts.front().text;
  out.request.prompt_ids = out.prompts.front().ids;
}

std::string message_content(const json& content, size_t index) {
  std::string where = "messages[" + std::to_string(index) + "].content";
  if (content.is_string()) return content.get<std::string>();
  if (content.is_null()) return {};
  if (!content.is_array()) throw invalid_param(where, "'" + where + "' must be a string or an array of parts");
  std::string text;
  for (const auto& part : content) {
    if (!part.is_object()) throw invalid_param(where, "each part of '" + where + "' must be an object");
    const json* type = field(part, "type");
    if (!type || !type->is_string() || type->get<std::string>() != "text") {
      throw invalid_param(where, "only parts of type 'text' are supported in '" + where + "'");
    }
    const json* t = field(part, "text");
    if (!t || !t->is_string()) throw invalid_param(where, "a text part of '" + where + "' needs a string 'text'");
    text += t->get<std::string>();
  }
  return text;
}

void parse_messages(const json& body, protocol::GenerateRequest& req, bool trust_chat_template) {
  const json* m = field(body, "messages");
  if (!m) throw invalid_param("messages", "'messages' is required");
  if (!m->is_array() || m->empty()) throw invalid_param("messages", "'messages' must be a non-empty array");
  for (size_t i = 0; i < m->size(); ++i) {
    const json& msg = (*m)[i];
    std::string where = "messages[" + std::to_string(i) + "]";
    if (!msg.is_object()) throw invalid_param(where, "'" + where + "' must be an object");
    const json* role = field(msg, "role");
    if (!role || !role->is_string()) throw invalid_param(where + ".role", "'" + where + ".role' must be a string");
    // Any role the chat template accepts (vLLM's custom roles): a template that refuses one
    // (raise_exception) makes the request a 400 from the tokenizer stage.
    std::string r = role->get<std::string>();
    if (r.empty()) throw invalid_param(where + ".role", "'" + where + ".role' must not be empty");
    for (const auto& [key, value] : msg.items()) {
      if (key != "role" && key != "content" && !is_message_tool_field(key) && !value.is_null()) {
        throw invalid_param(where + "." + key, "'" + where + "." + key +
                                                   "' is not supported (messages carry role, content, name, "
                                                   "tool_calls and tool_call_id)");
      }
    }
    auto content_it = msg.find("content");
    if (content_it == msg.end() && r != "assistant") {
      throw invalid_param(where + ".content", "'" + where + ".content' is required");
    }
    protocol::ChatMessage cm;
    cm.role = r;
    cm.content = content_it == msg.end() ? std::string() : message_content(*content_it, i);
    parse_message_tool_fields(msg, i, cm);
    req.messages.push_back(std::move(cm));
  }
  req.is_chat = true;
  if (const json* v = field(body, "add_generation_prompt")) req.add_generation_prompt = get_bool(*v, "add_generation_prompt");
  if (const json* v = field(body, "continue_final_message")) {
    req.continue_final_message = get_bool(*v, "continue_final_message");
    if (req.continue_final_message && req.add_generation_prompt) {
      // vLLM's check: the two ask for opposite endings of the prompt.
      throw invalid_param("continue_final_message",
                          "cannot set both 'continue_final_message' and 'add_generation_prompt' to true "
                          "(send 'add_generation_prompt': false)");
    }
  }
  if (const json* v = field(body, "chat_template")) {
    if (!trust_chat_template) {
      throw invalid_param("chat_template",
                          "'chat_template' is refused: the server does not accept chat templates from requests "
                          "(start it with --trust-request-chat-template to allow them)");
    }
    req.chat_template = get_string(*v, "chat_template");
    if (req.chat_template.empty()) throw invalid_param("chat_template", "'chat_template' must not be empty");
  }
  if (const json* kw = field(body, "chat_template_kwargs")) {
    if (!kw->is_object()) throw invalid_param("chat_template_kwargs", "'chat_template_kwargs' must be an object");
    json passed = json::object();
    for (const auto& [key, value] : kw->items()) {
      if (key == "enable_thinking") {
        if (!value.is_null()) req.enable_thinking = get_bool(value, "chat_template_kwargs.enable_thinking");
      } else if (key == "messages" || key == "add_generation_prompt" || key == "continue_final_message" ||
                 key == "tools" || key == "documents") {
        // The request's own fields set these; two sources for one variable would be a guess.
        throw invalid_param("chat_template_kwargs." + key, "'chat_template_kwargs." + key +
                                                               "' is set by the request's field of that name");
      } else {
        passed[key] = value;  // given to the template as a variable of that name
      }
    }
    if (!passed.empty()) req.chat_template_kwargs = passed.dump();
  }
}

void parse_stop(const json& body, protocol::SamplingParams& s) {
  if (const json* stop = field(body, "stop")) {
    if (stop->is_string()) {
      s.stop.push_back(stop->get<std::string>());
    } else if (stop->is_array()) {
      for (const auto& e : *stop) s.stop.push_back(get_string(e, "stop"));
    } else {
      throw invalid_param("stop", "'stop' must be a string or an array of strings");
    }
  }
  if (const json* ids = field(body, "stop_token_ids")) {
    if (!ids->is_array()) throw invalid_param("stop_token_ids", "'stop_token_ids' must be an array of integers");
    for (const auto& e : *ids) s.stop_token_ids.push_back(get_int32(e, "stop_token_ids"));
  }
}

// The logits processing fields (OpenAI's penalties and logit_bias, vLLM's others), with vLLM's
// meaning; the token ids are checked against the vocabulary by the tokenizer stage.
void parse_logits_processing(const json& body, protocol::SamplingParams& s) {
  auto number = [&](const char* name, float& out) {
    if (const json* v = field(body, name)) out = static_cast<float>(get_number(*v, name));
  };
  number("repetition_penalty", s.repetition_penalty);
  number("frequency_penalty", s.frequency_penalty);
  number("presence_penalty", s.presence_penalty);
  number("min_p", s.min_p);
  if (const json* v = field(body, "logit_bias")) {
    if (!v->is_object()) throw invalid_param("logit_bias", "'logit_bias' must be an object of token ids to numbers");
    for (const auto& [key, value] : v->items()) {
      // OpenAI's form: token ids as strings ("50256": -100); each bias clamped to [-100, 100].
      size_t used = 0;
      long long id = -1;
      try {
        id = std::stoll(key, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != key.size()) {
        throw invalid_param("logit_bias", "'logit_bias' keys must be token ids, got '" + key + "'");
      }
      if (id < 0 || id > std::numeric_limits<int32_t>::max()) {
        throw invalid_param("logit_bias", "'logit_bias': token id " + key + " is out of range");
      }
      const double bias = get_number(value, "logit_bias");
      if (!std::isfinite(bias)) throw invalid_param("logit_bias", "'logit_bias' values must be finite numbers");
      s.logit_bias.push_back({static_cast<int32_t>(id), static_cast<float>(std::clamp(bias, -100.0, 100.0))});
    }
  }
  if (const json* v = field(body, "allowed_token_ids")) {
    if (!v->is_array() || v->empty()) {
      throw invalid_param("allowed_token_ids", "'allowed_token_ids' must be a non-empty array of token ids");
    }
    for (const auto& e : *v) s.allowed_token_ids.push_back(get_int32(e, "allowed_token_ids"));
  }
  if (const json* v = field(body, "bad_words")) {
    if (!v->is_array()) throw invalid_param("bad_words", "'bad_words' must be an array of strings");
    for (const auto& e : *v) s.bad_words.push_back(get_string(e, "bad_words"));
  }
  if (const json* v = field(body, "truncate_prompt_tokens")) {
    s.truncate_prompt_tokens = get_int32(*v, "truncate_prompt_tokens");
    // 0 is the protocol's "off"; a client that sends it would ask for an empty prompt.
    if (s.truncate_prompt_tokens == 0 || s.truncate_prompt_tokens < -1) {
      throw invalid_param("truncate_prompt_tokens", "'truncate_prompt_tokens' must be -1 or at least 1");
    }
  }
}

void parse_logprobs(ApiKind kind, const json& body, OpenAiRequest& out, int max_logprobs) {
  auto& s = out.request.sampling;
  if (kind == ApiKind::kCompletions) {
    if (const json* v = field(body, "logprobs")) {
      int32_t k = get_int32(*v, "logprobs");
      if (k < 0 || k > max_logprobs) {
        throw invalid_param("logprobs", "'logprobs' must be between 0 and " + std::to_string(max_logprobs));
      }
      s.logprobs = true;
      s.top_logprobs = k;
    }
  } else {
    if (const json* v = field(body, "logprobs")) s.logprobs = get_bool(*v, "logprobs");
    if (const json* v = field(body, "top_logprobs")) {
      int32_t k = get_int32(*v, "top_logprobs");
      if (k < 0 || k > max_logprobs) {
        throw invalid_param("top_logprobs", "'top_logprobs' must be between 0 and " + std::to_string(max_logprobs));
      }
      if (k > 0 && !s.logprobs) throw invalid_param("top_logprobs", "'top_logprobs' needs 'logprobs': true");
      s.top_logprobs = k;
    }
  }
  out.want_logprobs = s.logprobs;
}

// vLLM's prompt_logprobs (both endpoints), and what echo with logprobs needs of the prompt. The
// engine scores the prompt when either asks; the detokenizer returns the prompt's ids and text
// when echo, return_token_ids or prompt logprobs need them.
void parse_prompt_logprobs(const json& body, OpenAiRequest& out, int max_logprobs) {
  auto& s = out.request.sampling;
  if (const json* v = field(body, "prompt_logprobs")) {
    const int32_t k = get_int32(*v, "prompt_logprobs");
    if (k < 0 || k > max_logprobs) {
      throw invalid_param("prompt_logprobs", "'prompt_logprobs' must be between 0 and " + std::to_string(max_logprobs) +
                                                 " (-1, the whole vocabulary, is not supported)");
    }
    if (out.stream) {
      throw invalid_param("prompt_logprobs", "'prompt_logprobs' are not available when 'stream' is true");
    }
    out.prompt_logprobs = k;
    s.prompt_logprobs = k;
  }
  // Completions' echo with logprobs: the prompt's tokens are listed with their logprobs and
  // `logprobs` alternatives (vLLM sets prompt_logprobs to logprobs then).
  if (out.kind == ApiKind::kCompletions && out.echo && out.want_logprobs) {
    s.prompt_logprobs = std::max(s.prompt_logprobs, s.top_logprobs);
  }
  s.return_prompt = (out.kind == ApiKind::kCompletions && out.echo) || out.return_token_ids || s.prompt_logprobs >= 0;
}

void parse_sampling(ApiKind kind, const json& body, OpenAiRequest& out, const HttpOptions& options) {
  auto& s = out.request.sampling;
  bool max_tokens_given = false;
  const char* max_name = "max_tokens";
  const json* mt = nullptr;
  if (kind == ApiKind::kChat && (mt = field(body, "max_completion_tokens"))) {
    max_name = "max_completion_tokens";
  } else {
    mt = field(body, "max_tokens");
  }
  if (mt) {
    s.max_tokens = get_int32(*mt, max_name);
    if (s.max_tokens == 0 && out.echo && kind == ApiKind::kCompletions) {
      // The scoring call: the engine generates one token, which the response leaves out.
      out.echo_only = true;
      s.max_tokens = 1;
    }
    if (s.max_tokens <= 0) {
      throw invalid_param(max_name, std::string("'") + max_name + "' must be at least 1 (0 only with 'echo': true)");
    }
    max_tokens_given = true;
  }
  // OpenAI's defaults: 16 for completions; for chat, as many as the context leaves after the
  // prompt: max_tokens 0 in the protocol, resolved by the tokenizer stage once the prompt's
  // length is known.
  const bool until_context_full = !max_tokens_given && kind == ApiKind::kChat;
  if (!max_tokens_given) s.max_tokens = 16;
  if (const json* v = field(body, "min_tokens")) s.min_tokens = get_int32(*v, "min_tokens");
  if (const json* v = field(body, "temperature")) s.temperature = static_cast<float>(get_number(*v, "temperature"));
  if (const json* v = field(body, "top_p")) s.top_p = static_cast<float>(get_number(*v, "top_p"));
  if (const json* v = field(body, "top_k")) {
    s.top_k = get_int32(*v, "top_k");
    if (s.top_k == 0) s.top_k = -1;  // vLLM's convention: 0 also means off
  }
  if (const json* v = field(body, "seed")) s.seed = get_int(*v, "seed");
  if (const json* v = field(body, "n")) s.n = get_int32(*v, "n");
  if (const json* v = field(body, "ignore_eos")) s.ignore_eos = get_bool(*v, "ignore_eos");
  if (const json* v = field(body, "skip_special_tokens")) s.skip_special_tokens = get_bool(*v, "skip_special_tokens");
  parse_stop(body, s);
  parse_logits_processing(body, s);
  if (const json* v = field(body, "include_stop_str_in_output")) {
    s.include_stop_str_in_output = get_bool(*v, "include_stop_str_in_output");
  }
  parse_logprobs(kind, body, out, options.max_logprobs);
  parse_prompt_logprobs(body, out, options.max_logprobs);
  validate_sampling(s, options.max_model_len);
  if (until_context_full) s.max_tokens = 0;
  if (mt && s.min_tokens > s.max_tokens) throw invalid_param("min_tokens", "'min_tokens' must not exceed 'max_tokens'");

  for (const PromptInput& in : out.prompts) {
    if (options.max_model_len <= 0 || in.ids.empty()) continue;
    int64_t prompt = static_cast<int64_t>(in.ids.size());
    if (s.truncate_prompt_tokens > 0) prompt = std::min<int64_t>(prompt, s.truncate_prompt_tokens);
    if (s.truncate_prompt_tokens == -1) prompt = std::min<int64_t>(prompt, options.max_model_len);
    int64_t total = prompt + (max_tokens_given ? s.max_tokens : 1);
    if (total > options.max_model_len) {
      throw invalid_param("prompt", "this model's maximum context length is " + std::to_string(options.max_model_len) +
                                        " tokens; the request asks for " + std::to_string(total) + " (" +
                                        std::to_string(prompt) + " in the prompt, " +
                                        std::to_string(total - prompt) + " to generate)");
    }
  }
}

}  // namespace

void parse_chat_messages(const json& body, protocol::GenerateRequest& request, bool trust_chat_template) {
  parse_messages(body, request, trust_chat_template);
}

bool serves_model(const HttpOptions& options, const std::string& name) {
  if (name == options.served_model_name) return true;
  const auto& aliases = options.served_model_aliases;
  return std::find(aliases.begin(), aliases.end(), name) != aliases.end();
}

void apply_sampling_defaults(const SamplingDefaults& defaults, json& body) {
  auto fill = [&](const char* name, const auto& value) {
    if (value && !field(body, name)) body[name] = *value;
  };
  fill("temperature", defaults.temperature);
  fill("top_p", defaults.top_p);
  fill("top_k", defaults.top_k);
  fill("min_p", defaults.min_p);
  fill("repetition_penalty", defaults.repetition_penalty);
}

void validate_sampling(const protocol::SamplingParams& s, int max_model_len) {
  if (s.max_tokens <= 0) throw invalid_param("max_tokens", "'max_tokens' must be at least 1");
  if (max_model_len > 0 && s.max_tokens > max_model_len) {
    throw invalid_param("max_tokens", "'max_tokens' " + std::to_string(s.max_tokens) +
                                          " exceeds the model's context length " + std::to_string(max_model_len));
  }
  if (s.min_tokens < 0) throw invalid_param("min_tokens", "'min_tokens' must not be negative");
  if (!std::isfinite(s.temperature) || s.temperature < 0.0f) {
    throw invalid_param("temperature", "'temperature' must be a number >= 0");
  }
  if (!std::isfinite(s.top_p) || s.top_p <= 0.0f || s.top_p > 1.0f) {
    throw invalid_param("top_p", "'top_p' must be in (0, 1]");
  }
  if (s.top_k < -1 || s.top_k == 0) throw invalid_param("top_k", "'top_k' must be -1 (off) or at least 1");
  if (s.n < 1 || s.n > kMaxN) throw invalid_param("n", "'n' must be between 1 and " + std::to_string(kMaxN));
  if (s.top_logprobs < 0 || s.top_logprobs > kMaxTopLogprobs) {
    throw invalid_param("top_logprobs", "'top_logprobs' must be between 0 and " + std::to_string(kMaxTopLogprobs));
  }
  if (s.prompt_logprobs < -1 || s.prompt_logprobs > kMaxTopLogprobs) {
    throw invalid_param("prompt_logprobs", "'prompt_logprobs' must be -1 (off) or between 0 and " +
                                               std::to_string(kMaxTopLogprobs));
  }
  for (const auto& stop : s.stop) {
    if (stop.empty()) throw invalid_param("stop", "'stop' strings must not be empty");
  }
  for (int32_t id : s.stop_token_ids) {
    if (id < 0) throw invalid_param("stop_token_ids", "'stop_token_ids' must not be negative");
  }
  // vLLM's ranges for the logits processing fields.
  if (!std::isfinite(s.repetition_penalty) || s.repetition_penalty <= 0.0f) {
    throw invalid_param("repetition_penalty", "'repetition_penalty' must be a number > 0");
  }
  if (!(s.frequency_penalty >= -2.0f && s.frequency_penalty <= 2.0f)) {
    throw invalid_param("frequency_penalty", "'frequency_penalty' must be in [-2, 2]");
  }
  if (!(s.presence_penalty >= -2.0f && s.presence_penalty <= 2.0f)) {
    throw invalid_param("presence_penalty", "'presence_penalty' must be in [-2, 2]");
  }
  if (!(s.min_p >= 0.0f && s.min_p <= 1.0f)) throw invalid_param("min_p", "'min_p' must be in [0, 1]");
  for (const auto& b : s.logit_bias) {
    if (b.token < 0) throw invalid_param("logit_bias", "'logit_bias' token ids must not be negative");
    if (!(b.bias >= -100.0f && b.bias <= 100.0f)) throw invalid_param("logit_bias", "'logit_bias' values must be in [-100, 100]");
  }
  for (int32_t id : s.allowed_token_ids) {
    if (id < 0) throw invalid_param("allowed_token_ids", "'allowed_token_ids' must not be negative");
  }
  for (const auto& word : s.bad_words) {
    if (word.find_first_not_of(" \t\n\r\f\v") == std::string::npos) {
      throw invalid_param("bad_words", "'bad_words' entries must contain more than white space");
    }
  }
  if (s.truncate_prompt_tokens < -1) {
    throw invalid_param("truncate_prompt_tokens", "'truncate_prompt_tokens' must be -1 or at least 1");
  }
  if (max_model_len > 0 && s.truncate_prompt_tokens > max_model_len) {
    throw invalid_param("truncate_prompt_tokens", "'truncate_prompt_tokens' " + std::to_string(s.truncate_prompt_tokens) +
                                                      " is greater than max_model_len " + std::to_string(max_model_len));
  }
}

void validate_generate_request(const protocol::GenerateRequest& req, int max_model_len) {
  int inputs = (!req.prompt.empty() ? 1 : 0) + (!req.prompt_ids.empty() ? 1 : 0) + (!req.messages.empty() ? 1 : 0);
  if (inputs != 1) throw invalid_param("prompt", "exactly one of prompt, prompt_ids and messages must be given");
  if (req.is_chat != !req.messages.empty()) {
    throw invalid_param("messages", "is_chat must be set exactly when messages are given");
  }
  for (int32_t id : req.prompt_ids) {
    if (id < 0) throw invalid_param("prompt_ids", "token id " + std::to_string(id) + " is negative");
  }
  int64_t prompt_len = static_cast<int64_t>(req.prompt_ids.size());
  if (req.sampling.truncate_prompt_tokens > 0) prompt_len = std::min<int64_t>(prompt_len, req.sampling.truncate_prompt_tokens);
  if (max_model_len > 0 && prompt_len >= max_model_len) {
    throw invalid_param("prompt_ids", "the prompt has " + std::to_string(prompt_len) +
                                          " tokens; this model's maximum context length is " +
                                          std::to_string(max_model_len));
  }
  validate_sampling(req.sampling, max_model_len);
  if (!req.tools.empty()) {
    // The chat template renders them: only chat requests have one.
    if (!req.is_chat) throw invalid_param("tools", "'tools' needs chat messages");
    if (!nlohmann::json::accept(req.tools) || !nlohmann::json::parse(req.tools).is_array()) {
      throw invalid_param("tools", "'tools' must be the JSON text of an array of tools");
    }
  }
  if (req.sampling.structured) shared_grammar_check().check(*req.sampling.structured, "sampling.structured");
  if (req.predicted_output_tokens < 0) {
    throw invalid_param("predicted_output_tokens", "'predicted_output_tokens' must be a positive integer (or 0 for none)");
  }
}

OpenAiRequest parse_openai_request(ApiKind kind, std::string_view body_text, const HttpOptions& options) {
  json body = json::parse(body_text, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) throw ApiError(400, "the request body is not valid JSON");
  if (!body.is_object()) throw ApiError(400, "the request body must be a JSON object");

  apply_sampling_defaults(options.sampling_defaults, body);
  check_request_fields(kind, body);

  OpenAiRequest out;
  out.kind = kind;
  auto& req = out.request;
  if (const json* m = field(body, "model")) {
    req.model = get_string(*m, "model");
    if (!serves_model(options, req.model)) throw ApiError(404, "the model '" + req.model + "' does not exist", "model");
  } else {
    req.model = options.served_model_name;
  }
  if (kind == ApiKind::kCompletions) {
    parse_prompt(body, out);
  } else {
    parse_messages(body, req, options.trust_request_chat_template);
  }
  // Read before the sampling: echo changes what max_tokens 0 means, stream what prompt_logprobs may.
  if (const json* v = field(body, "echo")) out.echo = get_bool(*v, "echo");
  if (const json* v = field(body, "stream")) out.stream = get_bool(*v, "stream");
  if (const json* v = field(body, "return_token_ids")) out.return_token_ids = get_bool(*v, "return_token_ids");
  if (const json* v = field(body, "return_tokens_as_token_ids")) {
    out.return_tokens_as_token_ids = get_bool(*v, "return_tokens_as_token_ids");
  }
  parse_sampling(kind, body, out, options);
  // The constraint fields first: a forced tool call adds its own, and refuses a second one.
  req.sampling.structured = parse_structured_output(body, body_text);
  if (kind == ApiKind::kChat) out.tools = parse_tool_request(body, body_text, options, req);
  out.reasoning = reasoning::parse_reasoning(kind == ApiKind::kChat, body, options.reasoning_parser, req);
  if (const json* v = field(body, "add_special_tokens")) req.add_special_tokens = get_bool(*v, "add_special_tokens") ? 1 : 0;
  if (const json* v = field(body, "request_id")) {
    out.client_request_id = get_string(*v, "request_id");
    if (out.client_request_id.empty()) throw invalid_param("request_id", "'request_id' must not be empty");
  }
  if (const json* v = field(body, "priority")) req.priority = get_int32(*v, "priority");
  // OpenAI's end-user id: the tenant whose share the fair scheduling policy keeps.
  if (const json* v = field(body, "user")) req.tenant = get_string(*v, "user");
  // vLLM's cache_salt: prefix-cache hits only between requests with the same salt.
  if (const json* v = field(body, "cache_salt")) {
    req.cache_salt = get_string(*v, "cache_salt");
    if (req.cache_salt.empty()) throw invalid_param("cache_salt", "'cache_salt' must be a non-empty string");
  }
  // zinfer extension: the expected output length, for the sjf scheduling policy.
  if (const json* v = field(body, "predicted_output_tokens")) {
    req.predicted_output_tokens = get_int32(*v, "predicted_output_tokens");
    if (req.predicted_output_tokens < 1) {
      throw invalid_param("predicted_output_tokens", "'predicted_output_tokens' must be a positive integer");
    }
  }
  if (const json* so = field(body, "stream_options")) {
    if (!so->is_object()) throw invalid_param("stream_options", "'stream_options' must be an object");
    if (!out.stream) throw invalid_param("stream_options", "'stream_options' is only allowed with 'stream': true");
    for (const auto& [key, value] : so->items()) {
      if (value.is_null()) continue;
      if (key == "include_usage") {
        out.include_usage = get_bool(value, "stream_options.include_usage");
      } else if (key == "continuous_usage_stats") {
        out.continuous_usage = get_bool(value, "stream_options.continuous_usage_stats");
      } else {
        throw invalid_param("stream_options." + key, "unknown field 'stream_options." + key + "'");
      }
    }
    if (out.continuous_usage && !out.include_usage) {
      // vLLM sends no usage then; zinfer says so instead of ignoring the field.
      throw invalid_param("stream_options.continuous_usage_stats",
                          "'stream_options.continuous_usage_stats' needs 'stream_options.include_usage': true");
    }
  }
  return out;
}

protocol::GenerateRequest request_for(const OpenAiRequest& request, size_t index) {
  protocol::GenerateRequest r = request.request;
  if (index < request.prompts.size()) {
    r.prompt = request.prompts[index].text;
    r.prompt_ids = request.prompts[index].ids;
  }
  return r;
}

}  // namespace zinfer::gateway
