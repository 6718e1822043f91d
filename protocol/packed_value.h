// The rare, nested fields of the step-path messages (prompt logprobs, prompt scoring) written
// and read by msgpack-c inside the hand-written codecs (protocol/step_codec.h): they travel only
// for the few requests that ask for them, so the generic path costs the common step nothing, and
// the bytes stay those of the MSGPACK_DEFINE* definitions.
#pragma once

#include <cstring>
#include <exception>
#include <string>

#include <msgpack.hpp>

#include "protocol/protocol_error.h"
#include "protocol/wire_reader.h"
#include "protocol/wire_writer.h"

namespace zinfer::protocol {

template <class T>
void write_packed(WireWriter& w, const T& value) {
  msgpack::sbuffer buf;
  msgpack::pack(buf, value);
  char* p = w.begin_record(buf.size());
  std::memcpy(p, buf.data(), buf.size());
  w.end_record(p + buf.size());
}

// Reads one value of type T; a value that does not decode as T is a ProtocolError naming `what`.
template <class T>
void read_packed(WireReader& r, T& out, const char* what) {
  const uint8_t* begin = r.cursor();
  r.skip();
  try {
    msgpack::object_handle h =
        msgpack::unpack(reinterpret_cast<const char*>(begin), static_cast<size_t>(r.cursor() - begin));
    out = h.get().as<T>();
  } catch (const std::exception& e) {
    throw ProtocolError(DecodeErrorKind::kWrongPayload, std::string(what) + " does not decode: " + e.what());
  }
}

}  // namespace zinfer::protocol
