// StepResult and its records (SeqOutput, TopLogprob): the executor -> scheduler answer of a step.
#include "protocol/step_codec.h"

namespace zinfer::protocol {

void write_payload(WireWriter& w, const TopLogprob& t) {
  w.map_header(2);
  w.str("token");
  w.integer(t.token);
  w.str("logprob");
  w.float32(t.logprob);
}

void read_payload(WireReader& r, TopLogprob& t) {
  const uint32_t n = r.read_map_header();
  std::string_view key;
  try {
    for (uint32_t i = 0; i < n; ++i) {
      key = {};
      key = r.read_key();
      if (key == "token") {
        t.token = r.read_int<int32_t>();
      } else if (key == "logprob") {
        t.logprob = r.read_float();
      } else {
        r.skip();
      }
    }
  } catch (const ProtocolError& e) {
    if (key.empty()) throw;
    throw e.within(key);
  }
}

void write_payload(WireWriter& w, const SeqOutput& o) {
  w.array_header(4);
  w.integer(o.seq_id);
  w.integer(o.token);
  w.float32(o.logprob);
  write_records(w, o.top_logprobs);
}

void read_payload(WireReader& r, SeqOutput& o) {
  const uint32_t n = r.read_array_header();
  const char* field = "seq_id";
  try {
    if (n > 0) o.seq_id = r.read_int<uint64_t>();
    field = "token";
    if (n > 1) o.token = r.read_int<int32_t>();
    field = "logprob";
    if (n > 2) o.logprob = r.read_float();
    field = "top_logprobs";
    if (n > 3) read_records(r, o.top_logprobs);
    field = "(a field of a newer version)";
    for (uint32_t i = 4; i < n; ++i) r.skip();
  } catch (const ProtocolError& e) {
    throw e.within(field);
  }
}

void write_payload(WireWriter& w, const StepResult& s) {
  w.map_header(4);
  w.str("step_id");
  w.integer(s.step_id);
  w.str("outputs");
  write_records(w, s.outputs);
  w.str("forward_us");
  w.integer(s.forward_us);
  w.str("error");
  w.str(s.error);
}

void read_payload(WireReader& r, StepResult& s) {
  const uint32_t n = r.read_map_header();
  std::string_view key;
  try {
    for (uint32_t i = 0; i < n; ++i) {
      key = {};
      key = r.read_key();
      if (key == "step_id") {
        s.step_id = r.read_int<uint64_t>();
      } else if (key == "outputs") {
        read_records(r, s.outputs);
      } else if (key == "forward_us") {
        s.forward_us = r.read_int<int64_t>();
      } else if (key == "error") {
        s.error = r.read_str();
      } else {
        r.skip();  // a field of a newer minor version
      }
    }
  } catch (const ProtocolError& e) {
    if (key.empty()) throw;
    throw e.within(key);
  }
}

size_t payload_size_hint(const StepResult& s) {
  size_t bytes = 64 + s.error.size();
  for (const SeqOutput& o : s.outputs) bytes += 24 + 24 * o.top_logprobs.size();
  return bytes;
}

}  // namespace zinfer::protocol
