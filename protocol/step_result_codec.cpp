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
  read_map_record(r, [&](std::string_view key) {
    if (key == "token") {
      t.token = r.read_int<int32_t>();
      return true;
    }
    if (key == "logprob") {
      t.logprob = r.read_float();
      return true;
    }
    return false;
  });
}

void write_payload(WireWriter& w, const SeqOutput& o) {
  w.array_header(4);
  w.integer(o.seq_id);
  w.integer(o.token);
  w.float32(o.logprob);
  write_records(w, o.top_logprobs);
}

void read_payload(WireReader& r, SeqOutput& o) {
  read_array_record(r, [&](ArrayFields& f) {
    if (!f.next("seq_id")) return;
    o.seq_id = r.read_int<uint64_t>();
    if (!f.next("token")) return;
    o.token = r.read_int<int32_t>();
    if (!f.next("logprob")) return;
    o.logprob = r.read_float();
    if (!f.next("top_logprobs")) return;
    read_records(r, o.top_logprobs);
  });
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
  read_map_record(r, [&](std::string_view key) {
    if (key == "step_id") {
      s.step_id = r.read_int<uint64_t>();
      return true;
    }
    if (key == "outputs") {
      read_records(r, s.outputs);
      return true;
    }
    if (key == "forward_us") {
      s.forward_us = r.read_int<int64_t>();
      return true;
    }
    if (key == "error") {
      s.error = r.read_str();
      return true;
    }
    return false;
  });
}

size_t payload_size_hint(const StepResult& s) {
  size_t bytes = 64 + s.error.size();
  for (const SeqOutput& o : s.outputs) bytes += 24 + 24 * o.top_logprobs.size();
  return bytes;
}

}  // namespace zinfer::protocol
