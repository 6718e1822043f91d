// libFuzzer target for the protocol decoder: any byte string must either decode or throw
// ProtocolError — never crash, hang or leak.
// Invariant 25 (docs/architecture.md): no input aborts a process.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "protocol/envelope.h"

namespace {
template <class T>
void try_as(const zinfer::protocol::Frame& f) {
  try {
    (void)f.as<T>();
  } catch (const zinfer::protocol::ProtocolError&) {
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace zinfer::protocol;
  try {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    // decode<T> reads the caller's bytes in place (no copy): the sanitizers watch it there.
    try {
      (void)decode<StepPlan>(bytes);
    } catch (const ProtocolError&) {
    }
    Frame f = open(bytes);
    try_as<GenerateRequest>(f);
    try_as<TokenizedRequest>(f);
    try_as<StepPlan>(f);
    try_as<StepResult>(f);
    try_as<TokenDelta>(f);
    try_as<TokenDeltaBatch>(f);
    try_as<TextDelta>(f);
    try_as<Abort>(f);
    try_as<Stats>(f);
  } catch (const ProtocolError&) {
  }
  return 0;
}
