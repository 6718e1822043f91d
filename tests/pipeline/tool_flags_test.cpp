// The tool-calling settings of `zinfer serve`: vLLM's --tool-call-parser and
// --enable-auto-tool-choice reach the gateway; an unknown parser and auto tool choice without a
// parser are start-up errors naming them (as vLLM refuses them).
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "actors/pipeline/engine_config.h"
#include "tools/flags/serve_flags.h"

namespace zinfer::cli {
namespace {

actors::EngineConfig serve(std::vector<std::string> args) {
  CLI::App app;
  ServeFlags flags;
  flags.add(app);
  std::reverse(args.begin(), args.end());  // CLI11 takes them last first
  app.parse(args);
  return flags.load();
}

std::string error_of(std::vector<std::string> args) {
  try {
    serve(std::move(args));
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(ToolFlags, ReachTheGateway) {
  const auto g = actors::gateway_options(serve({"m", "--tool-call-parser", "llama3_json", "--enable-auto-tool-choice"}), 100);
  EXPECT_EQ(g.http.tool_call_parser, "llama3_json");
  EXPECT_TRUE(g.http.enable_auto_tool_choice);
  const auto d = serve({"m"});
  EXPECT_EQ(d.server.http.tool_call_parser, "");
  EXPECT_FALSE(d.server.http.enable_auto_tool_choice);
  EXPECT_EQ(serve({"m", "--tool-call-parser", "mistral"}).server.http.tool_call_parser, "mistral");
}

TEST(ToolFlags, AnUnknownParserIsAStartUpErrorNamingIt) {
  const std::string why = error_of({"m", "--tool-call-parser", "qwen_xml"});
  EXPECT_NE(why.find("qwen_xml"), std::string::npos) << why;
  EXPECT_NE(why.find("tool_call_parser"), std::string::npos) << why;
  EXPECT_NE(why.find("hermes"), std::string::npos) << why;  // the known ones are listed
}

TEST(ToolFlags, AutoToolChoiceNeedsAParser) {
  const std::string why = error_of({"m", "--enable-auto-tool-choice"});
  EXPECT_NE(why.find("--tool-call-parser"), std::string::npos) << why;
  EXPECT_THROW(actors::parse_engine_config("[server]\nenable_auto_tool_choice = true\n", "t.toml"), std::exception);
  EXPECT_NO_THROW(actors::parse_engine_config("[server]\ntool_call_parser = \"hermes\"\nenable_auto_tool_choice = true\n",
                                              "t.toml"));
}

}  // namespace
}  // namespace zinfer::cli
