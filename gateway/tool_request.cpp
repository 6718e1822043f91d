#include "gateway/tool_request.h"

#include <set>

#include "gateway/api_error.h"
#include "gateway/grammar_check.h"

namespace zinfer::gateway {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

template <class Json>
const Json* given(const Json& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

[[noreturn]] void refuse(const std::string& field, const std::string& why) {
  throw invalid_param(field, "'" + field + "' " + why);
}

template <class Json>
void only_keys(const Json& object, const std::string& where, std::initializer_list<std::string_view> keys) {
  for (const auto& [key, value] : object.items()) {
    bool known = false;
    for (std::string_view k : keys) known = known || k == key;
    if (!known) refuse(where + "." + key, "is not a known field (allowed: " + [&] {
                   std::string list;
                   for (std::string_view k : keys) list += (list.empty() ? "" : ", ") + std::string(k);
                   return list;
                 }() + ")");
  }
}

// tools[i]: {"type": "function", "function": {"name", "description"?, "parameters"?, "strict"?}}.
void check_tool(const ordered_json& tool, size_t i, std::set<std::string>& names) {
  const std::string where = "tools[" + std::to_string(i) + "]";
  if (!tool.is_object()) refuse(where, "must be an object");
  only_keys(tool, where, {"type", "function"});
  if (const auto* type = given(tool, "type"); type && (!type->is_string() || *type != "function")) {
    refuse(where + ".type", "must be \"function\" (the only kind of tool)");
  }
  const auto* function = given(tool, "function");
  if (!function || !function->is_object()) refuse(where + ".function", "must be an object");
  only_keys(*function, where + ".function", {"name", "description", "parameters", "strict"});
  const auto* name = given(*function, "name");
  if (!name || !name->is_string() || name->get<std::string>().empty()) {
    refuse(where + ".function.name", "must be a non-empty string");
  }
  if (!names.insert(name->get<std::string>()).second) {
    refuse(where + ".function.name", "repeats the name '" + name->get<std::string>() + "' of an earlier tool");
  }
  if (const auto* d = given(*function, "description"); d && !d->is_string()) {
    refuse(where + ".function.description", "must be a string");
  }
  if (const auto* p = given(*function, "parameters"); p && !p->is_object()) {
    refuse(where + ".function.parameters", "must be a JSON Schema object");
  }
  if (const auto* s = given(*function, "strict"); s && !s->is_boolean()) {
    refuse(where + ".function.strict", "must be a boolean");
  }
}

const ordered_json* find_function(const ordered_json& tools, const std::string& name) {
  for (const auto& tool : tools)
    if (tool["function"]["name"] == name) return &tool["function"];
  return nullptr;
}

ordered_json parameters_schema(const ordered_json& function) {
  if (const auto* p = given(function, "parameters")) return *p;
  return {{"type", "object"}, {"properties", ordered_json::object()}};  // a function without parameters
}

void parse_choice(const json& body, ToolRequest& out) {
  const json* choice = given(body, "tool_choice");
  if (!choice) {
    out.choice = out.tools.empty() ? ToolRequest::Choice::kNone : ToolRequest::Choice::kAuto;
    return;
  }
  if (choice->is_string()) {
    const std::string c = choice->get<std::string>();
    if (c == "none") {
      out.choice = ToolRequest::Choice::kNone;
    } else if (c == "auto") {
      out.choice = ToolRequest::Choice::kAuto;
    } else if (c == "required") {
      out.choice = ToolRequest::Choice::kRequired;
    } else {
      refuse("tool_choice", "must be \"none\", \"auto\", \"required\" or {\"type\": \"function\", \"function\": "
                            "{\"name\": ...}}, got \"" + c + "\"");
    }
  } else if (choice->is_object()) {
    only_keys(*choice, "tool_choice", {"type", "function"});
    const json* type = given(*choice, "type");
    if (!type || *type != "function") refuse("tool_choice.type", "must be \"function\"");
    const json* function = given(*choice, "function");
    if (!function || !function->is_object()) refuse("tool_choice.function", "must be an object with a name");
    only_keys(*function, "tool_choice.function", {"name"});
    const json* name = given(*function, "name");
    if (!name || !name->is_string()) refuse("tool_choice.function.name", "must be a string");
    out.choice = ToolRequest::Choice::kNamed;
    out.function = name->get<std::string>();
  } else {
    refuse("tool_choice", "must be a string or an object");
  }
  if (out.choice != ToolRequest::Choice::kNone && out.tools.empty()) {
    refuse("tool_choice", "needs 'tools': there is no tool to call");
  }
  if (out.choice == ToolRequest::Choice::kNamed && !find_function(out.tools, out.function)) {
    refuse("tool_choice.function.name", "names '" + out.function + "', which is not one of the request's tools");
  }
}

}  // namespace

ordered_json parse_tools(const json& body, std::string_view body_text) {
  ordered_json tools = ordered_json::array();
  if (const json* given_tools = given(body, "tools")) {
    if (!given_tools->is_array()) refuse("tools", "must be an array of tools");
    // The sorted copy of the body loses the client's key order, which the template shows
    // (`tool | tojson`): read the tools again in order.
    tools = ordered_json::parse(body_text)["tools"];
    std::set<std::string> names;
    for (size_t i = 0; i < tools.size(); ++i) check_tool(tools[i], i, names);
  }
  return tools;
}

ToolRequest parse_tool_request(const json& body, std::string_view body_text, const HttpOptions& options,
                               protocol::GenerateRequest& request) {
  ToolRequest out;
  out.tools = parse_tools(body, body_text);
  if (const json* p = given(body, "parallel_tool_calls")) {
    if (!p->is_boolean()) refuse("parallel_tool_calls", "must be a boolean");
    out.parallel = p->get<bool>();
  }
  parse_choice(body, out);
  if (!out.tools.empty()) request.tools = out.tools.dump();

  switch (out.choice) {
    case ToolRequest::Choice::kNone:
      break;
    case ToolRequest::Choice::kAuto: {
      const tools::ToolParser* parser = tools::find_tool_parser(options.tool_call_parser);
      if (!options.enable_auto_tool_choice || !parser) {
        refuse("tool_choice", "\"auto\" (the default when tools are given) needs a server started with "
                              "--enable-auto-tool-choice and --tool-call-parser (config [server] "
                              "enable_auto_tool_choice and tool_call_parser)");
      }
      out.parser = std::shared_ptr<const tools::ToolParser>(parser, [](const tools::ToolParser*) {});
      if (parser->needs_special_tokens()) request.sampling.skip_special_tokens = false;
      break;
    }
    case ToolRequest::Choice::kRequired:
    case ToolRequest::Choice::kNamed:
      if (request.sampling.structured) {
        refuse("tool_choice", "forces a call, which cannot be combined with another output constraint "
                              "(response_format, structured_outputs, guided_*)");
      }
      // The schema of each function that may be called compiles, or the 400 names its parameters
      // (a keyword the engine does not compile would otherwise fail later, in the executor).
      for (size_t i = 0; i < out.tools.size(); ++i) {
        const ordered_json& fn = out.tools[i]["function"];
        if (out.choice == ToolRequest::Choice::kNamed && fn["name"] != out.function) continue;
        if (!fn.contains("parameters")) continue;
        shared_grammar_check().check(
            protocol::StructuredOutput{protocol::StructuredKind::kJsonSchema, fn["parameters"].dump(), {}, {}},
            "tools[" + std::to_string(i) + "].function.parameters");
      }
      out.parser = out.choice == ToolRequest::Choice::kNamed ? tools::named_call_parser(out.function)
                                                              : tools::required_calls_parser();
      request.sampling.structured =
          protocol::StructuredOutput{protocol::StructuredKind::kJsonSchema, forced_calls_schema(out).dump(), {}, {}};
      break;
  }
  return out;
}

ordered_json forced_calls_schema(const ToolRequest& request) {
  if (request.choice == ToolRequest::Choice::kNamed) {
    const ordered_json* function = find_function(request.tools, request.function);
    return function ? parameters_schema(*function) : ordered_json::object();
  }
  ordered_json alternatives = ordered_json::array();
  for (const auto& tool : request.tools) {
    const auto& function = tool["function"];
    alternatives.push_back({{"type", "object"},
                            {"properties",
                             {{"name", {{"type", "string"}, {"enum", ordered_json::array({function["name"]})}}},
                              {"parameters", parameters_schema(function)}}},
                            {"required", {"name", "parameters"}},
                            {"additionalProperties", false}});
  }
  ordered_json schema = {{"type", "array"}, {"minItems", 1}};
  if (!request.parallel) schema["maxItems"] = 1;
  schema["items"] = alternatives.size() == 1 ? alternatives[0] : ordered_json{{"anyOf", alternatives}};
  return schema;
}

bool is_message_tool_field(std::string_view key) {
  return key == "tool_calls" || key == "tool_call_id" || key == "name";
}

void parse_message_tool_fields(const json& message, size_t index, protocol::ChatMessage& out) {
  const std::string where = "messages[" + std::to_string(index) + "]";
  if (const json* name = given(message, "name")) {
    if (!name->is_string()) refuse(where + ".name", "must be a string");
    out.name = name->get<std::string>();
  }
  if (const json* id = given(message, "tool_call_id")) {
    if (out.role != "tool") refuse(where + ".tool_call_id", "is only allowed on messages of role \"tool\"");
    if (!id->is_string()) refuse(where + ".tool_call_id", "must be a string");
    out.tool_call_id = id->get<std::string>();
  }
  const json* calls = given(message, "tool_calls");
  if (!calls) return;
  if (out.role != "assistant") refuse(where + ".tool_calls", "is only allowed on messages of role \"assistant\"");
  if (!calls->is_array()) refuse(where + ".tool_calls", "must be an array");
  for (size_t j = 0; j < calls->size(); ++j) {
    const json& call = (*calls)[j];
    const std::string at = where + ".tool_calls[" + std::to_string(j) + "]";
    if (!call.is_object()) refuse(at, "must be an object");
    only_keys(call, at, {"id", "type", "function"});
    protocol::ToolCall tc;
    if (const json* id = given(call, "id")) {
      if (!id->is_string()) refuse(at + ".id", "must be a string");
      tc.id = id->get<std::string>();
    }
    if (const json* type = given(call, "type"); type && *type != "function") refuse(at + ".type", "must be \"function\"");
    const json* function = given(call, "function");
    if (!function || !function->is_object()) refuse(at + ".function", "must be an object with name and arguments");
    only_keys(*function, at + ".function", {"name", "arguments"});
    const json* name = given(*function, "name");
    if (!name || !name->is_string()) refuse(at + ".function.name", "must be a string");
    tc.name = name->get<std::string>();
    // OpenAI's clients send the arguments as JSON text; transformers' users as an object. The
    // template gets them as an object (as vLLM gives them), so the text must be JSON.
    const json* arguments = given(*function, "arguments");
    if (!arguments || (arguments->is_string() && arguments->get<std::string>().empty())) {
      tc.arguments = "{}";
    } else if (arguments->is_string()) {
      tc.arguments = arguments->get<std::string>();
      if (!json::accept(tc.arguments)) refuse(at + ".function.arguments", "is not valid JSON text");
    } else if (arguments->is_object()) {
      tc.arguments = arguments->dump();
    } else {
      refuse(at + ".function.arguments", "must be a JSON string (or an object)");
    }
    out.tool_calls.push_back(std::move(tc));
  }
}

std::string check_tool_settings(const HttpOptions& options) {
  if (!options.tool_call_parser.empty() && !tools::find_tool_parser(options.tool_call_parser)) {
    std::string names;
    for (const auto& n : tools::tool_parser_names()) names += (names.empty() ? "" : ", ") + n;
    return "unknown tool_call_parser '" + options.tool_call_parser + "' (known: " + names + ")";
  }
  if (options.enable_auto_tool_choice && options.tool_call_parser.empty()) {
    return "enable_auto_tool_choice (--enable-auto-tool-choice) needs tool_call_parser (--tool-call-parser)";
  }
  return "";
}

}  // namespace zinfer::gateway
