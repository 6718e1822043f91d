#include "protocol/protocol_error.h"

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

namespace {
std::string locate(const std::string& path, const std::string& detail) {
  return path.empty() ? detail : path + ": " + detail;
}
}  // namespace

ProtocolError::ProtocolError(DecodeErrorKind kind, const std::string& detail, std::string path)
    : std::runtime_error(std::string("protocol error (") + to_string(kind) + "): " + locate(path, detail)),
      kind_(kind),
      detail_(detail),
      path_(std::move(path)) {}

std::string ProtocolError::located_detail() const { return locate(path_, detail_); }

ProtocolError ProtocolError::within(std::string_view segment) const {
  std::string path(segment);
  if (!path_.empty()) {
    if (path_.front() != '[') path += '.';
    path += path_;
  }
  return ProtocolError(kind_, detail_, std::move(path));
}

}  // namespace zinfer::protocol
