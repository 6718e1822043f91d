// An error the gateway answers a client with, in OpenAI's shape:
//   {"error": {"message": ..., "type": ..., "param": ..., "code": ...}}
// Thrown by request parsing and validation; the HTTP session turns it into a response with its
// status, the ZeroMQ endpoint into an ErrorReply with the same code.
#pragma once

#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "protocol/messages.h"

namespace zinfer::gateway {

class ApiError : public std::runtime_error {
 public:
  ApiError(int status, std::string message, std::string param = {}, std::string type = {});

  int status() const { return status_; }
  const std::string& param() const { return param_; }
  const std::string& type() const { return type_; }

  nlohmann::json to_json() const;

 private:
  int status_;
  std::string param_;
  std::string type_;
};

// OpenAI's error type for an HTTP status ("invalid_request_error", "not_found_error", ...).
std::string error_type_for_status(int status);

// The error JSON for an ErrorReply from the engine, and the HTTP status to send it with.
ApiError api_error_from_reply(const protocol::ErrorReply& reply);

// 400 "bad request" helper for a parameter with a bad value.
inline ApiError invalid_param(const std::string& param, const std::string& message) {
  return ApiError(400, message, param);
}

}  // namespace zinfer::gateway
