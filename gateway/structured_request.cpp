#include "gateway/structured_request.h"

#include <string>
#include <utility>
#include <vector>

#include "gateway/api_error.h"
#include "gateway/grammar_check.h"

namespace zinfer::gateway {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;
using protocol::StructuredKind;
using protocol::StructuredOutput;

// One constraint a field asked for, and the field its source text came from (what a compile
// error names).
struct Constraint {
  std::string field;
  StructuredOutput structured;
};

const json* given(const json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

std::string text_of(const json& v, const std::string& field) {
  if (!v.is_string()) throw invalid_param(field, "'" + field + "' must be a string");
  return v.get<std::string>();
}

bool bool_of(const json& v, const std::string& field) {
  if (!v.is_boolean()) throw invalid_param(field, "'" + field + "' must be a boolean");
  return v.get<bool>();
}

std::vector<std::string> choices_of(const json& v, const std::string& field) {
  if (!v.is_array() || v.empty()) throw invalid_param(field, "'" + field + "' must be a non-empty array of strings");
  std::vector<std::string> out;
  for (const auto& c : v) {
    if (!c.is_string()) throw invalid_param(field, "'" + field + "' must be a non-empty array of strings");
    out.push_back(c.get<std::string>());
  }
  return out;
}

// Reads the schemas given as JSON objects from the body's text again, keeping the order of keys.
class OrderedBody {
 public:
  explicit OrderedBody(std::string_view text) : text_(text) {}

  // The JSON text of the value at `path` (every key present: the caller found it in the body).
  std::string dump(std::initializer_list<const char*> path) {
    if (!parsed_) {
      body_ = ordered_json::parse(text_, nullptr, /*allow_exceptions=*/false);
      parsed_ = true;
    }
    const ordered_json* v = &body_;
    for (const char* key : path) v = &v->at(key);
    return v->dump();
  }

 private:
  std::string_view text_;
  bool parsed_ = false;
  ordered_json body_;
};

// A JSON Schema given as a string (its JSON text) or as a JSON value (an object, or a boolean
// schema).
StructuredOutput schema_constraint(const json& v, const std::string& field, OrderedBody& ordered,
                                   std::initializer_list<const char*> path) {
  StructuredOutput s;
  s.kind = StructuredKind::kJsonSchema;
  if (v.is_string()) {
    s.text = v.get<std::string>();
  } else if (v.is_object() || v.is_boolean()) {
    s.text = ordered.dump(path);
  } else {
    throw invalid_param(field, "'" + field + "' must be a JSON Schema (an object, or its JSON text)");
  }
  return s;
}

StructuredOutput of_kind(StructuredKind kind, std::string text = {}, std::vector<std::string> choices = {}) {
  StructuredOutput s;
  s.kind = kind;
  s.text = std::move(text);
  s.choices = std::move(choices);
  return s;
}

void unknown_key(const std::string& parent, const std::string& key, const std::string& known) {
  const std::string field = parent + "." + key;
  throw invalid_param(field, "unknown field '" + field + "' (" + parent + " has " + known + ")");
}

void response_format(const json& rf, OrderedBody& ordered, std::vector<Constraint>& out) {
  if (!rf.is_object()) throw invalid_param("response_format", "'response_format' must be an object");
  const json* type = given(rf, "type");
  if (!type) throw invalid_param("response_format.type", "'response_format.type' is required");
  const std::string t = text_of(*type, "response_format.type");
  if (t == "text" || t == "json_object") {
    for (const auto& [key, value] : rf.items()) {
      if (key != "type" && !value.is_null()) unknown_key("response_format", key, "only 'type' for type '" + t + "'");
    }
    if (t == "json_object") out.push_back({"response_format", of_kind(StructuredKind::kJsonObject)});
    return;
  }
  if (t != "json_schema") {
    throw invalid_param("response_format.type",
                        "'response_format.type' '" + t + "' is not supported (text, json_object or json_schema)");
  }
  for (const auto& [key, value] : rf.items()) {
    if (key != "type" && key != "json_schema" && !value.is_null()) {
      unknown_key("response_format", key, "'type' and 'json_schema'");
    }
  }
  const json* js = given(rf, "json_schema");
  if (!js) throw invalid_param("response_format.json_schema", "'response_format.json_schema' is required for type 'json_schema'");
  if (!js->is_object()) throw invalid_param("response_format.json_schema", "'response_format.json_schema' must be an object");
  for (const auto& [key, value] : js->items()) {
    if (value.is_null()) continue;
    if (key == "name" || key == "description") {
      text_of(value, "response_format.json_schema." + key);
    } else if (key == "strict") {
      // The grammar always holds the output to the schema: strict false asks for less, not other.
      bool_of(value, "response_format.json_schema.strict");
    } else if (key != "schema") {
      unknown_key("response_format.json_schema", key, "name, description, schema and strict");
    }
  }
  if (!given(*js, "name")) {
    throw invalid_param("response_format.json_schema.name", "'response_format.json_schema.name' is required");
  }
  const json* schema = given(*js, "schema");
  if (!schema) {
    throw invalid_param("response_format.json_schema.schema", "'response_format.json_schema.schema' is required");
  }
  const std::string field = "response_format.json_schema.schema";
  if (!schema->is_object() && !schema->is_boolean()) {
    throw invalid_param(field, "'" + field + "' must be a JSON Schema object");
  }
  out.push_back({field, schema_constraint(*schema, field, ordered, {"response_format", "json_schema", "schema"})});
}

void structured_outputs(const json& so, OrderedBody& ordered, std::vector<Constraint>& out) {
  if (!so.is_object()) throw invalid_param("structured_outputs", "'structured_outputs' must be an object");
  for (const auto& [key, value] : so.items()) {
    if (value.is_null()) continue;
    const std::string field = "structured_outputs." + key;
    if (key == "json") {
      out.push_back({field, schema_constraint(value, field, ordered, {"structured_outputs", "json"})});
    } else if (key == "regex") {
      out.push_back({field, of_kind(StructuredKind::kRegex, text_of(value, field))});
    } else if (key == "choice") {
      out.push_back({field, of_kind(StructuredKind::kChoice, {}, choices_of(value, field))});
    } else if (key == "grammar") {
      out.push_back({field, of_kind(StructuredKind::kGrammar, text_of(value, field))});
    } else if (key == "json_object") {
      if (bool_of(value, field)) out.push_back({field, of_kind(StructuredKind::kJsonObject)});
    } else if (key == "disable_fallback" || key == "disable_additional_properties") {
      bool_of(value, field);  // honoured either way (structured_request.h says why)
    } else if (key == "disable_any_whitespace") {
      if (bool_of(value, field)) {
        throw invalid_param(field, "'" + field + "' = true is not supported: the JSON grammar allows a bounded "
                                   "amount of whitespace between tokens");
      }
    } else if (key == "whitespace_pattern") {
      throw invalid_param(field, "'" + field + "' is not supported: the JSON grammar's whitespace is fixed");
    } else if (key == "structural_tag") {
      throw invalid_param(field, "'" + field + "' is not supported (no structural tags)");
    } else {
      unknown_key("structured_outputs", key,
                  "json, regex, choice, grammar, json_object, disable_fallback, disable_any_whitespace, "
                  "disable_additional_properties, whitespace_pattern and structural_tag");
    }
  }
}

void guided_fields(const json& body, OrderedBody& ordered, std::vector<Constraint>& out) {
  if (const json* v = given(body, "guided_json")) {
    out.push_back({"guided_json", schema_constraint(*v, "guided_json", ordered, {"guided_json"})});
  }
  if (const json* v = given(body, "guided_regex")) {
    out.push_back({"guided_regex", of_kind(StructuredKind::kRegex, text_of(*v, "guided_regex"))});
  }
  if (const json* v = given(body, "guided_choice")) {
    out.push_back({"guided_choice", of_kind(StructuredKind::kChoice, {}, choices_of(*v, "guided_choice"))});
  }
  if (const json* v = given(body, "guided_grammar")) {
    out.push_back({"guided_grammar", of_kind(StructuredKind::kGrammar, text_of(*v, "guided_grammar"))});
  }
  if (const json* v = given(body, "guided_decoding_backend")) {
    if (text_of(*v, "guided_decoding_backend") != "auto") {
      throw invalid_param("guided_decoding_backend",
                          "'guided_decoding_backend' must be \"auto\": zinfer has one grammar engine");
    }
  }
}

}  // namespace

std::optional<StructuredOutput> parse_structured_output(const json& body, std::string_view body_text) {
  OrderedBody ordered(body_text);
  std::vector<Constraint> found;
  if (const json* rf = given(body, "response_format")) response_format(*rf, ordered, found);
  if (const json* so = given(body, "structured_outputs")) structured_outputs(*so, ordered, found);
  guided_fields(body, ordered, found);
  if (found.empty()) return std::nullopt;
  if (found.size() > 1) {
    const std::string& first = found[0].field;
    const std::string& second = found[1].field;
    throw invalid_param(second, "'" + first + "' and '" + second + "' both constrain the output: give one of them");
  }
  shared_grammar_check().check(found[0].structured, found[0].field);
  return std::move(found[0].structured);
}

}  // namespace zinfer::gateway
