// libFuzzer target for the OpenAI request parser (gateway/openai_request.h): any body, for the
// completions and the chat API, must parse into a request or be refused with an ApiError (a 4xx
// in OpenAI's shape): never crash, hang or leak.
// Invariant 25 (docs/architecture.md): no input aborts a process.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "gateway/api_error.h"
#include "gateway/openai_request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace zinfer::gateway;
  static const HttpOptions options = [] {
    HttpOptions o;
    o.served_model_name = "default";
    o.max_model_len = 4096;
    return o;
  }();
  if (size == 0) return 0;
  const ApiKind kind = data[0] % 2 == 0 ? ApiKind::kCompletions : ApiKind::kChat;
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    OpenAiRequest r = parse_openai_request(kind, body, options);
    (void)r;
  } catch (const ApiError& e) {
    (void)e.to_json().dump();
  }
  return 0;
}
