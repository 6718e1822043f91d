#include "gateway/tool_stream.h"

namespace zinfer::gateway {

using nlohmann::json;

ToolCallStream::ToolCallStream(const tools::ToolParser& parser, size_t max_calls)
    : parser_(parser), max_calls_(max_calls) {}

tools::ParsedOutput ToolCallStream::parse(bool final) const {
  tools::ParsedOutput parsed = parser_.parse(text_, final);
  if (parsed.calls.size() > max_calls_) {
    parsed.calls.resize(max_calls_);
    parsed.texts.resize(max_calls_ + 1);
  }
  return parsed;
}

std::vector<json> ToolCallStream::feed(std::string_view text) {
  if (text.empty() || finished_) return {};
  text_ += text;
  return send(parse(false), false);
}

std::vector<json> ToolCallStream::finish() {
  if (finished_) return {};
  finished_ = true;
  final_ = parse(true);
  return send(final_, true);
}

std::vector<json> ToolCallStream::send(const tools::ParsedOutput& parsed, bool final) {
  std::vector<json> deltas;
  // Only growth is sent: a stream cannot take back what it sent, so a later parse that disagrees
  // (an output found malformed at the end) changes nothing already out.
  const std::string content = parsed.content(final);
  if (content.size() > content_sent_.size() && content.starts_with(content_sent_)) {
    deltas.push_back({{"content", content.substr(content_sent_.size())}});
    content_sent_ = content;
  }
  for (size_t i = 0; i < parsed.calls.size(); ++i) {
    const tools::ParsedCall& call = parsed.calls[i];
    if (i == sent_.size()) {
      sent_.push_back({parser_.call_id(), call.name, ""});
      deltas.push_back({{"tool_calls", json::array({{{"index", i},
                                                     {"id", sent_[i].id},
                                                     {"type", "function"},
                                                     {"function", {{"name", call.name}, {"arguments", ""}}}}})}});
    }
    SentCall& sent = sent_[i];
    if (sent.name != call.name) continue;
    if (call.arguments.size() > sent.arguments.size() && call.arguments.starts_with(sent.arguments)) {
      deltas.push_back({{"tool_calls", json::array({{{"index", i},
                                                     {"function", {{"arguments", call.arguments.substr(sent.arguments.size())}}}}})}});
      sent.arguments = call.arguments;
    }
  }
  return deltas;
}

json ToolCallStream::content() const {
  const std::string content = final_.content(true);
  if (content.empty() && called()) return nullptr;
  return content;
}

json ToolCallStream::tool_calls() const {
  json calls = json::array();
  for (size_t i = 0; i < final_.calls.size(); ++i) {
    const auto& call = final_.calls[i];
    // A streamed call keeps the id its first delta carried.
    std::string id = i < sent_.size() ? sent_[i].id : parser_.call_id();
    calls.push_back({{"id", id}, {"type", "function"}, {"function", {{"name", call.name}, {"arguments", call.arguments}}}});
  }
  return calls;
}

}  // namespace zinfer::gateway
