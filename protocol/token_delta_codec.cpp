// TokenDelta and TokenDeltaBatch: the scheduler -> detokenizer messages of every step.
#include "protocol/step_codec.h"

namespace zinfer::protocol {

void write_payload(WireWriter& w, const TokenDelta& d) {
  w.array_header(9);
  w.integer(d.request_id);
  w.integer(d.index);
  w.int_array(d.token_ids);
  w.float_array(d.logprobs);
  w.array_header(d.top_logprobs.size());
  for (const auto& per_token : d.top_logprobs) write_records(w, per_token);
  w.str(d.finish_reason);
  w.integer(d.prompt_tokens);
  w.integer(d.completion_tokens);
  w.integer(d.cached_tokens);
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
  w.map_header(1);
  w.str("deltas");
  write_records(w, b.deltas);
}

void read_payload(WireReader& r, TokenDeltaBatch& b) {
  read_map_record(r, [&](std::string_view key) {
    if (key == "deltas") {
      read_records(r, b.deltas);
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
