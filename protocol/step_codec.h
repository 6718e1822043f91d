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
#include <string_view>
#include <vector>

#include "protocol/messages.h"
#include "protocol/wire_reader.h"
#include "protocol/wire_writer.h"

namespace zinfer::protocol {

void write_payload(WireWriter& w, const StepPlan& plan);
void read_payload(WireReader& r, StepPlan& plan);
// As read_payload, into a plan that held an earlier one: its SeqWork records are reused with
// their vectors' memory (record_reuse.h). Every field is read or reset to its default, so the
// plan and the errors are those of a fresh decode.
void read_payload_reusing(WireReader& r, StepPlan& plan);
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
void write_payload(WireWriter& w, const SeqError& error);
void read_payload(WireReader& r, SeqError& error);

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

// The reading skeleton of a fixed-array record (SeqWork, BlockCopy, SeqOutput, TokenDelta):
// `read_fields(fields)` reads the fields in declaration order, each behind
// `if (!fields.next("name")) return;` (an older peer's record ends early: the rest keep their
// defaults); what a newer peer appended is skipped afterwards. An error names the field.
class ArrayFields {
 public:
  explicit ArrayFields(uint32_t count) : count_(count) {}
  bool next(const char* name) {
    field_ = name;
    return read_++ < count_;
  }
  void skip_rest(WireReader& r) {
    field_ = "(a field of a newer version)";
    for (; read_ < count_; ++read_) r.skip();
  }
  const char* field() const { return field_; }

 private:
  uint32_t count_;
  uint32_t read_ = 0;
  const char* field_ = "";
};

// Inlined with the caller's lambda so that the field cursor stays in registers: a step's plan
// reads this for every one of its sequences.
template <class ReadFields>
[[gnu::always_inline]] inline void read_array_record(WireReader& r, ReadFields&& read_fields) {
  ArrayFields fields(r.read_array_header());
  try {
    read_fields(fields);
    fields.skip_rest(r);
  } catch (const ProtocolError& e) {
    throw e.within(fields.field());
  }
}

// The reading skeleton of a map record (StepPlan, StepResult, TopLogprob, TokenDeltaBatch):
// `read_field(key)` reads the value of a key it knows and returns true; a key it does not know (a
// newer minor version's) is skipped, a missing one keeps its default. An error names the key.
template <class ReadField>
void read_map_record(WireReader& r, ReadField&& read_field) {
  const uint32_t n = r.read_map_header();
  std::string_view key;
  try {
    for (uint32_t i = 0; i < n; ++i) {
      key = {};
      key = r.read_key();
      if (!read_field(key)) r.skip();
    }
  } catch (const ProtocolError& e) {
    if (key.empty()) throw;
    throw e.within(key);
  }
}

}  // namespace zinfer::protocol
