// The envelope around every zinfer message: one msgpack array
//   [major_version, minor_version, message_type, payload]
// where payload is the message struct as a msgpack map, or a fixed array for the step-path
// records (protocol/messages.h says which). A receiver opens a frame with open(); a frame that
// is not one whole msgpack value, names an unknown type or comes from a newer major version
// throws ProtocolError, which the receiver answers (ErrorReply) or logs. Nothing here aborts the
// process.
//
// Two codecs sit behind encode() and Frame::as<T>(): the step-path messages (StepPlan,
// StepResult, TokenDelta, TokenDeltaBatch) go through the hand-written one of
// protocol/step_codec.h, every other message through msgpack-c. Both write and read the same
// bytes; the choice is by type, at compile time.
#pragma once

#include <concepts>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include <msgpack.hpp>

#include "protocol/messages.h"
#include "protocol/protocol_error.h"
#include "protocol/step_codec.h"

namespace zinfer::protocol {

inline constexpr uint16_t kVersionMajor = 1;
// 1.1: TokenDeltaBatch (type 16). 1.2: SeqWork.block_table_start. 1.3: GenerateRequest and
// TokenizedRequest.tenant and predicted_output_tokens. 1.4: SamplingParams' logits processing
// fields (penalties, min_p, logit_bias, allowed_token_ids, bad_words, truncate_prompt_tokens) and
// SeqWork.rules; SamplingParams.include_stop_str_in_output, GenerateRequest.add_special_tokens,
// RequestStart.stop_token_ids and include_stop_str_in_output, TextDelta.stop_string and
// stop_token, TokenizeRequest/TokenizeReply. 1.5: GenerateRequest.api_key. 1.6:
// SamplingParams.structured and SamplingRules.structured (StructuredOutput),
// ChatMessage.tool_calls / tool_call_id / name, GenerateRequest.tools.
inline constexpr uint16_t kVersionMinor = 6;

const char* to_string(MessageType type);
bool is_known(MessageType type);

namespace detail {

// The envelope fields of a frame and a view of its payload bytes.
struct Envelope {
  MessageType type{};
  uint16_t major = 0;
  uint16_t minor = 0;
  std::string_view payload;
};

// Reads the envelope and checks that `bytes` is exactly one msgpack value (no truncation, no
// trailing bytes, nesting and sizes within limits); throws ProtocolError. For the types of
// payload_checked_by_decoder() the payload's check is left to its decoder, which reads every
// byte of it anyway (one pass instead of two over the largest frames of every step).
Envelope open_envelope(std::string_view bytes);
bool payload_checked_by_decoder(MessageType type);

// msgpack-c's object tree of a payload that open_envelope() accepted (for the generic codec).
msgpack::object_handle unpack_payload(std::string_view payload);

[[noreturn]] void throw_unexpected_type(MessageType expected, MessageType got);
[[noreturn]] void throw_wrong_payload(MessageType type, const std::string& detail);
[[noreturn]] void throw_malformed_payload(MessageType type, const std::string& detail);

// A hand-written codec's payload into `out` through `read` (read_payload or
// read_payload_reusing), with the errors decode() gives.
template <class T, class Read>
void read_fast_payload(std::string_view payload, T& out, Read&& read) {
  WireReader r(payload);
  try {
    read(r, out);
  } catch (const ProtocolError& e) {
    // Truncation and bytes that are not msgpack stay kMalformed, as open() reports them for
    // the other types; a value of the wrong type is kWrongPayload.
    if (e.kind() == DecodeErrorKind::kMalformed) throw_malformed_payload(T::kType, e.located_detail());
    throw_wrong_payload(T::kType, e.located_detail());
  }
  if (!r.at_end()) {
    throw_malformed_payload(T::kType, std::to_string(r.remaining()) + " trailing byte(s) after the frame");
  }
}

inline void read_plan_reusing(WireReader& r, StepPlan& plan) { read_payload_reusing(r, plan); }

template <class T>
T decode_payload(std::string_view payload) {
  T out;
  if constexpr (FastCodec<T>) {
    read_fast_payload(payload, out, [](WireReader& r, T& o) { read_payload(r, o); });
  } else {
    msgpack::object_handle handle = unpack_payload(payload);
    try {
      handle.get().convert(out);
    } catch (const std::exception& e) {
      throw_wrong_payload(T::kType, e.what());
    }
  }
  return out;
}

}  // namespace detail

// Packs a message with its envelope.
template <class T>
std::string encode(const T& msg) {
  if constexpr (FastCodec<T>) {
    WireWriter w(payload_size_hint(msg) + 16);
    w.array_header(4);
    w.integer(kVersionMajor);
    w.integer(kVersionMinor);
    w.integer(static_cast<uint16_t>(T::kType));
    write_payload(w, msg);
    return w.take();
  } else {
    msgpack::sbuffer buf;
    msgpack::packer<msgpack::sbuffer> pk(buf);
    pk.pack_array(4);
    pk.pack(kVersionMajor);
    pk.pack(kVersionMinor);
    pk.pack(static_cast<uint16_t>(T::kType));
    pk.pack(msg);
    return std::string(buf.data(), buf.size());
  }
}

// An opened frame. It owns its bytes (safe to keep after the buffer it was opened from is gone);
// the payload is decoded only when the receiver asks for its struct. A step-path payload
// (StepPlan, StepResult, TokenDelta, TokenDeltaBatch) is checked for truncation and trailing
// bytes by as<T>(), which then throws kMalformed as open() does for the other types.
class Frame {
 public:
  MessageType type() const { return type_; }
  uint16_t major() const { return major_; }
  uint16_t minor() const { return minor_; }
  std::string_view payload_bytes() const { return std::string_view(bytes_).substr(payload_offset_); }

  // The payload as T; throws ProtocolError (kUnexpectedType or kWrongPayload) when it is not one.
  template <class T>
  T as() const {
    if (type_ != T::kType) detail::throw_unexpected_type(T::kType, type_);
    return detail::decode_payload<T>(payload_bytes());
  }

  // as<StepPlan>() into `plan`, reusing the memory of the plan it held before (the executor
  // decodes one per step): the same plan and the same errors.
  void as_into(StepPlan& plan) const {
    if (type_ != StepPlan::kType) detail::throw_unexpected_type(StepPlan::kType, type_);
    detail::read_fast_payload(payload_bytes(), plan, detail::read_plan_reusing);
  }

  // The payload as msgpack-c's object tree, for code that walks it generically (e.g. the
  // prototype decoder of tools/bench/bench_scheduler.cpp). Unpacked on the first call and kept
  // with the frame; not for the hot path, and not to be called from two threads on one Frame.
  const msgpack::object& payload() const;

 private:
  friend Frame open(std::string_view bytes);
  friend Frame open_owned(std::string&& bytes);

  std::string bytes_;          // the whole frame, or only its payload (payload_offset_ 0)
  size_t payload_offset_ = 0;  // an offset, not a view: a moved std::string may move its bytes
  MessageType type_{};
  uint16_t major_ = 0;
  uint16_t minor_ = 0;
  // payload()'s tree; shared so that a Frame stays copyable (object_handle is move-only).
  mutable std::shared_ptr<const msgpack::object_handle> payload_tree_;
};

// Opens one frame: checks it, reads its envelope, keeps a copy of its bytes. Throws ProtocolError.
Frame open(std::string_view bytes);

// The same without the copy: the frame takes over `bytes`. Receivers that hold the frame's
// buffer as a std::string (runtime::recv_frame) pass it here with std::move.
Frame open_owned(std::string&& bytes);

// Convenience: open and convert in one call (no copy of the bytes).
template <class T>
T decode(std::string_view bytes) {
  const detail::Envelope env = detail::open_envelope(bytes);
  if (env.type != T::kType) detail::throw_unexpected_type(T::kType, env.type);
  return detail::decode_payload<T>(env.payload);
}

// decode<StepPlan>() into `plan`, reusing its memory as Frame::as_into does.
inline void decode_into(std::string_view bytes, StepPlan& plan) {
  const detail::Envelope env = detail::open_envelope(bytes);
  if (env.type != StepPlan::kType) detail::throw_unexpected_type(StepPlan::kType, env.type);
  detail::read_fast_payload(env.payload, plan, detail::read_plan_reusing);
}

// An ErrorReply describing a ProtocolError (for receivers that answer bad frames).
ErrorReply error_reply_for(const ProtocolError& e, uint64_t request_id = 0);

}  // namespace zinfer::protocol
