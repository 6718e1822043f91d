// The differential corpus: small templates covering the supported Jinja subset, each with the
// output (or the error) Jinja2 3.1 gives in transformers' configuration
// (tools/fixtures/make_chat_refs.py --cases regenerates the expectations). The whitespace_random_*
// cases mix text with tags using every whitespace modifier (-, +, trim_blocks, lstrip_blocks);
// they were drawn once with a fixed seed.
#include <gtest/gtest.h>

#include "actors/chat_template/chat_template.h"
#include "tests/chat_template/test_data.h"

namespace zinfer::chat {
namespace {

TEST(JinjaCases, EveryCaseMatchesJinja2) {
  const auto path = testing::source_path("tests/data/chat_template/template_cases.json");
  ASSERT_TRUE(std::filesystem::exists(path)) << "missing " << path;
  const auto cases = testing::read_json(path);
  ASSERT_GE(cases.size(), 60u);
  size_t checked_outputs = 0, checked_errors = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE("case " + c["name"].get<std::string>() + ": " + c["template"].get<std::string>());
    // A case may print a Python repr we render differently (dict views print as lists); marked.
    if (c.contains("zinfer_known_difference")) continue;
    if (c.contains("expected")) {
      try {
        EXPECT_EQ(ChatTemplate(c["template"].get<std::string>()).render(c["context"]), c["expected"].get<std::string>());
      } catch (const TemplateError& e) {
        ADD_FAILURE() << "unexpected error: " << e.what();
      }
      ++checked_outputs;
    } else {
      ASSERT_TRUE(c.contains("error"));
      EXPECT_THROW(ChatTemplate(c["template"].get<std::string>()).render(c["context"]), TemplateError)
          << "Jinja2 raised " << c["error"];
      ++checked_errors;
    }
  }
  EXPECT_GT(checked_outputs, 50u);
  EXPECT_GT(checked_errors, 8u);
}

}  // namespace
}  // namespace zinfer::chat
