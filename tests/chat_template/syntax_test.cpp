// Hand-checked behaviour of the interpreter: whitespace control, scoping, and the errors a
// template author sees (with line:column).
#include <gtest/gtest.h>

#include <ctime>

#include "actors/chat_template/chat_template.h"

namespace zinfer::chat {
namespace {

using nlohmann::json;

std::string render(const std::string& source, const json& context = json::object()) {
  return ChatTemplate(source).render(context);
}

TemplateError error_of(const std::string& source, const json& context = json::object()) {
  try {
    ChatTemplate(source).render(context);
  } catch (const TemplateError& e) {
    return e;
  }
  ADD_FAILURE() << "no TemplateError for: " << source;
  return TemplateError("none");
}

TEST(Whitespace, TrimBlocksDropsTheNewlineAfterATag) {
  EXPECT_EQ(render("{% if true %}\nx\n{% endif %}\ny"), "x\ny");
}

TEST(Whitespace, LstripBlocksDropsIndentationBeforeATagButNotBeforeOutput) {
  EXPECT_EQ(render("  {% if true %}\n  {{ 'a' }}\n  {% endif %}\n"), "  a\n");
}

TEST(Whitespace, DashStripsAllWhitespaceIncludingNewlines) {
  EXPECT_EQ(render("a \n\t {{- 'b' -}} \n c"), "abc");
  EXPECT_EQ(render("a\n\n{%- if true -%}\n\n b {%- endif %}"), "ab");
}

TEST(Whitespace, OneTrailingNewlineOfTheTemplateIsDropped) {
  EXPECT_EQ(render("x\n"), "x");
  EXPECT_EQ(render("x\n\n"), "x\n");
}

TEST(Whitespace, PlusKeepsIndentation) {
  EXPECT_EQ(render("  {%+ if true %}x{% endif %}"), "  x");
}

TEST(Scoping, SetInsideALoopDoesNotLeakButNamespaceDoes) {
  EXPECT_EQ(render("{% set n = 1 %}{% for i in [1, 2] %}{% set n = n + i %}{{ n }}{% endfor %}{{ n }}"), "231");
  EXPECT_EQ(render("{% set ns = namespace(n=1) %}{% for i in [1, 2] %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }}"),
            "4");
}

TEST(Rendering, OneParsedTemplateRendersManyContextsIndependently) {
  const ChatTemplate t("{% set ns = namespace(seen=0) %}{% for m in messages %}{% set ns.seen = ns.seen + 1 %}{% endfor %}"
                       "{{ ns.seen }}:{{ messages | map(attribute='content') | join('|') }}");
  EXPECT_EQ(t.render(json{{"messages", json::array({{{"content", "a"}}, {{"content", "b"}}})}}), "2:a|b");
  EXPECT_EQ(t.render(json{{"messages", json::array({{{"content", "c"}}})}}), "1:c");
  EXPECT_EQ(t.render(json{{"messages", json::array({{{"content", "a"}}, {{"content", "b"}}})}}), "2:a|b");
}

TEST(Rendering, PythonStringSemantics) {
  EXPECT_EQ(render("{{ ' a  b '.split() }}|{{ ' a  b '.split(' ') }}"), "['a', 'b']|['', 'a', '', 'b', '']");
  EXPECT_EQ(render("{{ s[::-1] }}{{ s | length }}{{ s[1] }}", json{{"s", "añ日"}}), "日ña3ñ");
  EXPECT_EQ(render("{{ '\\n\\nx\\n'.lstrip('\\n') }}|{{ 'x</think>\\n\\ny'.split('</think>')[-1].lstrip('\\n') }}"),
            "x\n|y");
  EXPECT_EQ(render("{{ d | tojson }}", json{{"d", {{"k", "é\n"}, {"n", 1.5}}}}), "{\"k\": \"é\\n\", \"n\": 1.5}");
}

TEST(Rendering, StrftimeNowFormatsTheCurrentLocalTime) {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  const std::string year = std::to_string(local.tm_year + 1900);
  const std::string out = render("{{ strftime_now('%Y') }}|{{ strftime_now('%d %b %Y') | length }}");
  // Tolerates the render straddling New Year's midnight.
  EXPECT_TRUE(out == year + "|11" || out == std::to_string(local.tm_year + 1901) + "|11") << out;
}

TEST(Rendering, MacrosAndGenerationBlocks) {
  EXPECT_EQ(render("{% macro tag(name, body='') %}<{{ name }}>{{ body }}</{{ name }}>{% endmacro %}"
                   "{{ tag('a') }}{{ tag('b', body='x') }}"),
            "<a></a><b>x</b>");
  // transformers' {% generation %} marks assistant text for masks; rendering keeps its body.
  EXPECT_EQ(render("{% generation %}kept {{ 1 + 1 }}{% endgeneration %}"), "kept 2");
}

TEST(Errors, UnsupportedTagNamesTheTagAndItsPosition) {
  try {
    ChatTemplate("line one\n  {% include 'other.jinja' %}");
    FAIL() << "include was accepted";
  } catch (const TemplateError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.column(), 6);
    EXPECT_NE(std::string(e.what()).find("unsupported tag 'include'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("2:6"), std::string::npos) << e.what();
  }
  try {
    ChatTemplate("{% extends 'base.jinja' %}");
    FAIL() << "extends was accepted";
  } catch (const TemplateError& e) {
    EXPECT_EQ(e.line(), 1);
    EXPECT_EQ(e.column(), 4);
    EXPECT_NE(std::string(e.what()).find("'extends'"), std::string::npos) << e.what();
  }
}

TEST(Errors, SyntaxErrorsArePositioned) {
  try {
    ChatTemplate("ok\n{{ 1 + }}");
    FAIL();
  } catch (const TemplateError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.column(), 8);
  }
  EXPECT_NE(std::string(error_of("{% for x in y %}x").what()).find("endfor"), std::string::npos);
  EXPECT_NE(std::string(error_of("{% frobnicate %}").what()).find("unknown tag 'frobnicate'"), std::string::npos);
  EXPECT_NE(std::string(error_of("{% break %}").what()).find("outside of a loop"), std::string::npos);
  EXPECT_NE(std::string(error_of("{% for x in xs recursive %}{% endfor %}").what()).find("recursive"), std::string::npos);
}

TEST(Errors, RuntimeErrorsNameTheProblemAndPosition) {
  const auto missing_method = error_of("x\n {{ 'abc'.nosuch() }}");
  EXPECT_EQ(missing_method.line(), 2);
  EXPECT_NE(std::string(missing_method.what()).find("no attribute 'nosuch'"), std::string::npos) << missing_method.what();
  const auto filter = error_of("{{ 'a' | frobnicate }}");
  EXPECT_NE(std::string(filter.what()).find("unsupported filter 'frobnicate'"), std::string::npos) << filter.what();
  const auto raised = error_of("{{ raise_exception('roles must alternate') }}");
  EXPECT_NE(std::string(raised.what()).find("roles must alternate"), std::string::npos) << raised.what();
  const auto undefined = error_of("{{ missing.attr }}");
  EXPECT_NE(std::string(undefined.what()).find("'missing' is undefined"), std::string::npos) << undefined.what();
  EXPECT_THROW(render("{{ xs.append(1) }}", json{{"xs", json::array()}}), TemplateError);
}

TEST(Errors, UnsupportedPartsInBranchesNotTakenDoNotFail) {
  EXPECT_EQ(render("{% if false %}{{ x | frobnicate }}{% endif %}ok"), "ok");
}

TEST(Errors, RunawayTemplatesFailCleanly) {
  EXPECT_THROW(ChatTemplate("{{ " + std::string(1000, '(') + "1" + std::string(1000, ')') + " }}"), TemplateError);
  EXPECT_THROW(ChatTemplate("{{ " + std::string(1000, '-') + "1 }}"), TemplateError);
  EXPECT_THROW(render("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}"), TemplateError);
  EXPECT_THROW(render("{{ 'x' * 1000000000000 }}"), TemplateError);
  EXPECT_THROW(render("{{ 2 ** 64 }}"), TemplateError);  // Python would give a big int; we refuse, not wrap
  EXPECT_THROW(render("{{ 9223372036854775807 + 1 }}"), TemplateError);
  EXPECT_EQ(render("{{ 1 ** 1000000000000000000 }} {{ 2 ** 62 }} {{ (-3) ** 3 }}"), "1 4611686018427387904 -27");
  // Work and size are bounded per render (interpreter.h): nested loops, a string doubled in a
  // loop, a list of big strings repeated, huge indents, and Jinja's sandbox range limit.
  EXPECT_NE(error_of("{% for a in range(99999) %}{% for b in range(99999) %}{% endfor %}{% endfor %}").message().find(
                "too much work"),
            std::string::npos);
  EXPECT_THROW(render("{% set ns = namespace(s='x') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}"),
               TemplateError);
  EXPECT_NE(error_of("{{ 'x' * 10000000 ~ 'y' * 10000000 }}").message().find("MiB"), std::string::npos);
  EXPECT_THROW(render("{{ ['" + std::string(1000, 'y') + "'] * 100000 }}"), TemplateError);
  EXPECT_THROW(render("{{ 'a' | indent(1000000000) }}"), TemplateError);
  EXPECT_THROW(render("{{ {} | tojson(indent=1000000000) }}"), TemplateError);
  EXPECT_THROW(render("{{ range(100001) | length }}"), TemplateError);
  EXPECT_EQ(render("{{ range(100000) | length }}"), "100000");
  EXPECT_EQ(render("{{ 'ab' * 3 }}{{ (['a'] * 2) | length }}{{ 'a' | indent(8, true) }}"), "ababab2        a");
  EXPECT_EQ(render(std::string(30, '(') + "1" + std::string(30, ')') + "{{ " + std::string(30, '(') + "2" +
                   std::string(30, ')') + " }}"),
            std::string(30, '(') + "1" + std::string(30, ')') + "2");
}

TEST(Errors, ContextMustBeAnObject) {
  EXPECT_THROW(ChatTemplate("x").render(json::array()), TemplateError);
}

}  // namespace
}  // namespace zinfer::chat
