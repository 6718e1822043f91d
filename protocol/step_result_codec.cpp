// StepResult and its records (SeqOutput, TopLogprob): the executor -> scheduler answer of a step.
#include "protocol/fast_cursor.h"
#include "protocol/packed_value.h"
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

void write_payload(WireWriter& w, const SeqError& e) {
  w.map_header(2);
  w.str("seq_id");
  w.integer(e.seq_id);
  w.str("message");
  w.str(e.message);
}

void read_payload(WireReader& r, SeqError& e) {
  read_map_record(r, [&](std::string_view key) {
    if (key == "seq_id") {
      e.seq_id = r.read_int<uint64_t>();
      return true;
    }
    if (key == "message") {
      e.message = r.read_str();
      return true;
    }
    return false;
  });
}

void write_payload(WireWriter& w, const SeqOutput& o) {
  // One capacity check for the fixed part (a result holds one record per sampling sequence).
  char* p = w.begin_record(1 + 3 * 9);
  p = WireWriter::put_array_header(p, 4);
  p = WireWriter::put_integer(p, o.seq_id);
  p = WireWriter::put_integer(p, o.token);
  p = WireWriter::put_float32(p, o.logprob);
  w.end_record(p);
  write_records(w, o.top_logprobs);
}

namespace {

// The usual record (fast_cursor.h): 4 fields, no alternatives. False leaves the reader where it
// was (the record then goes through the checked path, which also reads top_logprobs).
bool read_seq_output_fast(WireReader& r, SeqOutput& o) {
  FastCursor c(r);
  const bool ok = c.fixarray(4) && c.integer(o.seq_id) && c.integer(o.token) && c.float32(o.logprob) &&
                  c.fixarray(0);
  if (!ok) return false;
  o.top_logprobs.clear();
  c.commit(r);
  return true;
}

}  // namespace

void read_payload(WireReader& r, SeqOutput& o) {
  if (read_seq_output_fast(r, o)) return;
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
  w.map_header(6);
  w.str("step_id");
  w.integer(s.step_id);
  w.str("outputs");
  write_records(w, s.outputs);
  w.str("forward_us");
  w.integer(s.forward_us);
  w.str("error");
  w.str(s.error);
  w.str("seq_errors");
  write_records(w, s.seq_errors);
  w.str("prompt_logprobs");
  write_packed(w, s.prompt_logprobs);
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
    if (key == "seq_errors") {
      read_records(r, s.seq_errors);
      return true;
    }
    if (key == "prompt_logprobs") {
      read_packed(r, s.prompt_logprobs, "prompt_logprobs");
      return true;
    }
    return false;
  });
}

size_t payload_size_hint(const StepResult& s) {
  size_t bytes = 64 + s.error.size();
  for (const SeqError& e : s.seq_errors) bytes += 32 + e.message.size();
  for (const SeqOutput& o : s.outputs) bytes += 24 + 24 * o.top_logprobs.size();
  return bytes;
}

}  // namespace zinfer::protocol
