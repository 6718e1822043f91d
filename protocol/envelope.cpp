#include "protocol/envelope.h"

namespace zinfer::protocol {

const char* to_string(MessageType type) {
  switch (type) {
    case MessageType::kPing: return "Ping";
    case MessageType::kPong: return "Pong";
    case MessageType::kErrorReply: return "ErrorReply";
    case MessageType::kGenerateRequest: return "GenerateRequest";
    case MessageType::kTokenizedRequest: return "TokenizedRequest";
    case MessageType::kAbort: return "Abort";
    case MessageType::kRequestStart: return "RequestStart";
    case MessageType::kTokenDelta: return "TokenDelta";
    case MessageType::kTextDelta: return "TextDelta";
    case MessageType::kTokenDeltaBatch: return "TokenDeltaBatch";
    case MessageType::kTokenizeRequest: return "TokenizeRequest";
    case MessageType::kTokenizeReply: return "TokenizeReply";
    case MessageType::kStepPlan: return "StepPlan";
    case MessageType::kStepResult: return "StepResult";
    case MessageType::kExecutorInfoRequest: return "ExecutorInfoRequest";
    case MessageType::kExecutorInfo: return "ExecutorInfo";
    case MessageType::kStatsRequest: return "StatsRequest";
    case MessageType::kStats: return "Stats";
    case MessageType::kBenchPayload: return "BenchPayload";
  }
  return "unknown";
}

bool is_known(MessageType type) { return std::string_view(to_string(type)) != "unknown"; }

namespace detail {

namespace {

// An envelope field: an unsigned integer of at most 16 bits.
uint16_t read_envelope_uint(WireReader& r) {
  uint64_t v = 0;
  try {
    v = r.read_int<uint64_t>();
  } catch (const ProtocolError& e) {
    if (e.kind() == DecodeErrorKind::kMalformed) {
      throw ProtocolError(DecodeErrorKind::kMalformed, "not msgpack: the envelope is cut short: " + e.detail());
    }
    // Negative, or not an integer at all.
    throw ProtocolError(DecodeErrorKind::kMalformed, "version and type must be unsigned integers");
  }
  if (v > 0xffff) throw ProtocolError(DecodeErrorKind::kMalformed, "version or type out of range");
  return static_cast<uint16_t>(v);
}

}  // namespace

bool payload_checked_by_decoder(MessageType type) {
  switch (type) {
    case MessageType::kStepPlan:
    case MessageType::kStepResult:
    case MessageType::kTokenDelta:
    case MessageType::kTokenDeltaBatch: return true;
    default: return false;
  }
}
static_assert(FastCodec<StepPlan> && FastCodec<StepResult> && FastCodec<TokenDelta> &&
              FastCodec<TokenDeltaBatch> && !FastCodec<Abort>,
              "payload_checked_by_decoder() lists exactly the types with a hand-written codec");

Envelope open_envelope(std::string_view bytes) {
  WireReader r(bytes);
  uint32_t elements = 0;
  try {
    elements = r.read_array_header();
  } catch (const ProtocolError& e) {
    if (bytes.empty() || e.kind() == DecodeErrorKind::kMalformed) {
      throw ProtocolError(DecodeErrorKind::kMalformed, "not msgpack: " + e.detail());
    }
    throw ProtocolError(DecodeErrorKind::kMalformed, "envelope is not a 4-element array");
  }
  if (elements != 4) throw ProtocolError(DecodeErrorKind::kMalformed, "envelope is not a 4-element array");
  Envelope env;
  env.major = read_envelope_uint(r);
  env.minor = read_envelope_uint(r);
  const uint16_t type = read_envelope_uint(r);
  env.type = static_cast<MessageType>(type);
  if (r.at_end()) throw ProtocolError(DecodeErrorKind::kMalformed, "not msgpack: the payload is missing");
  const size_t payload_offset = r.offset();
  const uint8_t lead = static_cast<uint8_t>(bytes[payload_offset]);
  const bool is_map = (lead & 0xf0) == 0x80 || lead == 0xde || lead == 0xdf;
  const bool is_array = (lead & 0xf0) == 0x90 || lead == 0xdc || lead == 0xdd;
  // The payload, structurally: one value, every length inside the bytes, nesting and sizes within
  // limits, nothing after it (what msgpack-c's unpack checked, without allocating). The step-path
  // types skip this pass: their decoder reads every byte of the payload with the same checks and
  // reports the same kMalformed (Frame::as), and a second pass over the largest frames of every
  // step would cost as much as decoding them.
  if (!payload_checked_by_decoder(env.type)) {
    try {
      r.skip();
    } catch (const ProtocolError& e) {
      throw ProtocolError(DecodeErrorKind::kMalformed, "not msgpack: " + e.detail());
    }
    if (!r.at_end()) {
      throw ProtocolError(DecodeErrorKind::kMalformed,
                          "not msgpack: " + std::to_string(r.remaining()) + " trailing byte(s) after the frame");
    }
  }
  if (env.major > kVersionMajor) {
    throw ProtocolError(DecodeErrorKind::kNewerVersion,
                        "frame has protocol version " + std::to_string(env.major) + "." +
                            std::to_string(env.minor) + ", this peer speaks " +
                            std::to_string(kVersionMajor) + "." + std::to_string(kVersionMinor));
  }
  if (!is_known(env.type)) {
    throw ProtocolError(DecodeErrorKind::kUnknownType, "unknown message type " + std::to_string(type));
  }
  if (!is_map && !is_array) {
    throw ProtocolError(DecodeErrorKind::kMalformed, "payload is neither a map nor an array");
  }
  env.payload = bytes.substr(payload_offset);
  return env;
}

msgpack::object_handle unpack_payload(std::string_view payload) {
  try {
    // A limit on containers keeps a hostile frame from asking for huge allocations.
    msgpack::unpack_limit limit(1 << 24, 1 << 24, 1 << 28, 1 << 28, 1 << 24, 64);
    return msgpack::unpack(payload.data(), payload.size(), nullptr, nullptr, limit);
  } catch (const std::exception& e) {
    throw ProtocolError(DecodeErrorKind::kMalformed, std::string("not msgpack: ") + e.what());
  }
}

void throw_unexpected_type(MessageType expected, MessageType got) {
  throw ProtocolError(DecodeErrorKind::kUnexpectedType,
                      std::string("expected ") + to_string(expected) + ", got " + to_string(got));
}

void throw_wrong_payload(MessageType type, const std::string& detail) {
  throw ProtocolError(DecodeErrorKind::kWrongPayload,
                      std::string("payload of ") + to_string(type) + " does not decode: " + detail);
}

void throw_malformed_payload(MessageType type, const std::string& detail) {
  throw ProtocolError(DecodeErrorKind::kMalformed,
                      std::string("payload of ") + to_string(type) + " is not msgpack: " + detail);
}

}  // namespace detail

Frame open(std::string_view bytes) {
  const detail::Envelope env = detail::open_envelope(bytes);
  Frame f;
  f.bytes_.assign(env.payload);  // only the payload is kept
  f.payload_offset_ = 0;
  f.type_ = env.type;
  f.major_ = env.major;
  f.minor_ = env.minor;
  return f;
}

Frame open_owned(std::string&& bytes) {
  const detail::Envelope env = detail::open_envelope(bytes);
  Frame f;
  f.payload_offset_ = static_cast<size_t>(env.payload.data() - bytes.data());
  f.type_ = env.type;
  f.major_ = env.major;
  f.minor_ = env.minor;
  f.bytes_ = std::move(bytes);
  return f;
}

const msgpack::object& Frame::payload() const {
  if (!payload_tree_) payload_tree_ = std::make_shared<const msgpack::object_handle>(detail::unpack_payload(payload_bytes()));
  return payload_tree_->get();
}

ErrorReply error_reply_for(const ProtocolError& e, uint64_t request_id) {
  ErrorReply r;
  r.request_id = request_id;
  r.code = 400;
  r.kind = std::string("bad_frame:") + to_string(e.kind());
  r.message = e.what();
  return r;
}

}  // namespace zinfer::protocol
