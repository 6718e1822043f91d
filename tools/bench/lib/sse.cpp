#include "tools/bench/lib/sse.h"

#include <stdexcept>

#include <nlohmann/json.hpp>

namespace zinfer::bench {

void SseParser::feed(std::string_view bytes, const Handler& on_event) {
  for (char c : bytes) {
    if (c == '\n' && last_was_cr_) {  // the \n of a \r\n already ended the line
      last_was_cr_ = false;
      continue;
    }
    last_was_cr_ = (c == '\r');
    if (c == '\n' || c == '\r') {
      line(partial_, on_event);
      partial_.clear();
    } else {
      partial_.push_back(c);
    }
  }
}

void SseParser::finish(const Handler& on_event) {
  if (!partial_.empty()) {
    line(partial_, on_event);
    partial_.clear();
  }
  line("", on_event);
}

void SseParser::line(std::string_view l, const Handler& on_event) {
  if (l.empty()) {
    if (has_data_) {
      const std::string data = std::move(data_);
      data_.clear();
      has_data_ = false;
      on_event(data);
    }
    return;
  }
  if (l.front() == ':') return;
  const auto colon = l.find(':');
  const std::string_view field = l.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? std::string_view() : l.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (field != "data") return;
  if (has_data_) data_.push_back('\n');
  data_.append(value);
  has_data_ = true;
}

namespace {

std::string text_of(const nlohmann::json& obj, const char* key) {
  const auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::optional<int> int_of(const nlohmann::json& obj, const char* key) {
  const auto it = obj.find(key);
  if (it == obj.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int>();
}

}  // namespace

StreamEvent interpret_openai_event(std::string_view data, ApiKind kind) {
  StreamEvent ev;
  if (data == "[DONE]") {
    ev.done = true;
    return ev;
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(data);
  } catch (const std::exception&) {
    throw std::runtime_error("malformed stream event: '" + std::string(data.substr(0, 120)) + "'");
  }
  if (!j.is_object()) throw std::runtime_error("stream event is not a JSON object: '" + std::string(data.substr(0, 120)) + "'");
  if (const auto err = j.find("error"); err != j.end() && !err->is_null()) {
    ev.error = err->is_object() ? text_of(*err, "message") : err->dump();
    if (ev.error->empty()) ev.error = err->dump();
  }
  if (const auto choices = j.find("choices"); choices != j.end() && choices->is_array() && !choices->empty()) {
    const auto& c = (*choices)[0];
    ev.choice = true;
    if (kind == ApiKind::kCompletions) {
      ev.text = text_of(c, "text");
    } else if (const auto delta = c.find("delta"); delta != c.end() && delta->is_object()) {
      // Reasoning models stream their thinking under a separate key; it is generated text too.
      ev.text = text_of(*delta, "reasoning_content") + text_of(*delta, "reasoning") + text_of(*delta, "content");
      // A chat stream's role-only first chunk announces the answer; it is no token.
      if (delta->contains("role") && delta->size() == 1 && !c.contains("logprobs")) ev.choice = false;
    }
    if (const auto fr = c.find("finish_reason"); fr != c.end() && fr->is_string()) ev.finish_reason = fr->get<std::string>();
  }
  if (const auto usage = j.find("usage"); usage != j.end() && usage->is_object()) {
    ev.completion_tokens = int_of(*usage, "completion_tokens");
    ev.prompt_tokens = int_of(*usage, "prompt_tokens");
  }
  return ev;
}

std::string openai_request_body(ApiKind kind, const std::string& model, const std::string& prompt,
                                int max_tokens, bool ignore_eos, const RequestBodyOptions& options) {
  nlohmann::json body;
  body["model"] = model;
  if (kind == ApiKind::kCompletions) {
    body["prompt"] = prompt;
    body["max_tokens"] = max_tokens;
  } else {
    body["messages"] = nlohmann::json::array({{{"role", "user"}, {"content", prompt}}});
    body["max_tokens"] = max_tokens;
    body["max_completion_tokens"] = max_tokens;
  }
  body["temperature"] = options.temperature.value_or(0.0);
  if (options.top_p) body["top_p"] = *options.top_p;
  if (options.top_k) body["top_k"] = *options.top_k;
  if (options.min_p) body["min_p"] = *options.min_p;
  body["stream"] = true;
  body["stream_options"] = {{"include_usage", true}};
  if (ignore_eos) body["ignore_eos"] = true;
  for (const auto& [key, value] : options.extra_body.items()) body[key] = value;
  // Random-token prompts may decode to invalid UTF-8; send U+FFFD rather than fail the request.
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json parse_extra_body(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    throw std::invalid_argument("--extra-body '" + text + "' is not a JSON object");
  }
  return j;
}

std::vector<std::pair<std::string, std::string>> parse_headers(const std::vector<std::string>& items) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& item : items) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) throw std::invalid_argument("--header item '" + item + "' is not KEY=VALUE");
    out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
  }
  return out;
}

}  // namespace zinfer::bench
