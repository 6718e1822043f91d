// TokenDelta and TokenDeltaBatch: the scheduler -> detokenizer messages of every step.
#include "protocol/packed_value.h"
#include "protocol/step_codec.h"

namespace zinfer::protocol {

void write_payload(WireWriter& w, const TokenDelta& d) {
  using W = WireWriter;
  // One capacity check for the fields before top_logprobs' records and one for those after
  // finish_reason (a batch holds one delta per sampling sequence).
  char* p = w.begin_record(1 + 2 * 9 + 3 * 5 + 9 * (d.token_ids.size() + d.logprobs.size()));
  p = W::put_array_header(p, 9);
  p = W::put_integer(p, d.request_id);
  p = W::put_integer(p, d.index);
  p = W::put_int_array(p, d.token_ids);
  p = W::put_array_header(p, d.logprobs.size());
  for (const float x : d.logprobs) p = W::put_float32(p, x);
  p = W::put_array_header(p, d.top_logprobs.size());
  w.end_record(p);
  for (const auto& per_token : d.top_logprobs) write_records(w, per_token);
  w.str(d.finish_reason);
  p = w.begin_record(3 * 9);
  p = W::put_integer(p, d.prompt_tokens);
  p = W::put_integer(p, d.completion_tokens);
  p = W::put_integer(p, d.cached_tokens);
  w.end_record(p);
}

void read_payload(WireReader& r, TokenDelta& d) {
  read_array_record(r, [&](ArrayFields& f) {
    if (!f.next("request_id")) return;
    d.request_id = r.read_int<uint64_t>();
    if (!f.next("index")) return;
    d.index = r.read_int<int32_t>();
    if (!f.next("token_ids")) return;
    r.read_int_array(d.token_ids);
    if (!f.next("logprobs")) return;
    r.read_float_array(d.logprobs);
    if (!f.next("top_logprobs")) return;
    {
      const uint32_t tokens = r.read_array_header();
      d.top_logprobs.clear();
      d.top_logprobs.resize(tokens);
      for (uint32_t t = 0; t < tokens; ++t) {
        try {
          read_records(r, d.top_logprobs[t]);
        } catch (const ProtocolError& e) {
          throw e.within("[" + std::to_string(t) + "]");
        }
      }
    }
    if (!f.next("finish_reason")) return;
    d.finish_reason = r.read_str();
    if (!f.next("prompt_tokens")) return;
    d.prompt_tokens = r.read_int<int32_t>();
    if (!f.next("completion_tokens")) return;
    d.completion_tokens = r.read_int<int32_t>();
    if (!f.next("cached_tokens")) return;
    d.cached_tokens = r.read_int<int32_t>();
  });
}

void write_payload(WireWriter& w, const TokenDeltaBatch& b) {
  w.map_header(2);
  w.str("deltas");
  write_records(w, b.deltas);
  w.str("prompt_logprobs");
  write_packed(w, b.prompt_logprobs);
}

void read_payload(WireReader& r, TokenDeltaBatch& b) {
  read_map_record(r, [&](std::string_view key) {
    if (key == "deltas") {
      read_records(r, b.deltas);
      return true;
    }
    if (key == "prompt_logprobs") {
      read_packed(r, b.prompt_logprobs, "prompt_logprobs");
      return true;
    }
    return false;
  });
}

size_t payload_size_hint(const TokenDelta& d) {
  return 48 + d.finish_reason.size() + 5 * d.token_ids.size() + 5 * d.logprobs.size() +
         24 * d.top_logprobs.size() * (d.top_logprobs.empty() ? 0 : d.top_logprobs.front().size());
}

size_t payload_size_hint(const TokenDeltaBatch& b) {
  size_t bytes = 16;
  for (const TokenDelta& d : b.deltas) bytes += payload_size_hint(d);
  return bytes;
}

}  // namespace zinfer::protocol
