#include "actors/pipeline/generation_defaults.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "gateway/request_fields.h"
#include "runtime/config.h"

namespace zinfer::actors {

namespace {

using nlohmann::json;

// The default is something the gateway does (the field is honoured, or the value is its no-op).
void check_supported(const std::string& origin, const char* key, const json& value) {
  const gateway::RequestField* f = gateway::find_request_field(gateway::ApiKind::kChat, key);
  if (f && f->use == gateway::FieldUse::kDefaultOnly && !f->no_op(value)) {
    throw runtime::ConfigError(origin + ": '" + key + "' = " + value.dump() + " " + std::string(f->why) +
                               " (--generation-config vllm leaves the model's defaults out)");
  }
}

}  // namespace

gateway::SamplingDefaults parse_sampling_defaults(const std::string& text, const std::string& origin) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) throw runtime::ConfigError(origin + ": not a JSON object");
  gateway::SamplingDefaults d;
  auto number = [&](const char* key, std::optional<double>& out) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return;
    if (!it->is_number()) throw runtime::ConfigError(origin + ": '" + key + "' must be a number");
    check_supported(origin, key, *it);
    out = it->get<double>();
  };
  number("temperature", d.temperature);
  number("top_p", d.top_p);
  number("min_p", d.min_p);
  number("repetition_penalty", d.repetition_penalty);
  if (auto it = j.find("top_k"); it != j.end() && !it->is_null()) {
    if (!it->is_number_integer()) throw runtime::ConfigError(origin + ": 'top_k' must be an integer");
    d.top_k = it->get<int64_t>();
  }
  return d;
}

gateway::SamplingDefaults load_sampling_defaults(const std::string& source, const std::string& model_dir) {
  namespace fs = std::filesystem;
  if (source == "vllm") return {};
  const bool automatic = source == "auto";
  const fs::path file = fs::path(automatic ? model_dir : source) / "generation_config.json";
  if (!fs::exists(file)) {
    if (automatic) return {};
    throw runtime::ConfigError("generation_config '" + source + "': no generation_config.json in that folder");
  }
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) throw runtime::ConfigError(file.string() + ": cannot be read");
  return parse_sampling_defaults(text.str(), file.string());
}

}  // namespace zinfer::actors
