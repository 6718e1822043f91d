#include "gateway/reasoning/reasoning_split.h"

#include <algorithm>

namespace zinfer::gateway::reasoning {
namespace {

// The length of the longest suffix of `text` that is a proper prefix of `tag`.
size_t partial_tag_suffix(std::string_view text, std::string_view tag) {
  for (size_t n = std::min(text.size(), tag.size() - 1); n > 0; --n) {
    if (text.substr(text.size() - n) == tag.substr(0, n)) return n;
  }
  return 0;
}

}  // namespace

ReasoningStream::ReasoningStream(const ReasoningParser& parser, bool starts_inside)
    : parser_(&parser), state_(starts_inside ? State::kReasoning : State::kContent) {}

void ReasoningStream::release(ReasoningParts& out, std::string_view text) const {
  (state_ == State::kContent ? out.content : out.reasoning) += text;
}

ReasoningParts ReasoningStream::push(std::string_view text) {
  ReasoningParts out;
  held_ += text;
  std::string_view rest = held_;
  while (!rest.empty() && state_ != State::kContent) {
    // The start tag is looked for only until it is dropped once; the end tag always.
    const bool want_start = state_ == State::kReasoning;
    const size_t end_at = rest.find(parser_->end_tag);
    const size_t start_at = want_start ? rest.find(parser_->start_tag) : std::string_view::npos;
    if (start_at != std::string_view::npos && (end_at == std::string_view::npos || start_at < end_at)) {
      release(out, rest.substr(0, start_at));
      rest.remove_prefix(start_at + parser_->start_tag.size());
      state_ = State::kReasoningStartDropped;
      continue;
    }
    if (end_at != std::string_view::npos) {
      release(out, rest.substr(0, end_at));
      rest.remove_prefix(end_at + parser_->end_tag.size());
      state_ = State::kContent;
      break;
    }
    size_t keep = partial_tag_suffix(rest, parser_->end_tag);
    if (want_start) keep = std::max(keep, partial_tag_suffix(rest, parser_->start_tag));
    release(out, rest.substr(0, rest.size() - keep));
    rest.remove_prefix(rest.size() - keep);
    break;
  }
  if (state_ == State::kContent) {
    out.content += rest;
    rest = {};
  }
  held_ = std::string(rest);
  return out;
}

ReasoningParts ReasoningStream::finish() {
  ReasoningParts out;
  release(out, held_);
  held_.clear();
  return out;
}

ReasoningParts split_reasoning(const ReasoningParser& parser, bool starts_inside, std::string_view text) {
  ReasoningStream stream(parser, starts_inside);
  ReasoningParts out = stream.push(text);
  ReasoningParts tail = stream.finish();
  out.reasoning += tail.reasoning;
  out.content += tail.content;
  return out;
}

}  // namespace zinfer::gateway::reasoning
