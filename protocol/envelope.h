// The envelope around every zinfer message: one msgpack array
//   [major_version, minor_version, message_type, payload]
// where payload is the message struct as a msgpack map, or a fixed array for the step-path
// records (protocol/messages.h says which). A receiver opens a
// frame with open(); a frame that does not decode, names an unknown type or comes from a newer
// major version throws ProtocolError, which the receiver answers (ErrorReply) or logs. Nothing
// here aborts the process.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include <msgpack.hpp>

#include "protocol/messages.h"

namespace zinfer::protocol {

inline constexpr uint16_t kVersionMajor = 1;
inline constexpr uint16_t kVersionMinor = 0;

enum class DecodeErrorKind { kMalformed, kUnknownType, kNewerVersion, kWrongPayload, kUnexpectedType };

const char* to_string(DecodeErrorKind kind);
const char* to_string(MessageType type);
bool is_known(MessageType type);

class ProtocolError : public std::runtime_error {
 public:
  ProtocolError(DecodeErrorKind kind, const std::string& detail);
  DecodeErrorKind kind() const { return kind_; }

 private:
  DecodeErrorKind kind_;
};

// Packs a message with its envelope.
template <class T>
std::string encode(const T& msg) {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(buf);
  pk.pack_array(4);
  pk.pack(kVersionMajor);
  pk.pack(kVersionMinor);
  pk.pack(static_cast<uint16_t>(T::kType));
  pk.pack(msg);
  return std::string(buf.data(), buf.size());
}

// A decoded envelope. The payload stays a msgpack object until the receiver asks for its struct.
class Frame {
 public:
  MessageType type() const { return type_; }
  uint16_t major() const { return major_; }
  uint16_t minor() const { return minor_; }

  // The payload as T; throws ProtocolError (kUnexpectedType or kWrongPayload) when it is not one.
  template <class T>
  T as() const {
    if (type_ != T::kType) {
      throw ProtocolError(DecodeErrorKind::kUnexpectedType,
                          std::string("expected ") + to_string(T::kType) + ", got " + to_string(type_));
    }
    T out;
    try {
      payload().convert(out);
    } catch (const std::exception& e) {
      throw ProtocolError(DecodeErrorKind::kWrongPayload,
                          std::string("payload of ") + to_string(type_) + " does not decode: " + e.what());
    }
    return out;
  }

  const msgpack::object& payload() const { return handle_.get().via.array.ptr[3]; }

 private:
  friend Frame open(std::string_view bytes);
  msgpack::object_handle handle_;
  MessageType type_{};
  uint16_t major_ = 0;
  uint16_t minor_ = 0;
};

// Decodes the envelope of one frame; throws ProtocolError.
Frame open(std::string_view bytes);

// Convenience: open and convert in one call.
template <class T>
T decode(std::string_view bytes) {
  return open(bytes).as<T>();
}

// An ErrorReply describing a ProtocolError (for receivers that answer bad frames).
ErrorReply error_reply_for(const ProtocolError& e, uint64_t request_id = 0);

}  // namespace zinfer::protocol
