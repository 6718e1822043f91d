// JSON Schema outputs judged by an external validator (python3-jsonschema): random walks of the
// automaton of hand-written and generated schemas must validate, and edits of them that the
// validator rejects (or that are not JSON) must be rejected by the matcher.
#include <random>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "actors/grammar/json_schema.h"
#include "tests/grammar/support.h"

namespace zinfer::grammar {
namespace {

using Json = nlohmann::ordered_json;
using testing::Verdict;

// Shaped after schemas that real APIs and tool definitions send.
const std::vector<std::string> kHandWritten = {
    R"({"type":"object","properties":{"location":{"type":"string","description":"City and state"},
        "unit":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["location"],"additionalProperties":false})",
    R"({"type":"object","properties":{"name":{"type":"string","minLength":1,"maxLength":20},"age":{"type":"integer","minimum":0,"maximum":150},
        "email":{"type":"string","format":"email"},"tags":{"type":"array","items":{"type":"string","maxLength":8},"maxItems":3}},
        "required":["name","age"]})",
    R"({"$defs":{"Item":{"type":"object","properties":{"sku":{"type":"string","pattern":"^[A-Z]{3}-[0-9]{4}$"},
        "qty":{"type":"integer","exclusiveMinimum":0},"price":{"type":"number","minimum":0}},"required":["sku","qty","price"]}},
        "type":"object","properties":{"order_id":{"type":"string","format":"uuid"},"items":{"type":"array","items":{"$ref":"#/$defs/Item"},
        "minItems":1,"maxItems":4},"placed":{"type":"string","format":"date"}},"required":["order_id","items"]})",
    R"({"title":"Model","type":"object","properties":{"nick":{"anyOf":[{"type":"string"},{"type":"null"}],"default":null,"title":"Nick"},
        "score":{"anyOf":[{"type":"number"},{"type":"null"}]}},"required":["nick","score"]})",
    R"({"type":"object","properties":{"title":{"type":"string"},"state":{"const":"open"},"labels":{"type":"array",
        "items":{"type":"object","properties":{"name":{"type":"string"},"color":{"type":"string","pattern":"^[0-9a-f]{6}$"}},
        "required":["name","color"]}}},"required":["title","state"]})",
    R"({"type":"object","properties":{"steps":{"type":"array","items":{"type":"object","properties":{"explanation":{"type":"string"},
        "output":{"type":"string"}},"required":["explanation","output"],"additionalProperties":false}},"final_answer":{"type":"string"}},
        "required":["steps","final_answer"],"additionalProperties":false})",
    R"({"type":"object","properties":{"when":{"type":"string","format":"date-time"},"at":{"type":"string","format":"time"},
        "ip":{"type":"string","format":"ipv4"}},"required":["when","ip"]})",
    R"({"type":"object","additionalProperties":{"type":"integer","minimum":-5,"maximum":5},"properties":{"id":{"type":"integer"}}})",
    R"({"type":"array","prefixItems":[{"type":"integer"},{"type":"string"}],"items":{"type":"boolean"},"minItems":1,"maxItems":4})",
    R"({"type":"object","properties":{"node":{"$ref":"#/$defs/tree"}},"required":["node"],"$defs":{"tree":{"type":"object",
        "properties":{"value":{"type":"integer"},"children":{"type":"array","items":{"$ref":"#/$defs/tree"},"maxItems":2}},
        "required":["value"]}}})",
    R"({"oneOf":[{"type":"object","properties":{"kind":{"const":"a"},"x":{"type":"integer"}},"required":["kind","x"]},
        {"type":"object","properties":{"kind":{"const":"b"},"y":{"type":"string"}},"required":["kind","y"]}]})",
    R"({"type":["integer","string","null"],"minimum":10,"maxLength":2})",
    R"({"type":"object","properties":{"text":{"type":"string","pattern":"hello|world"},"n":{"type":"number","exclusiveMaximum":0}},
        "required":["text","n"]})",
};

class SchemaGenerator {
 public:
  explicit SchemaGenerator(uint32_t seed) : rng_(seed) {}

  Json schema(int depth) {
    switch (pick(depth < 3 ? 12 : 8)) {
      case 0: return string_schema();
      case 1: return integer_schema();
      case 2: return number_schema();
      case 3: return Json{{"type", "boolean"}};
      case 4: return Json{{"type", "null"}};
      case 5: return enum_schema();
      case 6: return Json{{"type", Json::array({"string", "null"})}, {"maxLength", pick(4)}};
      case 7: return Json{{"const", random_value()}};
      case 8:
      case 9: return object_schema(depth);
      case 10: return array_schema(depth);
      default: return Json{{"anyOf", Json::array({schema(depth + 1), schema(depth + 1)})}};
    }
  }

 private:
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

  Json random_value() {
    switch (pick(5)) {
      case 0: return pick(100) - 50;
      case 1: return std::string("v") + std::to_string(pick(10));
      case 2: return nullptr;
      case 3: return pick(2) == 1;
      default: return 2.5;
    }
  }

  Json string_schema() {
    Json s{{"type", "string"}};
    switch (pick(4)) {
      case 0: s["minLength"] = pick(3), s["maxLength"] = 3 + pick(4); break;
      case 1: {
        static const char* patterns[] = {"^[a-z]+$", "[0-9]{2}", "^(ab|cd)*$", "x|y", "^\\w{1,4}\\.\\d$", "^[^\"\\\\]{0,3}$"};
        s["pattern"] = patterns[pick(6)];
        break;
      }
      case 2: {
        static const char* formats[] = {"date", "uuid", "email", "ipv4", "date-time", "time"};
        s["format"] = formats[pick(6)];
        break;
      }
      default: break;
    }
    return s;
  }

  Json integer_schema() {
    Json s{{"type", "integer"}};
    if (pick(2)) s[pick(2) ? "minimum" : "exclusiveMinimum"] = pick(200) - 100;
    if (pick(2)) s[pick(2) ? "maximum" : "exclusiveMaximum"] = 110 + pick(1000);
    return s;
  }

  Json number_schema() {
    Json s{{"type", "number"}};
    if (pick(2)) s[pick(2) ? "minimum" : "exclusiveMinimum"] = pick(20) - 10;
    if (pick(2)) s[pick(2) ? "maximum" : "exclusiveMaximum"] = 11 + pick(20);
    return s;
  }

  Json enum_schema() {
    Json values = Json::array();
    for (int i = 0, n = 1 + pick(4); i < n; ++i) values.push_back(random_value());
    return Json{{"enum", values}};
  }

  Json object_schema(int depth) {
    Json s{{"type", "object"}};
    Json props = Json::object();
    Json required = Json::array();
    for (int i = 0, n = pick(5); i < n; ++i) {
      const std::string name = std::string(1, static_cast<char>('a' + pick(6))) + (pick(2) ? "x" : "");
      props[name] = schema(depth + 1);
      if (pick(2)) required.push_back(name);
    }
    s["properties"] = props;
    if (!required.empty()) {
      // required must not name a property twice
      std::vector<std::string> unique;
      for (const auto& r : required)
        if (std::find(unique.begin(), unique.end(), r.get<std::string>()) == unique.end()) unique.push_back(r);
      s["required"] = unique;
    }
    switch (pick(4)) {
      case 0: s["additionalProperties"] = false; break;
      case 1: s["additionalProperties"] = true; break;
      case 2: s["additionalProperties"] = Json{{"type", "integer"}}; break;
      default: break;
    }
    return s;
  }

  Json array_schema(int depth) {
    Json s{{"type", "array"}, {"items", schema(depth + 1)}};
    const int min = pick(3);
    if (pick(2)) s["minItems"] = min;
    if (pick(2)) s["maxItems"] = min + pick(3);
    if (pick(3) == 0) s["prefixItems"] = Json::array({schema(depth + 1)});
    return s;
  }

  std::mt19937 rng_;
};

// Walks each schema's automaton, validates the walks and their edits in one python run, and
// checks the verdicts.
void judge(const std::vector<std::string>& schemas, uint32_t seed, int walks_per_schema) {
  std::mt19937 rng(seed);
  struct Case {
    size_t schema;
    std::string text;
    bool generated;
  };
  std::vector<Case> cases;
  size_t finished = 0, attempted = 0;
  for (size_t i = 0; i < schemas.size(); ++i) {
    auto g = testing::compiled(json_schema_grammar_from_text(schemas[i]));
    for (int w = 0; w < walks_per_schema; ++w) {
      std::string out;
      ++attempted;
      if (!testing::random_walk(g, rng, out)) continue;
      ++finished;
      cases.push_back({i, out, true});
      for (std::string& m : testing::mutants(out, rng, 6)) cases.push_back({i, std::move(m), false});
    }
  }
  EXPECT_GT(finished * 2, attempted) << "most walks should end";
  std::vector<std::pair<std::string, std::string>> batch;
  for (const Case& c : cases) batch.emplace_back(schemas[c.schema], c.text);
  const std::vector<Verdict> verdicts = testing::validate(batch);
  ASSERT_EQ(verdicts.size(), cases.size());
  size_t rejected = 0;
  std::map<size_t, std::shared_ptr<const CompiledGrammar>> grammars;
  for (size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k];
    if (c.generated) {
      EXPECT_EQ(verdicts[k], Verdict::kValid) << "schema " << schemas[c.schema] << "\ninstance " << c.text;
      continue;
    }
    if (verdicts[k] == Verdict::kValid) continue;  // the grammar generates a subset; no claim
    ++rejected;
    auto& g = grammars[c.schema];
    if (!g) g = testing::compiled(json_schema_grammar_from_text(schemas[c.schema]));
    EXPECT_FALSE(testing::full_match(g, c.text)) << "schema " << schemas[c.schema] << "\nrejected instance " << c.text;
  }
  EXPECT_GT(rejected, cases.size() / 4);
  std::cout << schemas.size() << " schemas, " << finished << " walks validated, " << rejected
            << " edits rejected by both the validator and the matcher\n";
}

TEST(JsonValidation, HandWrittenSchemas) { judge(kHandWritten, 11, 25); }

TEST(JsonValidation, GeneratedSchemas) {
  SchemaGenerator gen(2024);
  std::vector<std::string> schemas;
  for (int i = 0; i < 150; ++i) {
    Json s = gen.schema(0);
    if (i % 5 == 0) s = Json{{"$defs", {{"d", s}}}, {"type", "object"}, {"properties", {{"r", {{"$ref", "#/$defs/d"}}}}},
                             {"required", Json::array({"r"})}};
    schemas.push_back(s.dump());
  }
  judge(schemas, 5, 6);
}

TEST(JsonValidation, GenericJson) { judge({"{}", R"({"type":"object"})"}, 3, 60); }

}  // namespace
}  // namespace zinfer::grammar
