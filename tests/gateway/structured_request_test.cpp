// The structured output fields (response_format, structured_outputs, guided_*) mapped onto
// SamplingParams.structured, and every way they can be refused: a 400 naming the field (and, for
// a source that does not compile, the construct) before anything is queued.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gateway/api_error.h"
#include "gateway/grammar_check.h"
#include "gateway/openai_request.h"

namespace zinfer::gateway {
namespace {

using nlohmann::json;
using protocol::StructuredKind;

HttpOptions options(const std::string& reasoning_parser = "") {
  HttpOptions o;
  o.served_model_name = "m";
  o.max_model_len = 100;
  o.reasoning_parser = reasoning_parser;
  return o;
}

json chat(json extra) {
  json body = {{"messages", json::array({{{"role", "user"}, {"content", "hi"}}})}};
  body.update(extra);
  return body;
}

json completion(json extra) {
  json body = {{"prompt", "hi"}};
  body.update(extra);
  return body;
}

OpenAiRequest parse(ApiKind kind, const std::string& body, const std::string& parser = "") {
  return parse_openai_request(kind, body, options(parser));
}

// The refusal of `body`: its status, param and message ("" when accepted).
struct Refusal {
  int status = 200;
  std::string param, message;
};

Refusal refusal(ApiKind kind, const json& body, const std::string& parser = "") {
  Refusal r;
  try {
    parse(kind, body.dump(), parser);
  } catch (const ApiError& e) {
    r.status = e.status();
    r.param = e.param();
    r.message = e.what();
  }
  return r;
}

const json kSchema = {{"type", "object"},
                      {"properties", {{"name", {{"type", "string"}}}}},
                      {"required", {"name"}}};

TEST(StructuredRequest, ResponseFormatOnBothEndpoints) {
  for (ApiKind kind : {ApiKind::kCompletions, ApiKind::kChat}) {
    auto body = [&](json extra) { return (kind == ApiKind::kChat ? chat(extra) : completion(extra)).dump(); };
    EXPECT_FALSE(parse(kind, body({{"response_format", {{"type", "text"}}}})).request.sampling.structured);
    auto obj = parse(kind, body({{"response_format", {{"type", "json_object"}}}})).request.sampling.structured;
    ASSERT_TRUE(obj);
    EXPECT_EQ(obj->kind, StructuredKind::kJsonObject);
    auto schema = parse(kind, body({{"response_format",
                                     {{"type", "json_schema"},
                                      {"json_schema", {{"name", "person"}, {"schema", kSchema}, {"strict", true},
                                                       {"description", "a person"}}}}}}))
                      .request.sampling.structured;
    ASSERT_TRUE(schema);
    EXPECT_EQ(schema->kind, StructuredKind::kJsonSchema);
    EXPECT_EQ(json::parse(schema->text), kSchema);
    EXPECT_EQ(schema->begin_after, "");
  }
}

// The schema keeps the order of its keys: the output lists properties in the schema's order.
TEST(StructuredRequest, SchemaObjectsKeepTheirKeyOrder) {
  const std::string body =
      R"({"prompt":"x","guided_json":{"type":"object","properties":{"zeta":{"type":"integer"},"alpha":{"type":"string"}}}})";
  auto s = parse(ApiKind::kCompletions, body).request.sampling.structured;
  ASSERT_TRUE(s);
  EXPECT_EQ(s->text, R"({"type":"object","properties":{"zeta":{"type":"integer"},"alpha":{"type":"string"}}})");
  // A schema given as JSON text is passed as it is.
  auto t = parse(ApiKind::kCompletions, completion({{"structured_outputs", {{"json", "{\"type\": \"string\"}"}}}}).dump())
               .request.sampling.structured;
  ASSERT_TRUE(t);
  EXPECT_EQ(t->text, "{\"type\": \"string\"}");
}

TEST(StructuredRequest, VllmFieldsMapToTheirKinds) {
  struct Case {
    json extra;
    StructuredKind kind;
    std::string text;
    std::vector<std::string> choices;
  };
  const std::vector<Case> cases = {
      {{{"structured_outputs", {{"json", kSchema}}}}, StructuredKind::kJsonSchema, kSchema.dump(), {}},
      {{{"structured_outputs", {{"regex", "[a-z]+"}}}}, StructuredKind::kRegex, "[a-z]+", {}},
      {{{"structured_outputs", {{"choice", {"yes", "no"}}}}}, StructuredKind::kChoice, "", {"yes", "no"}},
      {{{"structured_outputs", {{"grammar", "root ::= \"a\" | \"b\""}}}}, StructuredKind::kGrammar,
       "root ::= \"a\" | \"b\"", {}},
      {{{"structured_outputs", {{"json_object", true}}}}, StructuredKind::kJsonObject, "", {}},
      {{{"structured_outputs", {{"regex", "a"}, {"disable_fallback", true}, {"disable_additional_properties", true},
                                {"disable_any_whitespace", false}, {"whitespace_pattern", nullptr}}}},
       StructuredKind::kRegex, "a", {}},
      {{{"guided_json", kSchema}}, StructuredKind::kJsonSchema, kSchema.dump(), {}},
      {{{"guided_regex", "\\d{3}"}}, StructuredKind::kRegex, "\\d{3}", {}},
      {{{"guided_choice", {"x"}}}, StructuredKind::kChoice, "", {"x"}},
      {{{"guided_grammar", "root ::= [0-9]+"}}, StructuredKind::kGrammar, "root ::= [0-9]+", {}},
      {{{"guided_regex", "a"}, {"guided_decoding_backend", "auto"}}, StructuredKind::kRegex, "a", {}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.extra.dump());
    auto s = parse(ApiKind::kChat, chat(c.extra).dump()).request.sampling.structured;
    ASSERT_TRUE(s);
    EXPECT_EQ(s->kind, c.kind);
    EXPECT_EQ(s->text, c.text);
    EXPECT_EQ(s->choices, c.choices);
  }
  // Values that ask for nothing.
  for (const json& extra : {json{{"structured_outputs", {{"json_object", false}}}}, json{{"structured_outputs", json::object()}},
                            json{{"guided_json", nullptr}}, json{{"response_format", nullptr}}}) {
    EXPECT_FALSE(parse(ApiKind::kChat, chat(extra).dump()).request.sampling.structured) << extra.dump();
  }
}

TEST(StructuredRequest, MalformedFieldsAreRefusedByName) {
  const std::vector<std::pair<json, std::string>> cases = {
      {{{"response_format", "json"}}, "response_format"},
      {{{"response_format", json::object()}}, "response_format.type"},
      {{{"response_format", {{"type", "yaml"}}}}, "response_format.type"},
      {{{"response_format", {{"type", "structural_tag"}}}}, "response_format.type"},
      {{{"response_format", {{"type", "text"}, {"extra", 1}}}}, "response_format.extra"},
      {{{"response_format", {{"type", "json_schema"}}}}, "response_format.json_schema"},
      {{{"response_format", {{"type", "json_schema"}, {"json_schema", {{"schema", kSchema}}}}}},
       "response_format.json_schema.name"},
      {{{"response_format", {{"type", "json_schema"}, {"json_schema", {{"name", "n"}}}}}},
       "response_format.json_schema.schema"},
      {{{"response_format", {{"type", "json_schema"}, {"json_schema", {{"name", "n"}, {"schema", 3}}}}}},
       "response_format.json_schema.schema"},
      {{{"response_format", {{"type", "json_schema"}, {"json_schema", {{"name", "n"}, {"schema", kSchema}, {"strict", "yes"}}}}}},
       "response_format.json_schema.strict"},
      {{{"response_format", {{"type", "json_schema"}, {"json_schema", {{"name", "n"}, {"schema", kSchema}, {"format", 1}}}}}},
       "response_format.json_schema.format"},
      {{{"structured_outputs", "a+"}}, "structured_outputs"},
      {{{"structured_outputs", {{"regex", 5}}}}, "structured_outputs.regex"},
      {{{"structured_outputs", {{"choice", json::array()}}}}, "structured_outputs.choice"},
      {{{"structured_outputs", {{"choice", {1, 2}}}}}, "structured_outputs.choice"},
      {{{"structured_outputs", {{"json_object", "yes"}}}}, "structured_outputs.json_object"},
      {{{"structured_outputs", {{"regex", "a"}, {"disable_any_whitespace", true}}}}, "structured_outputs.disable_any_whitespace"},
      {{{"structured_outputs", {{"regex", "a"}, {"whitespace_pattern", " *"}}}}, "structured_outputs.whitespace_pattern"},
      {{{"structured_outputs", {{"structural_tag", "{}"}}}}, "structured_outputs.structural_tag"},
      {{{"structured_outputs", {{"regexp", "a"}}}}, "structured_outputs.regexp"},
      {{{"guided_json", 5}}, "guided_json"},
      {{{"guided_choice", "a"}}, "guided_choice"},
      {{{"guided_regex", "a"}, {"guided_decoding_backend", "xgrammar"}}, "guided_decoding_backend"},
      {{{"guided_whitespace_pattern", " "}}, "guided_whitespace_pattern"},
      {{{"structural_tag", "{}"}}, "structural_tag"},
  };
  for (const auto& [extra, field] : cases) {
    const Refusal r = refusal(ApiKind::kChat, chat(extra));
    EXPECT_EQ(r.status, 400) << extra.dump();
    EXPECT_EQ(r.param, field) << extra.dump() << ": " << r.message;
  }
}

TEST(StructuredRequest, TwoConstraintsAreRefused) {
  const std::vector<std::pair<json, std::string>> cases = {
      {{{"response_format", {{"type", "json_object"}}}, {"guided_regex", "a"}}, "guided_regex"},
      {{{"response_format", {{"type", "json_object"}}}, {"structured_outputs", {{"choice", {"a"}}}}},
       "structured_outputs.choice"},
      {{{"structured_outputs", {{"regex", "a"}, {"json_object", true}}}}, "structured_outputs.regex"},
      {{{"guided_json", kSchema}, {"guided_choice", {"a"}}}, "guided_choice"},
  };
  for (const auto& [extra, field] : cases) {
    const Refusal r = refusal(ApiKind::kCompletions, completion(extra));
    EXPECT_EQ(r.status, 400) << extra.dump();
    EXPECT_EQ(r.param, field) << extra.dump() << ": " << r.message;
    EXPECT_NE(r.message.find("both constrain"), std::string::npos) << r.message;
  }
  // {"type": "text"} asks for nothing: beside another constraint it is no second one.
  EXPECT_EQ(refusal(ApiKind::kChat, chat({{"response_format", {{"type", "text"}}}, {"guided_regex", "a"}})).status, 200);
}

// A source that does not compile: a 400 naming the field the source came from and the construct.
TEST(StructuredRequest, SourcesThatDoNotCompileNameTheFieldAndTheConstruct) {
  struct Case {
    json extra;
    std::string field, construct;
  };
  const std::vector<Case> cases = {
      {{{"response_format", {{"type", "json_schema"},
                             {"json_schema", {{"name", "n"}, {"schema", {{"type", "object"}, {"not", {{"type", "string"}}}}}}}}}},
       "response_format.json_schema.schema", "not"},
      {{{"guided_json", {{"type", "strin"}}}}, "guided_json", "type"},
      {{{"guided_json", "{not json"}}, "guided_json", "schema"},
      {{{"structured_outputs", {{"json", {{"type", "array"}, {"uniqueItems", true}}}}}}, "structured_outputs.json",
       "uniqueItems"},
      {{{"guided_regex", "(a"}}, "guided_regex", "regex"},
      {{{"structured_outputs", {{"regex", "(?=a)b"}}}}, "structured_outputs.regex", "lookahead (?=)"},
      {{{"guided_grammar", "root ::= undefined_rule"}}, "guided_grammar", ""},
      {{{"structured_outputs", {{"grammar", "start ::= \"a\""}}}}, "structured_outputs.grammar", "root"},
  };
  for (const auto& c : cases) {
    const Refusal r = refusal(ApiKind::kChat, chat(c.extra));
    EXPECT_EQ(r.status, 400) << c.extra.dump();
    EXPECT_EQ(r.param, c.field) << c.extra.dump() << ": " << r.message;
    EXPECT_NE(r.message.find("'" + c.field + "' does not compile"), std::string::npos) << r.message;
    if (!c.construct.empty()) {
      EXPECT_NE(r.message.find("[construct: " + c.construct + "]"), std::string::npos) << r.message;
    }
  }
}

TEST(StructuredRequest, CompileOutcomesAreCached) {
  GrammarCheck check(2);
  protocol::StructuredOutput good;
  good.kind = StructuredKind::kRegex;
  good.text = "[0-9]+";
  protocol::StructuredOutput bad = good;
  bad.text = "(";
  check.check(good, "f");
  check.check(good, "f");
  EXPECT_EQ(check.compiles(), 1u);
  EXPECT_THROW(check.check(bad, "f"), ApiError);
  EXPECT_THROW(check.check(bad, "g"), ApiError);  // a cached failure still names its field
  try {
    check.check(bad, "g");
  } catch (const ApiError& e) {
    EXPECT_EQ(e.param(), "g");
  }
  EXPECT_EQ(check.compiles(), 2u);
  // The LRU keeps `capacity` entries: a third source evicts the oldest (good).
  protocol::StructuredOutput other = good;
  other.kind = StructuredKind::kChoice;
  other.choices = {"[0-9]+"};  // same text as good's choice would be: the kind keeps them apart
  other.text.clear();
  check.check(other, "f");
  EXPECT_EQ(check.size(), 2u);
  check.check(good, "f");
  EXPECT_EQ(check.compiles(), 4u);
}

// The ZeroMQ endpoint's check of a GenerateRequest built by the client.
TEST(StructuredRequest, GenerateRequestsOfTheZeroMqEndpointAreChecked) {
  protocol::GenerateRequest req;
  req.prompt = "x";
  req.sampling.structured = protocol::StructuredOutput{};
  req.sampling.structured->kind = StructuredKind::kJsonSchema;
  req.sampling.structured->text = R"({"type":"object","patternProperties":{"a":{}}})";
  try {
    validate_generate_request(req, 100);
    FAIL() << "accepted";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 400);
    EXPECT_EQ(e.param(), "sampling.structured");
    EXPECT_NE(std::string(e.what()).find("patternProperties"), std::string::npos) << e.what();
  }
  req.sampling.structured->text = R"({"type":"object"})";
  EXPECT_NO_THROW(validate_generate_request(req, 100));
  req.sampling.structured->kind = static_cast<StructuredKind>(9);
  EXPECT_THROW(validate_generate_request(req, 100), ApiError);
}

// With a reasoning parser, the constraint applies after the reasoning part where the output
// begins inside one.
TEST(StructuredRequest, ReasoningMovesTheConstraintAfterTheReasoningPart) {
  const json rf = {{"response_format", {{"type", "json_object"}}}};
  auto thinking = parse(ApiKind::kChat, chat(rf).dump(), "qwen3");
  ASSERT_TRUE(thinking.request.sampling.structured);
  EXPECT_EQ(thinking.request.sampling.structured->begin_after, "</think>");
  EXPECT_TRUE(thinking.reasoning.active());
  EXPECT_TRUE(thinking.reasoning.starts_inside);

  json off = chat(rf);
  off["chat_template_kwargs"] = {{"enable_thinking", false}};
  auto no_thinking = parse(ApiKind::kChat, off.dump(), "qwen3");
  EXPECT_EQ(no_thinking.request.sampling.structured->begin_after, "");
  EXPECT_TRUE(no_thinking.reasoning.active());
  EXPECT_FALSE(no_thinking.reasoning.starts_inside);
  EXPECT_EQ(parse(ApiKind::kChat, off.dump(), "deepseek_r1").request.sampling.structured->begin_after, "</think>");

  // Completions have no reasoning part; without a parser nothing moves.
  auto comp = parse(ApiKind::kCompletions, completion(rf).dump(), "qwen3");
  EXPECT_EQ(comp.request.sampling.structured->begin_after, "");
  EXPECT_FALSE(comp.reasoning.active());
  EXPECT_EQ(parse(ApiKind::kChat, chat(rf).dump()).request.sampling.structured->begin_after, "");
}

TEST(StructuredRequest, IncludeReasoning) {
  EXPECT_FALSE(parse(ApiKind::kChat, chat({{"include_reasoning", false}}).dump(), "qwen3").reasoning.include);
  EXPECT_TRUE(parse(ApiKind::kChat, chat({{"include_reasoning", true}}).dump(), "qwen3").reasoning.include);
  EXPECT_TRUE(parse(ApiKind::kChat, chat({{"include_reasoning", true}}).dump()).reasoning.include);
  const Refusal r = refusal(ApiKind::kChat, chat({{"include_reasoning", false}}));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.param, "include_reasoning");
  EXPECT_NE(r.message.find("--reasoning-parser"), std::string::npos) << r.message;
  EXPECT_EQ(refusal(ApiKind::kChat, chat({{"include_reasoning", 0}}), "qwen3").param, "include_reasoning");
}

}  // namespace
}  // namespace zinfer::gateway
