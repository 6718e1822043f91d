// libFuzzer target for tokenizer.json loading (actors/tokenizer): any JSON text must load into a
// tokenizer or be refused with an exception naming the problem; a tokenizer that loads must encode
// and decode text without crashing. Never crash, hang or leak.
// Invariant 25 (docs/architecture.md): no input aborts a process.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string_view>

#include "actors/tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view json(reinterpret_cast<const char*>(data), size);
  std::shared_ptr<const zinfer::tok::Tokenizer> t;
  try {
    t = zinfer::tok::Tokenizer::from_json(json, "fuzz");
  } catch (const zinfer::tok::TokenizerError&) {
    return 0;
  }
  try {
    for (std::string_view text : {std::string_view("Hello, world! 123 \xe4\xb8\x96\xe7\x95\x8c <|im_end|>  \n\t x"),
                                  json.substr(0, 256)}) {
      const auto ids = t->encode(text, true);
      (void)t->decode(ids, false);
    }
  } catch (const zinfer::tok::TokenizerError&) {
    // An input the tokenizer refuses (e.g. a prompt it cannot cover) is an error, not a crash.
  }
  return 0;
}
