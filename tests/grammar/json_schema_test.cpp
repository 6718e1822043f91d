// JSON Schema compilation, decision by decision: properties and their order, required and
// optional members, additionalProperties, arrays with bounds, strings, numbers in ranges
// (exhaustively against arithmetic), formats, the whitespace bound, and the errors.
#include <cmath>
#include <cstdlib>

#include <gtest/gtest.h>

#include "actors/grammar/errors.h"
#include "actors/grammar/json_schema.h"
#include "tests/grammar/support.h"

namespace zinfer::grammar {
namespace {

using testing::compiled;
using testing::full_match;

std::shared_ptr<const CompiledGrammar> schema(const std::string& text) {
  return compiled(json_schema_grammar_from_text(text));
}

TEST(JsonSchema, PropertiesInOrderRequiredAndOptional) {
  auto g = schema(R"({"type":"object","properties":{"b":{"type":"integer"},"a":{"type":"string"},
                      "c":{"type":"boolean"}},"required":["a"]})");
  for (const char* yes : {R"({"a":"x"})", R"({"b":1,"a":"x"})", R"({"a":"x","c":true})", R"({"b":-2,"a":"","c":false})",
                          "{ \"b\": 1, \"a\": \"x\" }", "{\n  \"a\": \"x\",\n  \"c\": true\n}"})
    EXPECT_TRUE(full_match(g, yes)) << yes;
  for (const char* no : {"{}", R"({"b":1})", R"({"a":"x","b":1})", R"({"a":1})", R"({"a":"x",})", R"({"a":"x","d":1})",
                         R"({,"a":"x"})", R"({"a":"x","a":"x"})"})
    EXPECT_FALSE(full_match(g, no)) << no;
}

TEST(JsonSchema, RequiredNameWithoutPropertyTakesAnyValue) {
  auto g = schema(R"({"type":"object","required":["k"]})");
  EXPECT_TRUE(full_match(g, R"({"k":[1,{"x":null}]})"));
  EXPECT_FALSE(full_match(g, "{}"));
}

TEST(JsonSchema, AdditionalProperties) {
  auto closed = schema(R"({"type":"object","properties":{"a":{"type":"integer"}}})");
  EXPECT_TRUE(full_match(closed, R"({"a":1})"));
  EXPECT_TRUE(full_match(closed, "{}"));
  EXPECT_FALSE(full_match(closed, R"({"z":1})"));
  auto open = schema(R"({"type":"object","properties":{"a":{"type":"integer"},"ab":{"type":"null"}},
                         "additionalProperties":{"type":"string"}})");
  EXPECT_TRUE(full_match(open, R"({"a":1,"zz":"x","b":"y"})"));
  EXPECT_TRUE(full_match(open, R"({"abc":"x","":"y","a\u00e9":"z"})") == false);  // escapes in extra keys: no
  EXPECT_TRUE(full_match(open, R"({"abc":"x","":"y","aé":"z"})"));
  EXPECT_FALSE(full_match(open, R"({"a":1,"a":"x"})"));   // a declared name is not an extra key
  EXPECT_FALSE(full_match(open, R"({"ab":"x"})"));
  EXPECT_FALSE(full_match(open, R"({"zz":1})"));
  auto any = schema(R"({"type":"object","additionalProperties":true})");
  EXPECT_TRUE(full_match(any, R"({"x":{"y":[true]},"z":2})"));
}

TEST(JsonSchema, Arrays) {
  auto bounded = schema(R"({"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":3})");
  for (const char* yes : {"[1,2]", "[1, 2, 3]", "[\n  1,\n  2\n]"}) EXPECT_TRUE(full_match(bounded, yes)) << yes;
  for (const char* no : {"[]", "[1]", "[1,2,3,4]", "[1,\"a\"]", "[1,2,]"}) EXPECT_FALSE(full_match(bounded, no)) << no;
  auto tuple = schema(R"({"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"items":false,"minItems":1})");
  for (const char* yes : {"[\"a\"]", "[\"a\",1]"}) EXPECT_TRUE(full_match(tuple, yes)) << yes;
  for (const char* no : {"[]", "[1]", "[\"a\",1,2]", "[\"a\",\"b\"]"}) EXPECT_FALSE(full_match(tuple, no)) << no;
  auto prefixed = schema(R"({"type":"array","prefixItems":[{"const":0}],"items":{"type":"boolean"},"maxItems":3})");
  for (const char* yes : {"[]", "[0]", "[0,true]", "[0,true,false]"}) EXPECT_TRUE(full_match(prefixed, yes)) << yes;
  for (const char* no : {"[true]", "[0,true,false,true]", "[0,1]"}) EXPECT_FALSE(full_match(prefixed, no)) << no;
  auto any = schema(R"({"type":"array"})");
  EXPECT_TRUE(full_match(any, "[1,\"x\",{},[]]"));
}

TEST(JsonSchema, StringsLengthPatternEnumConst) {
  auto len = schema(R"({"type":"string","minLength":2,"maxLength":3})");
  for (const char* yes : {"\"ab\"", "\"abc\"", "\"é😀\"", "\"\\n\\u0041\""}) EXPECT_TRUE(full_match(len, yes)) << yes;
  for (const char* no : {"\"a\"", "\"abcd\"", "\"\\ud83d\\ude00\"", "\"a\nb\""}) EXPECT_FALSE(full_match(len, no)) << no;
  auto search = schema(R"({"type":"string","pattern":"[0-9]{3}"})");
  EXPECT_TRUE(full_match(search, "\"abc123def\""));
  EXPECT_FALSE(full_match(search, "\"12a3\""));
  auto anchored = schema(R"({"type":"string","pattern":"^a\"b$"})");
  EXPECT_TRUE(full_match(anchored, R"("a\"b")"));
  EXPECT_FALSE(full_match(anchored, R"("xa\"b")"));
  auto choices = schema(R"({"enum":["red", 1, null, {"a":[1]}, "say \"hi\""]})");
  for (const char* yes : {"\"red\"", "1", "null", "{\"a\":[1]}", R"("say \"hi\"")"}) EXPECT_TRUE(full_match(choices, yes)) << yes;
  EXPECT_FALSE(full_match(choices, "\"blue\""));
  auto typed = schema(R"({"type":"string","enum":["a", 2]})");
  EXPECT_TRUE(full_match(typed, "\"a\""));
  EXPECT_FALSE(full_match(typed, "2"));
  auto constant = schema(R"({"const":"x"})");
  EXPECT_TRUE(full_match(constant, "\"x\""));
  EXPECT_FALSE(full_match(constant, "\"y\""));
}

TEST(JsonSchema, TypeListsAnyOfOneOfRefs) {
  auto nullable = schema(R"({"type":["string","null"],"maxLength":1})");
  EXPECT_TRUE(full_match(nullable, "null"));
  EXPECT_TRUE(full_match(nullable, "\"a\""));
  EXPECT_FALSE(full_match(nullable, "\"ab\""));
  auto any_of = schema(R"({"anyOf":[{"type":"integer"},{"type":"boolean"}]})");
  EXPECT_TRUE(full_match(any_of, "7"));
  EXPECT_TRUE(full_match(any_of, "false"));
  EXPECT_FALSE(full_match(any_of, "\"7\""));
  auto tree = schema(R"({"$ref":"#/$defs/node","$defs":{"node":{"type":"object","properties":{
      "v":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["v"]}}})");
  EXPECT_TRUE(full_match(tree, R"({"v":1,"kids":[{"v":2},{"v":3,"kids":[{"v":4,"kids":[]}]}]})"));
  EXPECT_FALSE(full_match(tree, R"({"v":1,"kids":[{}]})"));
  auto root_ref = schema(R"({"type":"object","properties":{"next":{"anyOf":[{"$ref":"#"},{"type":"null"}]}},"required":["next"]})");
  EXPECT_TRUE(full_match(root_ref, R"({"next":{"next":null}})"));
  auto one_of = schema(R"({"oneOf":[{"type":"string"},{"type":"integer"}]})");
  EXPECT_TRUE(full_match(one_of, "1"));
  auto all_of = schema(R"({"allOf":[{"type":"integer"}]})");
  EXPECT_TRUE(full_match(all_of, "1"));
  auto definitions = schema(R"({"definitions":{"a":{"type":"boolean"}},"$ref":"#/definitions/a"})");
  EXPECT_TRUE(full_match(definitions, "true"));
  auto inferred = schema(R"({"properties":{"a":{"type":"null"}},"required":["a"]})");
  EXPECT_TRUE(full_match(inferred, R"({"a":null})"));
  EXPECT_FALSE(full_match(inferred, "1"));
  auto anything = schema(R"({"description":"any"})");
  EXPECT_TRUE(full_match(anything, "[1,{\"a\":\"b\"}]"));
}

// The integers of [lo, hi] (either open), decided by arithmetic on every value of a window.
void check_integers(const std::string& bounds, long lo, long hi) {
  SCOPED_TRACE(bounds);
  auto g = schema("{\"type\":\"integer\"," + bounds + "}");
  for (long v = -1200; v <= 1200; ++v) {
    const bool expected = v >= lo && v <= hi;
    ASSERT_EQ(full_match(g, std::to_string(v)), expected) << v;
  }
  EXPECT_FALSE(full_match(g, "01"));
  EXPECT_FALSE(full_match(g, "-0"));
  EXPECT_FALSE(full_match(g, "1.0"));
}

TEST(JsonSchema, IntegerRangesAreExact) {
  check_integers("\"minimum\":0", 0, 1L << 40);
  check_integers("\"minimum\":-17,\"maximum\":999", -17, 999);
  check_integers("\"exclusiveMinimum\":-101,\"exclusiveMaximum\":100", -100, 99);
  check_integers("\"maximum\":-3", -(1L << 40), -3);
  check_integers("\"minimum\":7,\"maximum\":7", 7, 7);
  check_integers("\"minimum\":0.5,\"maximum\":10.5", 1, 10);
  check_integers("\"minimum\":5,\"exclusiveMinimum\":true", 6, 1L << 40);
  check_integers("\"minimum\":1000,\"maximum\":1100", 1000, 1100);
  auto big = schema(R"({"type":"integer","minimum":-5})");
  EXPECT_TRUE(full_match(big, "123456789012345"));
}

// Numbers with integer bounds against their value (strtod), on decimals around the bounds.
void check_numbers(const std::string& bounds, double lo, bool lo_excl, double hi, bool hi_excl) {
  SCOPED_TRACE(bounds);
  auto g = schema("{\"type\":\"number\"," + bounds + "}");
  for (const char* frac : {"", ".0", ".00", ".5", ".05", ".999", ".001"}) {
    for (long n = -30; n <= 30; ++n) {
      for (int sign = 0; sign < 2; ++sign) {
        if (sign == 1 && n != 0) continue;  // "-0.x"
        if (sign == 1 && (frac[0] == '\0' || std::string(frac).find_first_not_of(".0") == std::string::npos))
          continue;  // -0 is 0, which the grammar writes without the sign
        const std::string text = (sign ? "-" : "") + std::to_string(n) + frac;
        const double v = std::strtod(text.c_str(), nullptr);
        const bool expected = (lo_excl ? v > lo : v >= lo) && (hi_excl ? v < hi : v <= hi);
        ASSERT_EQ(full_match(g, text), expected) << text;
      }
    }
  }
}

TEST(JsonSchema, NumberRangesWithIntegerBoundsAreExact) {
  const double inf = INFINITY;
  check_numbers("\"minimum\":0", 0, false, inf, false);
  check_numbers("\"exclusiveMinimum\":0", 0, true, inf, false);
  check_numbers("\"minimum\":-3,\"maximum\":12", -3, false, 12, false);
  check_numbers("\"exclusiveMinimum\":-3,\"exclusiveMaximum\":12", -3, true, 12, true);
  check_numbers("\"maximum\":-2", -inf, false, -2, false);
  check_numbers("\"exclusiveMaximum\":0", -inf, false, 0, true);
  check_numbers("\"minimum\":-10,\"exclusiveMaximum\":-1", -10, false, -1, true);
  auto free = schema(R"({"type":"number"})");
  for (const char* yes : {"0", "-0", "1.5", "-2e10", "3E-2", "0.0e+1"}) EXPECT_TRUE(full_match(free, yes)) << yes;
  for (const char* no : {"01", ".5", "1.", "+1", "1e", "--1", "NaN"}) EXPECT_FALSE(full_match(free, no)) << no;
}

TEST(JsonSchema, Formats) {
  auto date = schema(R"({"type":"string","format":"date"})");
  for (const char* yes : {"\"2024-01-31\"", "\"1999-02-28\"", "\"2023-11-30\""}) EXPECT_TRUE(full_match(date, yes)) << yes;
  for (const char* no : {"\"2024-02-30\"", "\"2024-04-31\"", "\"2024-13-01\"", "\"24-01-01\"", "\"x2024-01-01\""})
    EXPECT_FALSE(full_match(date, no)) << no;
  auto time = schema(R"({"type":"string","format":"time"})");
  EXPECT_TRUE(full_match(time, "\"23:59:59.123Z\""));
  EXPECT_TRUE(full_match(time, "\"00:00:00+05:30\""));
  EXPECT_FALSE(full_match(time, "\"24:00:00Z\""));
  auto date_time = schema(R"({"type":"string","format":"date-time"})");
  EXPECT_TRUE(full_match(date_time, "\"2024-05-06T07:08:09Z\""));
  auto uuid = schema(R"({"type":"string","format":"uuid"})");
  EXPECT_TRUE(full_match(uuid, "\"123e4567-e89b-12d3-a456-426614174000\""));
  EXPECT_FALSE(full_match(uuid, "\"123e4567e89b-12d3-a456-426614174000\""));
  auto email = schema(R"({"type":"string","format":"email"})");
  EXPECT_TRUE(full_match(email, "\"a.b+c@example.co.uk\""));
  EXPECT_FALSE(full_match(email, "\"a@b\""));
  auto ipv4 = schema(R"({"type":"string","format":"ipv4"})");
  EXPECT_TRUE(full_match(ipv4, "\"255.0.10.199\""));
  EXPECT_FALSE(full_match(ipv4, "\"256.0.0.1\""));
  EXPECT_FALSE(full_match(ipv4, "\"01.0.0.1\""));
}

TEST(JsonSchema, WhitespaceIsBounded) {
  auto g = compiled(json_object_grammar());
  EXPECT_TRUE(full_match(g, "{ \"a\": 1 }"));
  EXPECT_TRUE(full_match(g, "{\n" + std::string(24, ' ') + "\"a\":\t1\n}") == false);  // a tab after ':' alone: no
  EXPECT_TRUE(full_match(g, "{\n" + std::string(24, ' ') + "\"a\": 1\n}"));
  EXPECT_FALSE(full_match(g, "{\n" + std::string(25, ' ') + "\"a\": 1\n}"));
  EXPECT_FALSE(full_match(g, "{  \"a\": 1}"));
  EXPECT_FALSE(full_match(g, "{\"a\" : 1}"));
  EXPECT_FALSE(full_match(g, " {}"));
  EXPECT_FALSE(full_match(g, "[]"));  // json_object: an object at the top
  auto value = compiled(json_value_grammar());
  EXPECT_TRUE(full_match(value, "[]"));
  EXPECT_TRUE(full_match(value, "\"s\""));
}

void expect_error(const std::string& text, const std::string& construct, bool unsupported) {
  SCOPED_TRACE(text);
  try {
    json_schema_grammar_from_text(text);
    ADD_FAILURE() << "no error";
  } catch (const UnsupportedError& e) {
    EXPECT_TRUE(unsupported) << e.what();
    EXPECT_EQ(e.construct(), construct) << e.what();
  } catch (const GrammarError& e) {
    EXPECT_FALSE(unsupported) << e.what();
    EXPECT_EQ(e.construct(), construct) << e.what();
  }
}

TEST(JsonSchema, UnsupportedKeywordsAreNamed) {
  expect_error(R"({"not":{"type":"string"}})", "not", true);
  expect_error(R"({"type":"object","patternProperties":{"^a":{}}})", "patternProperties", true);
  expect_error(R"({"type":"object","properties":{"a":{"type":"integer","multipleOf":3}}})", "multipleOf", true);
  expect_error(R"({"type":"array","uniqueItems":true})", "uniqueItems", true);
  expect_error(R"({"allOf":[{"type":"integer"},{"minimum":1}]})", "allOf", true);
  expect_error(R"({"type":"string","format":"uri"})", "format", true);
  expect_error(R"({"$ref":"https://example.com/s.json"})", "$ref", true);
  expect_error(R"({"type":"number","minimum":0.5})", "minimum", true);
  expect_error(R"({"type":"string","nullable":true})", "nullable", true);
  expect_error(R"({"anyOf":[{"type":"string"}],"minLength":1})", "minLength", true);
  expect_error(R"({"type":"string","pattern":"a","maxLength":3})", "maxLength", true);
  expect_error("{\"type\":\"string\",\"pattern\":\"(?=a)\"}", "pattern", true);
  expect_error(R"({"type":"array","items":[{"type":"string"}]})", "items", true);
  expect_error(R"({"if":{"type":"string"},"then":{}})", "if", true);
}

TEST(JsonSchema, InvalidSchemasAreNamed) {
  expect_error(R"({"type":"strin"})", "type", false);
  expect_error(R"({"type":"object","required":"a"})", "required", false);
  expect_error("{\"type\":\"string\",\"pattern\":\"(a\"}", "pattern", false);
  expect_error(R"({"$ref":"#/$defs/missing"})", "$ref", false);
  expect_error(R"({"type":"array","minItems":3,"maxItems":2})", "minItems", false);
  expect_error(R"({"type":"integer","minimum":3,"maximum":2})", "#", false);
  expect_error(R"({"enum":[]})", "enum", false);
  expect_error(R"({"type":"object",)", "schema", false);
  expect_error(R"(false)", "false", false);
  expect_error(R"({"$ref":"#"})", "#", false);  // a rule that is only itself: left recursion
}

}  // namespace
}  // namespace zinfer::grammar
