#include "protocol/envelope.h"

namespace zinfer::protocol {

const char* to_string(DecodeErrorKind kind) {
  switch (kind) {
    case DecodeErrorKind::kMalformed: return "malformed";
    case DecodeErrorKind::kUnknownType: return "unknown_type";
    case DecodeErrorKind::kNewerVersion: return "newer_version";
    case DecodeErrorKind::kWrongPayload: return "wrong_payload";
    case DecodeErrorKind::kUnexpectedType: return "unexpected_type";
  }
  return "?";
}

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

ProtocolError::ProtocolError(DecodeErrorKind kind, const std::string& detail)
    : std::runtime_error(std::string("protocol error (") + to_string(kind) + "): " + detail), kind_(kind) {}

Frame open(std::string_view bytes) {
  Frame f;
  try {
    // A limit on containers keeps a hostile frame from asking for huge allocations.
    msgpack::unpack_limit limit(1 << 24, 1 << 24, 1 << 28, 1 << 28, 1 << 24, 64);
    f.handle_ = msgpack::unpack(bytes.data(), bytes.size(), nullptr, nullptr, limit);
  } catch (const std::exception& e) {
    throw ProtocolError(DecodeErrorKind::kMalformed, std::string("not msgpack: ") + e.what());
  }
  const msgpack::object& o = f.handle_.get();
  if (o.type != msgpack::type::ARRAY || o.via.array.size != 4) {
    throw ProtocolError(DecodeErrorKind::kMalformed, "envelope is not a 4-element array");
  }
  const msgpack::object* e = o.via.array.ptr;
  if (e[0].type != msgpack::type::POSITIVE_INTEGER || e[1].type != msgpack::type::POSITIVE_INTEGER ||
      e[2].type != msgpack::type::POSITIVE_INTEGER) {
    throw ProtocolError(DecodeErrorKind::kMalformed, "version and type must be unsigned integers");
  }
  if (e[0].via.u64 > 0xffff || e[1].via.u64 > 0xffff || e[2].via.u64 > 0xffff) {
    throw ProtocolError(DecodeErrorKind::kMalformed, "version or type out of range");
  }
  f.major_ = static_cast<uint16_t>(e[0].via.u64);
  f.minor_ = static_cast<uint16_t>(e[1].via.u64);
  f.type_ = static_cast<MessageType>(e[2].via.u64);
  if (f.major_ > kVersionMajor) {
    throw ProtocolError(DecodeErrorKind::kNewerVersion,
                        "frame has protocol version " + std::to_string(f.major_) + "." +
                            std::to_string(f.minor_) + ", this peer speaks " +
                            std::to_string(kVersionMajor) + "." + std::to_string(kVersionMinor));
  }
  if (!is_known(f.type_)) {
    throw ProtocolError(DecodeErrorKind::kUnknownType,
                        "unknown message type " + std::to_string(e[2].via.u64));
  }
  if (e[3].type != msgpack::type::MAP && e[3].type != msgpack::type::ARRAY) {
    throw ProtocolError(DecodeErrorKind::kMalformed, "payload is neither a map nor an array");
  }
  return f;
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
