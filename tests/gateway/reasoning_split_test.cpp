// The reasoning parsers' decisions (gateway/reasoning/): where the reasoning part begins and
// ends, for the whole text and for the stream however its text is cut, including cuts inside
// the tags.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gateway/reasoning/reasoning_parser.h"
#include "gateway/reasoning/reasoning_split.h"

namespace zinfer::gateway::reasoning {
namespace {

const ReasoningParser& qwen3() { return *find_reasoning_parser("qwen3"); }
const ReasoningParser& deepseek() { return *find_reasoning_parser("deepseek_r1"); }

struct Split {
  std::string reasoning, content;
};

Split whole(const std::string& text, bool inside = true) {
  ReasoningParts p = split_reasoning(qwen3(), inside, text);
  return {p.reasoning, p.content};
}

// The stream fed `pieces` in order, every release concatenated.
Split streamed(const std::vector<std::string>& pieces, bool inside = true) {
  ReasoningStream s(qwen3(), inside);
  Split out;
  for (const auto& piece : pieces) {
    ReasoningParts p = s.push(piece);
    out.reasoning += p.reasoning;
    out.content += p.content;
  }
  ReasoningParts tail = s.finish();
  out.reasoning += tail.reasoning;
  out.content += tail.content;
  return out;
}

TEST(ReasoningParsers, KnownNamesAndTheirDecisions) {
  ASSERT_NE(find_reasoning_parser("qwen3"), nullptr);
  ASSERT_NE(find_reasoning_parser("deepseek_r1"), nullptr);
  EXPECT_EQ(find_reasoning_parser("qwen"), nullptr);
  EXPECT_EQ(find_reasoning_parser(""), nullptr);
  EXPECT_EQ(reasoning_parser_names(), "qwen3, deepseek_r1");

  protocol::GenerateRequest chat;
  chat.is_chat = true;
  chat.messages.push_back({});
  EXPECT_TRUE(starts_in_reasoning(qwen3(), chat));
  EXPECT_TRUE(starts_in_reasoning(deepseek(), chat));
  chat.enable_thinking = false;  // Qwen3's template closes the reasoning part in the prompt
  EXPECT_FALSE(starts_in_reasoning(qwen3(), chat));
  EXPECT_TRUE(starts_in_reasoning(deepseek(), chat));  // DeepSeek-R1's does not look at it
  protocol::GenerateRequest completion;
  completion.prompt = "p";
  EXPECT_FALSE(starts_in_reasoning(qwen3(), completion));
  EXPECT_FALSE(starts_in_reasoning(deepseek(), completion));
}

TEST(ReasoningSplit, WholeText) {
  // The model writes <think> itself (older templates) or the prompt opened it.
  EXPECT_EQ(whole("<think>abc</think>xyz").reasoning, "abc");
  EXPECT_EQ(whole("<think>abc</think>xyz").content, "xyz");
  EXPECT_EQ(whole("abc</think>xyz").reasoning, "abc");
  EXPECT_EQ(whole("abc</think>xyz").content, "xyz");
  EXPECT_EQ(whole("abc</think>").content, "");
  // No end tag: cut by max_tokens inside the reasoning part.
  EXPECT_EQ(whole("<think>abc").reasoning, "abc");
  EXPECT_EQ(whole("<think>abc").content, "");
  // The start tag is dropped once; a second one is the model's text.
  EXPECT_EQ(whole("<think>a<think>b</think>c").reasoning, "a<think>b");
  // After the end tag everything is content, tags included.
  EXPECT_EQ(whole("a</think>b</think><think>c").content, "b</think><think>c");
  EXPECT_EQ(whole("a</think>b</think><think>c").reasoning, "a");
  // Outside the reasoning part (Qwen3 with enable_thinking false): all content, verbatim.
  EXPECT_EQ(whole("<think>abc</think>xyz", false).content, "<think>abc</think>xyz");
  EXPECT_EQ(whole("<think>abc</think>xyz", false).reasoning, "");
}

TEST(ReasoningSplit, StreamCutsInsideTheTagsAreHeldBack) {
  ReasoningStream s(qwen3(), true);
  ReasoningParts p = s.push("<thi");
  EXPECT_EQ(p.reasoning, "");  // may be the start tag
  p = s.push("nk>plan</th");
  EXPECT_EQ(p.reasoning, "plan");  // "</th" waits
  EXPECT_EQ(p.content, "");
  EXPECT_TRUE(s.in_reasoning());
  p = s.push("ink>");
  EXPECT_EQ(p.reasoning, "");
  EXPECT_EQ(p.content, "");
  EXPECT_FALSE(s.in_reasoning());
  p = s.push("{\"a\":1}");
  EXPECT_EQ(p.content, "{\"a\":1}");
  EXPECT_EQ(s.finish().content, "");
}

TEST(ReasoningSplit, HeldTextThatIsNoTagIsReleased) {
  ReasoningStream s(qwen3(), true);
  EXPECT_EQ(s.push("a <").reasoning, "a ");
  EXPECT_EQ(s.push("b").reasoning, "<b");  // "<b" starts no tag
  EXPECT_EQ(s.push("x</").reasoning, "x");
  ReasoningParts tail = s.finish();  // the sample ended on a partial tag: it was text
  EXPECT_EQ(tail.reasoning, "</");
  EXPECT_EQ(tail.content, "");
}

TEST(ReasoningSplit, ContentIsNeverHeldBack) {
  ReasoningStream s(qwen3(), true);
  EXPECT_EQ(s.push("r</think>").content, "");
  EXPECT_EQ(s.push("c</th").content, "c</th");  // after the end tag nothing is a tag
  ReasoningStream off(qwen3(), false);
  EXPECT_EQ(off.push("<thi").content, "<thi");
}

// Every way of cutting the text into two or three pieces streams to what the whole split gives.
TEST(ReasoningSplit, EveryCutOfTheStreamAgreesWithTheWholeText) {
  const std::vector<std::string> texts = {
      "<think>abc</think>xyz", "abc</think>xyz", "<think>a<think>b</think>c</think>d", "<think>abc",
      "a</thin", "x<</think>y", "<<think>></think></think>", "</think>", "<think></think>", "no tags at all <"};
  int cases = 0;
  for (const auto& t : texts) {
    for (bool inside : {true, false}) {
      const Split expected = whole(t, inside);
      for (size_t i = 0; i <= t.size(); ++i) {
        for (size_t j = i; j <= t.size(); ++j) {
          const Split got = streamed({t.substr(0, i), t.substr(i, j - i), t.substr(j)}, inside);
          ASSERT_EQ(got.reasoning, expected.reasoning) << t << " cut at " << i << "," << j;
          ASSERT_EQ(got.content, expected.content) << t << " cut at " << i << "," << j;
          ++cases;
        }
      }
      // One byte at a time.
      std::vector<std::string> bytes;
      for (char c : t) bytes.emplace_back(1, c);
      const Split got = streamed(bytes, inside);
      EXPECT_EQ(got.reasoning, expected.reasoning) << t;
      EXPECT_EQ(got.content, expected.content) << t;
    }
  }
  EXPECT_GT(cases, 1000);
}

TEST(ReasoningSplit, DeepSeekSplitsLikeQwen3WhenThinking) {
  ReasoningParts p = split_reasoning(deepseek(), true, "step 1\nstep 2</think>\n\nanswer");
  EXPECT_EQ(p.reasoning, "step 1\nstep 2");
  EXPECT_EQ(p.content, "\n\nanswer");
}

}  // namespace
}  // namespace zinfer::gateway::reasoning
