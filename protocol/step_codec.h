// Hand-written msgpack encoders and decoders for the messages of the step path: per step at 256
// running sequences they carry thousands of values, and msgpack-c's generic path (an object tree
// per frame, a std::map of keys per struct) was most of the control plane's time
// (docs/benchmarks/scheduler.md). The wire format is exactly the one messages.h declares with
// MSGPACK_DEFINE / MSGPACK_DEFINE_MAP, byte for byte, and the reading contract is the same:
//   - maps (StepPlan, StepResult, TopLogprob, TokenDeltaBatch): unknown keys are skipped, missing
//     keys keep their defaults;
//   - fixed arrays (SeqWork, BlockCopy, SeqOutput, TokenDelta): missing trailing fields keep their
//     defaults, extra trailing fields are skipped.
// protocol::encode / Frame::as<T> / protocol::decode<T> pick these automatically (FastCodec).
// Decoders throw ProtocolError (WireReader's kinds), naming the field that did not decode.
#pragma once

#include <concepts>
#include <string>
#include <vector>

#include "protocol/messages.h"
#include "protocol/wire_reader.h"
#include "protocol/wire_writer.h"

namespace zinfer::protocol {

void write_payload(WireWriter& w, const StepPlan& plan);
void read_payload(WireReader& r, StepPlan& plan);
void write_payload(WireWriter& w, const SeqWork& work);
void read_payload(WireReader& r, SeqWork& work);
void write_payload(WireWriter& w, const BlockCopy& copy);
void read_payload(WireReader& r, BlockCopy& copy);

void write_payload(WireWriter& w, const StepResult& result);
void read_payload(WireReader& r, StepResult& result);
void write_payload(WireWriter& w, const SeqOutput& output);
void read_payload(WireReader& r, SeqOutput& output);
void write_payload(WireWriter& w, const TopLogprob& top);
void read_payload(WireReader& r, TopLogprob& top);

void write_payload(WireWriter& w, const TokenDelta& delta);
void read_payload(WireReader& r, TokenDelta& delta);
void write_payload(WireWriter& w, const TokenDeltaBatch& batch);
void read_payload(WireReader& r, TokenDeltaBatch& batch);

// A payload size guess for the writer's first allocation (a guess only: the writer grows).
size_t payload_size_hint(const StepPlan& plan);
size_t payload_size_hint(const StepResult& result);
size_t payload_size_hint(const TokenDelta& delta);
size_t payload_size_hint(const TokenDeltaBatch& batch);

// The types with a hand-written codec.
template <class T>
concept FastCodec = requires(WireWriter& w, WireReader& r, const T& in, T& out) {
  write_payload(w, in);
  read_payload(r, out);
  { payload_size_hint(in) } -> std::convertible_to<size_t>;
};

// Shared by the codecs: an array of records, each through its own read_payload/write_payload.
template <class T>
void write_records(WireWriter& w, const std::vector<T>& records) {
  w.array_header(records.size());
  for (const T& x : records) write_payload(w, x);
}

template <class T>
void read_records(WireReader& r, std::vector<T>& records) {
  const uint32_t n = r.read_array_header();
  records.clear();
  records.resize(n);
  uint32_t i = 0;
  try {
    for (; i < n; ++i) read_payload(r, records[i]);
  } catch (const ProtocolError& e) {
    throw e.within("[" + std::to_string(i) + "]");
  }
}

}  // namespace zinfer::protocol
