// The one error type of the protocol layer: what went wrong with a frame (DecodeErrorKind), a
// message naming it and, for a payload that did not decode, where in the payload it went wrong
// (a field path such as "seqs[3].block_table"). A receiver answers it (ErrorReply) or logs it;
// nothing here aborts.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace zinfer::protocol {

enum class DecodeErrorKind { kMalformed, kUnknownType, kNewerVersion, kWrongPayload, kUnexpectedType };

const char* to_string(DecodeErrorKind kind);

class ProtocolError : public std::runtime_error {
 public:
  ProtocolError(DecodeErrorKind kind, const std::string& detail, std::string path = {});
  DecodeErrorKind kind() const { return kind_; }
  const std::string& detail() const { return detail_; }
  const std::string& path() const { return path_; }
  // "path: detail", or the detail alone when there is no path.
  std::string located_detail() const;

  // The same error one level further out: `segment` is a field name or an index ("[3]").
  ProtocolError within(std::string_view segment) const;

 private:
  DecodeErrorKind kind_;
  std::string detail_;
  std::string path_;
};

}  // namespace zinfer::protocol
