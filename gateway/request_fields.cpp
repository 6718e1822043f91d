#include "gateway/request_fields.h"

#include "gateway/api_error.h"

namespace zinfer::gateway {
namespace {

using nlohmann::json;

bool never(const json&) { return false; }
bool is_false(const json& v) { return v.is_boolean() && !v.get<bool>(); }
bool is_true(const json& v) { return v.is_boolean() && v.get<bool>(); }
bool is_zero(const json& v) { return v.is_number() && v.get<double>() == 0.0; }
bool is_one(const json& v) { return v.is_number() && v.get<double>() == 1.0; }
bool is_empty(const json& v) { return (v.is_array() || v.is_object() || v.is_string()) && v.empty(); }
bool is_at_most_one(const json& v) { return v.is_number_integer() && v.get<int64_t>() <= 1; }
bool is_none_choice(const json& v) { return v.is_string() && v.get<std::string>() == "none"; }
bool is_text_modality(const json& v) { return v.is_array() && v.size() == 1 && v[0] == "text"; }
bool is_default_tier(const json& v) {
  return v.is_string() && (v.get<std::string>() == "auto" || v.get<std::string>() == "default");
}

constexpr bool kC = true;   // on /v1/completions
constexpr bool kNoC = false;
constexpr bool kCh = true;  // on /v1/chat/completions
constexpr bool kNoCh = false;

RequestField honoured(std::string_view name, bool completions, bool chat) {
  return RequestField{name, completions, chat, FieldUse::kHonoured, nullptr, {}};
}

RequestField default_only(std::string_view name, bool completions, bool chat, bool (*no_op)(const json&),
                          std::string_view why) {
  return RequestField{name, completions, chat, FieldUse::kDefaultOnly, no_op, why};
}

}  // namespace

const std::vector<RequestField>& request_fields() {
  static const std::vector<RequestField> fields = {
      // Both endpoints (OpenAI's, then vLLM's sampling and extra parameters).
      honoured("model", kC, kCh),
      honoured("max_tokens", kC, kCh),
      honoured("n", kC, kCh),
      honoured("seed", kC, kCh),
      honoured("stop", kC, kCh),
      honoured("stream", kC, kCh),
      honoured("stream_options", kC, kCh),
      honoured("temperature", kC, kCh),
      honoured("top_p", kC, kCh),
      honoured("user", kC, kCh),
      honoured("logprobs", kC, kCh),
      honoured("top_k", kC, kCh),
      honoured("stop_token_ids", kC, kCh),
      honoured("include_stop_str_in_output", kC, kCh),
      honoured("ignore_eos", kC, kCh),
      honoured("min_tokens", kC, kCh),
      honoured("skip_special_tokens", kC, kCh),
      honoured("truncate_prompt_tokens", kC, kCh),
      honoured("add_special_tokens", kC, kCh),
      honoured("priority", kC, kCh),
      honoured("request_id", kC, kCh),
      honoured("return_token_ids", kC, kCh),
      honoured("predicted_output_tokens", kC, kCh),  // zinfer: the expected output length (sjf policy)
      honoured("frequency_penalty", kC, kCh),
      honoured("presence_penalty", kC, kCh),
      honoured("repetition_penalty", kC, kCh),
      honoured("min_p", kC, kCh),
      honoured("logit_bias", kC, kCh),
      honoured("bad_words", kC, kCh),
      honoured("allowed_token_ids", kC, kCh),
      default_only("best_of", kC, kCh, is_at_most_one, "is not supported (one sample per choice)"),
      default_only("use_beam_search", kC, kCh, is_false, "is not supported (no beam search)"),
      default_only("length_penalty", kC, kCh, is_one, "is not supported (it only applies to beam search)"),
      default_only("spaces_between_special_tokens", kC, kCh, is_true,
                   "= false is not supported (tokenizer.json tokenizers put no spaces between special tokens)"),
      honoured("prompt_logprobs", kC, kCh),
      honoured("return_tokens_as_token_ids", kC, kCh),
      // Structured output (gateway/structured_request.h: each value honoured or a 400 naming it).
      honoured("response_format", kC, kCh),
      honoured("structured_outputs", kC, kCh),
      honoured("guided_json", kC, kCh),
      honoured("guided_regex", kC, kCh),
      honoured("guided_choice", kC, kCh),
      honoured("guided_grammar", kC, kCh),
      honoured("guided_decoding_backend", kC, kCh),
      default_only("guided_whitespace_pattern", kC, kCh, never,
                   "is not supported: the JSON grammar's whitespace is fixed (docs/structured-output.md)"),
      default_only("structural_tag", kC, kCh, never, "is not supported (no structural tags)"),
      default_only("logits_processors", kC, kCh, never, "is not supported (no custom logits processors)"),
      honoured("cache_salt", kC, kCh),  // the prefix cache's salted roots (actors/kv/block_hash.h)
      default_only("kv_transfer_params", kC, kCh, never, "is not supported (no disaggregated serving)"),
      default_only("vllm_xargs", kC, kCh, never, "is not supported (no custom extensions)"),
      default_only("mm_processor_kwargs", kC, kCh, never, "is not supported (text models only)"),
      default_only("prompt_embeds", kC, kCh, never, "is not supported (prompts are text or token ids)"),
      honoured("echo", kC, kCh),
      // /v1/completions only.
      honoured("prompt", kC, kNoCh),
      default_only("suffix", kC, kNoCh, never, "is not supported"),
      // /v1/chat/completions only.
      honoured("messages", kNoC, kCh),
      honoured("max_completion_tokens", kNoC, kCh),
      honoured("top_logprobs", kNoC, kCh),
      honoured("add_generation_prompt", kNoC, kCh),
      honoured("chat_template_kwargs", kNoC, kCh),
      honoured("continue_final_message", kNoC, kCh),
      honoured("chat_template", kNoC, kCh),  // only when the server trusts request templates, else 400
      default_only("documents", kNoC, kCh, never, "is not supported"),
      honoured("tools", kNoC, kCh),                // gateway/tool_request.h
      honoured("tool_choice", kNoC, kCh),
      honoured("parallel_tool_calls", kNoC, kCh),
      default_only("functions", kNoC, kCh, is_empty, "is not supported (OpenAI's deprecated form): use 'tools'"),
      default_only("function_call", kNoC, kCh, is_none_choice,
                   "is not supported (OpenAI's deprecated form): use 'tool_choice'"),
      default_only("reasoning_effort", kNoC, kCh, never, "is not supported (the reasoning parsers take no effort)"),
      honoured("include_reasoning", kNoC, kCh),  // gateway/reasoning/reasoning_request.h
      default_only("thinking_token_budget", kNoC, kCh, never, "is not supported"),
      default_only("media_io_kwargs", kNoC, kCh, never, "is not supported (text models only)"),
      default_only("audio", kNoC, kCh, never, "is not supported (text output only)"),
      default_only("modalities", kNoC, kCh, is_text_modality, "is not supported: the output is [\"text\"] only"),
      default_only("prediction", kNoC, kCh, never, "is not supported (no predicted outputs)"),
      default_only("store", kNoC, kCh, is_false, "is not supported (nothing is stored)"),
      default_only("metadata", kNoC, kCh, never, "is not supported (nothing is stored)"),
      default_only("service_tier", kNoC, kCh, is_default_tier, "is not supported (one tier: \"auto\")"),
      default_only("web_search_options", kNoC, kCh, never, "is not supported"),
      default_only("verbosity", kNoC, kCh, never, "is not supported"),
      default_only("prompt_cache_key", kNoC, kCh, never, "is not supported"),
      default_only("safety_identifier", kNoC, kCh, never, "is not supported"),
  };
  return fields;
}

const RequestField* find_request_field(ApiKind kind, std::string_view name) {
  for (const auto& f : request_fields()) {
    if (f.name == name && (kind == ApiKind::kChat ? f.chat : f.completions)) return &f;
  }
  return nullptr;
}

void check_request_fields(ApiKind kind, const json& body) {
  for (const auto& [key, value] : body.items()) {
    const RequestField* f = find_request_field(kind, key);
    if (!f) {
      const bool other = find_request_field(kind == ApiKind::kChat ? ApiKind::kCompletions : ApiKind::kChat, key);
      throw invalid_param(key, "unknown field '" + key + "'" +
                                   (other ? std::string(": it belongs to ") +
                                                (kind == ApiKind::kChat ? "/v1/completions" : "/v1/chat/completions")
                                          : std::string(" (zinfer refuses fields it does not know)")));
    }
    if (f->use == FieldUse::kDefaultOnly && !value.is_null() && !f->no_op(value)) {
      throw invalid_param(key, "'" + key + "' " + std::string(f->why));
    }
  }
}

}  // namespace zinfer::gateway
