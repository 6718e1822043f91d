// StepPlan and its records (SeqWork, BlockCopy): the scheduler -> executor message of every step.
#include <cstring>
#include <optional>

#include "protocol/fast_cursor.h"
#include "protocol/packed_value.h"
#include "protocol/record_reuse.h"
#include "protocol/step_codec.h"

namespace zinfer::protocol {

namespace {

// SeqWork.rules: nil, or the SamplingRules map as msgpack-c writes it. It travels once per
// sequence (its first sampling work), so msgpack-c's generic path costs nothing per step.
std::string rules_bytes(const SamplingRules& rules) {
  msgpack::sbuffer buf;
  msgpack::pack(buf, rules);
  return std::string(buf.data(), buf.size());
}

void read_rules(WireReader& r, std::optional<SamplingRules>& out) {
  const uint8_t* begin = r.cursor();
  r.skip();
  if (*begin == 0xc0) {
    out.reset();
    return;
  }
  try {
    msgpack::object_handle h =
        msgpack::unpack(reinterpret_cast<const char*>(begin), static_cast<size_t>(r.cursor() - begin));
    out = h.get().as<SamplingRules>();
  } catch (const std::exception& e) {
    throw ProtocolError(DecodeErrorKind::kWrongPayload, std::string("rules do not decode: ") + e.what());
  }
}

}  // namespace

// One capacity check for the record (a plan holds one per running sequence): 15 values of at
// most 9 bytes, two array headers of at most 5, 9 bytes per array element, and the rules.
void write_payload(WireWriter& w, const SeqWork& s) {
  using W = WireWriter;
  const std::string rules = s.rules ? rules_bytes(*s.rules) : std::string();
  char* p = w.begin_record(15 * 9 + 2 * 5 + 9 * (s.token_ids.size() + s.block_table.size()) + rules.size());
  p = W::put_array_header(p, 15);
  p = W::put_integer(p, s.seq_id);
  p = W::put_int_array(p, s.token_ids);
  p = W::put_bool(p, s.use_last_sampled);
  p = W::put_integer(p, s.num_tokens);
  p = W::put_integer(p, s.start_pos);
  p = W::put_int_array(p, s.block_table);
  p = W::put_bool(p, s.sample);
  p = W::put_float32(p, s.temperature);
  p = W::put_float32(p, s.top_p);
  p = W::put_integer(p, s.top_k);
  p = W::put_integer(p, s.seed);
  p = W::put_integer(p, s.sample_index);
  p = W::put_integer(p, s.top_logprobs);
  p = W::put_integer(p, s.block_table_start);
  if (s.rules) {
    std::memcpy(p, rules.data(), rules.size());
    p += rules.size();
  } else {
    *p++ = static_cast<char>(0xc0);
  }
  w.end_record(p);
}

namespace {

// A record of this version's 15 fields in the usual forms, without rules (fast_cursor.h); false
// leaves the reader where it was (the record then goes through the checked path).
bool read_seq_work_fast(WireReader& r, SeqWork& s) {
  FastCursor c(r);
  const bool ok = c.fixarray(15) && c.integer(s.seq_id) && c.int_array(s.token_ids) &&
                  c.boolean(s.use_last_sampled) && c.integer(s.num_tokens) && c.integer(s.start_pos) &&
                  c.int_array(s.block_table) && c.boolean(s.sample) && c.float32(s.temperature) &&
                  c.float32(s.top_p) && c.integer(s.top_k) && c.integer(s.seed) && c.integer(s.sample_index) &&
                  c.integer(s.top_logprobs) && c.integer(s.block_table_start) && s.block_table_start >= 0 &&
                  c.nil();
  if (ok) {
    s.rules.reset();
    c.commit(r);
  }
  return ok;
}

}  // namespace

void read_payload(WireReader& r, SeqWork& s) {
  if (read_seq_work_fast(r, s)) return;
  read_array_record(r, [&](ArrayFields& f) {
    if (!f.next("seq_id")) return;
    s.seq_id = r.read_int<uint64_t>();
    if (!f.next("token_ids")) return;
    r.read_int_array(s.token_ids);
    if (!f.next("use_last_sampled")) return;
    s.use_last_sampled = r.read_bool();
    if (!f.next("num_tokens")) return;
    s.num_tokens = r.read_int<int32_t>();
    if (!f.next("start_pos")) return;
    s.start_pos = r.read_int<int32_t>();
    if (!f.next("block_table")) return;
    r.read_int_array(s.block_table);
    if (!f.next("sample")) return;
    s.sample = r.read_bool();
    if (!f.next("temperature")) return;
    s.temperature = r.read_float();
    if (!f.next("top_p")) return;
    s.top_p = r.read_float();
    if (!f.next("top_k")) return;
    s.top_k = r.read_int<int32_t>();
    if (!f.next("seed")) return;
    s.seed = r.read_int<int64_t>();
    if (!f.next("sample_index")) return;
    s.sample_index = r.read_int<int32_t>();
    if (!f.next("top_logprobs")) return;
    s.top_logprobs = r.read_int<int32_t>();
    if (!f.next("block_table_start")) return;
    s.block_table_start = r.read_int<int32_t>();
    if (s.block_table_start < 0) throw ProtocolError(DecodeErrorKind::kWrongPayload, "negative block_table_start");
    if (!f.next("rules")) return;
    read_rules(r, s.rules);
  });
}

void write_payload(WireWriter& w, const BlockCopy& c) {
  w.array_header(2);
  w.integer(c.src);
  w.integer(c.dst);
}

void read_payload(WireReader& r, BlockCopy& c) {
  read_array_record(r, [&](ArrayFields& f) {
    if (!f.next("src")) return;
    c.src = r.read_int<int32_t>();
    if (!f.next("dst")) return;
    c.dst = r.read_int<int32_t>();
  });
}

void write_payload(WireWriter& w, const StepPlan& p) {
  w.map_header(7);
  w.str("step_id");
  w.integer(p.step_id);
  w.str("seqs");
  write_records(w, p.seqs);
  w.str("swap_out");
  write_records(w, p.swap_out);
  w.str("swap_in");
  write_records(w, p.swap_in);
  w.str("copy");
  write_records(w, p.copy);
  w.str("finished");
  w.int_array(p.finished);
  w.str("prompt_scoring");
  write_packed(w, p.prompt_scoring);
}

namespace {

// The StepPlan map; `read_seqs` reads the value of "seqs".
template <class ReadSeqs>
void read_plan(WireReader& r, StepPlan& p, ReadSeqs&& read_seqs) {
  read_map_record(r, [&](std::string_view key) {
    if (key == "step_id") {
      p.step_id = r.read_int<uint64_t>();
      return true;
    }
    if (key == "seqs") {
      read_seqs();
      return true;
    }
    if (key == "swap_out") {
      read_records(r, p.swap_out);
      return true;
    }
    if (key == "swap_in") {
      read_records(r, p.swap_in);
      return true;
    }
    if (key == "copy") {
      read_records(r, p.copy);
      return true;
    }
    if (key == "finished") {
      r.read_int_array(p.finished);
      return true;
    }
    if (key == "prompt_scoring") {
      read_packed(r, p.prompt_scoring, "prompt_scoring");
      return true;
    }
    return false;
  });
}

}  // namespace

void read_payload(WireReader& r, StepPlan& p) {
  read_plan(r, p, [&] { read_records(r, p.seqs); });
}

void read_payload_reusing(WireReader& r, StepPlan& p) {
  // What a missing key leaves: the default.
  p.step_id = 0;
  p.swap_out.clear();
  p.swap_in.clear();
  p.copy.clear();
  p.finished.clear();
  p.prompt_scoring.clear();
  bool seqs_read = false;
  read_plan(r, p, [&] {
    const uint32_t n = r.read_array_header();
    p.seqs.resize(n);  // the first records keep their memory
    for (uint32_t i = 0; i < n; ++i) {
      reset_keeping_memory(p.seqs[i]);
      try {
        read_payload(r, p.seqs[i]);
      } catch (const ProtocolError& e) {
        throw e.within("[" + std::to_string(i) + "]");
      }
    }
    seqs_read = true;
  });
  if (!seqs_read) p.seqs.clear();
}

size_t payload_size_hint(const StepPlan& p) {
  // Upper-bound-ish: 5 bytes per int (most are 1-3), the fixed fields of a SeqWork ~40 bytes.
  size_t bytes = 64 + 6 * (p.swap_out.size() + p.swap_in.size() + p.copy.size()) + 9 * p.finished.size();
  for (const SeqWork& s : p.seqs) {
    bytes += 48 + 5 * (s.token_ids.size() + s.block_table.size());
    if (s.rules) bytes += 64 + 5 * (s.rules->prompt_ids.size() + s.rules->allowed_token_ids.size());
  }
  return bytes;
}

}  // namespace zinfer::protocol
