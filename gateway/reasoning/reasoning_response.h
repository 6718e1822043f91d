// The reasoning part in OpenAI-shaped chat JSON, as vLLM and DeepSeek's API give it: a message's
// `reasoning_content` beside its `content` (null where a part is empty), and stream deltas whose
// `delta` carries `reasoning_content` while the reasoning part streams, then `content`.
#pragma once

#include <nlohmann/json.hpp>

#include "gateway/reasoning/reasoning_parser.h"
#include "gateway/reasoning/reasoning_split.h"

namespace zinfer::gateway::reasoning {

// A non-stream choice's message ({"role": "assistant", "content": ...}): content becomes the
// content part and reasoning_content the reasoning part. include false (include_reasoning: false)
// leaves reasoning_content null. Other keys of the message are kept.
void put_reasoning_message(nlohmann::json& message, const ReasoningParts& parts, bool include);

// A stream chunk's delta: its content is replaced by what one release gave, the parts that are
// not empty, reasoning first. Other keys of the delta are kept.
void put_reasoning_delta(nlohmann::json& delta, const ReasoningParts& parts, bool include);

}  // namespace zinfer::gateway::reasoning
