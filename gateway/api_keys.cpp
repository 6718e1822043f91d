#include "gateway/api_keys.h"

#include <cstdlib>
#include <stdexcept>

#include <boost/asio/ip/address.hpp>

namespace zinfer::gateway {

bool equal_in_constant_time(std::string_view a, std::string_view b) {
  // Every byte of `b` is compared, whether or not an earlier one differed; volatile keeps the
  // compiler from turning the loop into one that stops at the first difference.
  volatile unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < b.size(); ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    diff = diff | static_cast<unsigned char>(x ^ static_cast<unsigned char>(b[i]));
  }
  return diff == 0;
}

bool ApiKeys::accepts(std::string_view key) const {
  if (keys_.empty()) return true;
  bool match = false;
  for (const auto& k : keys_) match = equal_in_constant_time(key, k) | match;
  return match;
}

bool ApiKeys::is_open_path(std::string_view path) {
  return path == "/health" || path == "/ping" || path == "/metrics";
}

bool ApiKeys::admits_http(std::string_view path, std::string_view authorization) const {
  if (keys_.empty() || is_open_path(path)) return true;
  constexpr std::string_view kScheme = "bearer";
  if (authorization.size() <= kScheme.size()) return false;
  for (size_t i = 0; i < kScheme.size(); ++i) {
    const char c = authorization[i];
    if ((c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c) != kScheme[i]) return false;
  }
  std::string_view rest = authorization.substr(kScheme.size());
  if (rest.front() != ' ') return false;
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  return accepts(rest);
}

ApiError unauthorized_error() {
  return ApiError(401, "a valid API key is required: send the header 'Authorization: Bearer <key>'");
}

std::string api_key_problem(std::string_view key) {
  if (key.empty()) return "must not be empty";
  for (unsigned char c : key) {
    if (c <= 0x20 || c == 0x7f) return "must not contain whitespace or control characters";
  }
  return "";
}

std::vector<std::string> api_keys_with_environment(std::vector<std::string> configured) {
  if (!configured.empty()) return configured;
  const char* env = std::getenv(kApiKeyEnvironmentVariable);
  if (env == nullptr || *env == '\0') return {};
  const std::string problem = api_key_problem(env);
  if (!problem.empty()) {
    throw std::runtime_error(std::string("the environment variable ") + kApiKeyEnvironmentVariable + " " + problem);
  }
  return {std::string(env)};
}

bool is_loopback_host(std::string_view host) {
  if (host == "localhost") return true;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  boost::system::error_code ec;
  const auto address = boost::asio::ip::make_address(std::string(host), ec);
  return !ec && address.is_loopback();
}

bool is_local_zmq_endpoint(std::string_view endpoint) {
  if (endpoint.rfind("ipc://", 0) == 0 || endpoint.rfind("inproc://", 0) == 0) return true;
  if (endpoint.rfind("tcp://", 0) != 0) return false;
  std::string_view rest = endpoint.substr(6);
  const auto colon = rest.rfind(':');
  if (colon == std::string_view::npos) return false;
  std::string_view host = rest.substr(0, colon);
  // tcp://source;address: only the address (after ';') is what is bound or reached.
  if (auto semi = host.find(';'); semi != std::string_view::npos) host = host.substr(semi + 1);
  return is_loopback_host(host);
}

std::vector<std::string> exposure_warnings(const GatewayOptions& options) {
  std::vector<std::string> out;
  if (options.enable_http && options.http.api_keys.empty() && !is_loopback_host(options.http.host)) {
    out.push_back("the HTTP server listens on " + options.http.host +
                  ", beyond this host's loopback, and requires no API key: anyone who reaches it may use it "
                  "(set [server] api_keys, --api-key or ZINFER_API_KEY)");
  }
  if (options.enable_zmq && options.zmq.api_keys.empty() && options.zmq.curve_client_keys_file.empty() &&
      !is_local_zmq_endpoint(options.zmq.bind)) {
    out.push_back("the ZeroMQ endpoint " + options.zmq.bind +
                  " listens beyond this host's loopback and requires no API key: anyone who reaches it may use it "
                  "(set [server] api_keys, --api-key or ZINFER_API_KEY)");
  }
  return out;
}

}  // namespace zinfer::gateway
