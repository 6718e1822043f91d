#include "gateway/api_error.h"

namespace zinfer::gateway {

std::string error_type_for_status(int status) {
  switch (status) {
    case 400: return "invalid_request_error";
    case 401: return "authentication_error";
    case 404: return "not_found_error";
    case 405: return "invalid_request_error";
    case 413: return "invalid_request_error";
    case 429: return "rate_limit_error";
    case 503: return "service_unavailable_error";
    default: return status >= 500 ? "server_error" : "invalid_request_error";
  }
}

ApiError::ApiError(int status, std::string message, std::string param, std::string type)
    : std::runtime_error(std::move(message)),
      status_(status),
      param_(std::move(param)),
      type_(type.empty() ? error_type_for_status(status) : std::move(type)) {}

nlohmann::json ApiError::to_json() const {
  nlohmann::json err = {{"message", what()}, {"type", type_}, {"code", status_}};
  err["param"] = param_.empty() ? nlohmann::json(nullptr) : nlohmann::json(param_);
  return {{"error", err}};
}

ApiError api_error_from_reply(const protocol::ErrorReply& reply) {
  // The engine's codes follow HTTP; anything outside the 4xx/5xx range is the engine's own fault.
  int status = reply.code;
  if (status < 400 || status > 599) status = 500;
  std::string message = reply.message.empty() ? reply.kind : reply.message;
  return ApiError(status, message);
}

}  // namespace zinfer::gateway
