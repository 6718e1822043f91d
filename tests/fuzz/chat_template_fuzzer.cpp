// libFuzzer target for chat templates (actors/chat_template): any template source must parse or be
// refused with a TemplateError, and a template that parses must render a fixed conversation or
// fail with a TemplateError: never crash, hang or leak.
// Invariant 25 (docs/architecture.md): no input aborts a process.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>

#include <nlohmann/json.hpp>

#include "actors/chat_template/chat_template.h"
#include "actors/chat_template/template_error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const nlohmann::json context = nlohmann::json::parse(R"({
    "messages": [
      {"role": "system", "content": "be brief"},
      {"role": "user", "content": "hi <b>there</b> \u4e16"},
      {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function",
        "function": {"name": "f", "arguments": {"x": 1}}}]},
      {"role": "tool", "content": "42", "tool_call_id": "c1"}
    ],
    "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
    "add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>", "enable_thinking": false
  })");
  try {
    zinfer::chat::ChatTemplate t(std::string(reinterpret_cast<const char*>(data), size));
    (void)t.render(context);
  } catch (const zinfer::chat::TemplateError&) {
  }
  return 0;
}
