// libFuzzer target for the protocol decoder: any byte string must either decode or throw
// ProtocolError — never crash, hang or leak.
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
    Frame f = open(std::string_view(reinterpret_cast<const char*>(data), size));
    try_as<GenerateRequest>(f);
    try_as<TokenizedRequest>(f);
    try_as<StepPlan>(f);
    try_as<StepResult>(f);
    try_as<TokenDelta>(f);
    try_as<TextDelta>(f);
    try_as<Abort>(f);
    try_as<Stats>(f);
  } catch (const ProtocolError&) {
  }
  return 0;
}
