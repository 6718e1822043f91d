#include "gateway/reasoning/reasoning_response.h"

namespace zinfer::gateway::reasoning {

using nlohmann::json;

void put_reasoning_message(json& message, const ReasoningParts& parts, bool include) {
  message["content"] = parts.content.empty() ? json(nullptr) : json(parts.content);
  message["reasoning_content"] = include && !parts.reasoning.empty() ? json(parts.reasoning) : json(nullptr);
}

void put_reasoning_delta(json& delta, const ReasoningParts& parts, bool include) {
  if (!delta.is_object()) delta = json::object();
  delta.erase("content");
  if (include && !parts.reasoning.empty()) delta["reasoning_content"] = parts.reasoning;
  if (!parts.content.empty()) delta["content"] = parts.content;
}

}  // namespace zinfer::gateway::reasoning
