// Splitting a sample's text into its reasoning part and its content (reasoning_parser.h says
// where the part begins and ends), whole or as the text streams in.
//
// The stream is split on text, not token ids, so a tag may arrive in pieces ("</th" then "ink>"):
// text that could be the beginning of a tag is held back until the next delta tells, and released
// at the end of the sample. What the stream releases, concatenated, is exactly what the whole
// split gives, however the text is cut.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "gateway/reasoning/reasoning_parser.h"

namespace zinfer::gateway::reasoning {

// One release of text: either part may be empty.
struct ReasoningParts {
  std::string reasoning;
  std::string content;
};

class ReasoningStream {
 public:
  // starts_inside: the text begins inside the reasoning part; false passes everything to content.
  ReasoningStream(const ReasoningParser& parser, bool starts_inside);

  // The next piece of the sample's text; returns what can be released now.
  ReasoningParts push(std::string_view text);
  // The sample ended: releases what was held back.
  ReasoningParts finish();

  bool in_reasoning() const { return state_ != State::kContent; }

 private:
  enum class State { kReasoning, kReasoningStartDropped, kContent };
  void release(ReasoningParts& out, std::string_view text) const;

  const ReasoningParser* parser_;
  State state_;
  std::string held_;  // text that may be the beginning of a tag
};

// The whole text at once (non-stream responses): the same decisions as the stream.
ReasoningParts split_reasoning(const ReasoningParser& parser, bool starts_inside, std::string_view text);

}  // namespace zinfer::gateway::reasoning
