#include "gateway/reasoning/reasoning_request.h"

#include "gateway/api_error.h"

namespace zinfer::gateway::reasoning {

using nlohmann::json;

ReasoningMode parse_reasoning(bool chat, const json& body, const std::string& parser_name,
                              protocol::GenerateRequest& request) {
  ReasoningMode mode;
  if (chat && !parser_name.empty()) {
    mode.parser = find_reasoning_parser(parser_name);
    // The setting's rule refuses unknown names at start-up; a gateway built by hand may not.
    if (!mode.parser) throw ApiError(500, "unknown reasoning parser '" + parser_name + "'");
    mode.starts_inside = starts_in_reasoning(*mode.parser, request);
  }
  if (auto it = body.find("include_reasoning"); chat && it != body.end() && !it->is_null()) {
    if (!it->is_boolean()) throw invalid_param("include_reasoning", "'include_reasoning' must be a boolean");
    mode.include = it->get<bool>();
    if (!mode.include && !mode.active()) {
      throw invalid_param("include_reasoning",
                          "'include_reasoning' = false needs a reasoning parser (zinfer serve --reasoning-parser " +
                              reasoning_parser_names() + "); this server has none");
    }
  }
  if (mode.active() && mode.starts_inside && request.sampling.structured) {
    request.sampling.structured->begin_after = std::string(mode.parser->end_tag);
  }
  return mode;
}

}  // namespace zinfer::gateway::reasoning
