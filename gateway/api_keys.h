// Who may use the gateway: the API keys of `[server] api_keys` (or `--api-key`, or the environment
// variable ZINFER_API_KEY, as vLLM's --api-key / VLLM_API_KEY). With no key configured everyone
// may; with keys, an HTTP request needs `Authorization: Bearer <key>` on every path but the
// operator's open ones (/health, /ping, /metrics, as in vLLM), and a ZeroMQ GenerateRequest needs
// one of the keys in its `api_key` field (docs/protocol.md). Keys are compared in time that does
// not depend on how much of a key a guess got right.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gateway/api_error.h"
#include "gateway/options.h"

namespace zinfer::gateway {

// The environment variable that gives the key when the configuration gives none.
inline constexpr const char* kApiKeyEnvironmentVariable = "ZINFER_API_KEY";

class ApiKeys {
 public:
  explicit ApiKeys(std::vector<std::string> keys = {}) : keys_(std::move(keys)) {}

  bool required() const { return !keys_.empty(); }
  // Whether `key` is one of the keys (true for anything when none is required). Every key is
  // compared, each over its whole length, whatever matched before.
  bool accepts(std::string_view key) const;
  // Whether an HTTP request for `path` with this Authorization header value ("" when absent) may
  // go on; the scheme "Bearer" is matched case-insensitively (RFC 7235).
  bool admits_http(std::string_view path, std::string_view authorization) const;

  // Paths anyone may read, key or not: liveness and Prometheus scraping.
  static bool is_open_path(std::string_view path);

 private:
  std::vector<std::string> keys_;
};

// The 401 a request without a valid key gets, in OpenAI's error shape.
ApiError unauthorized_error();

// True when `a` equals `b`; the time taken depends on the lengths only.
bool equal_in_constant_time(std::string_view a, std::string_view b);

// "" when `key` can be a key, else why not (an empty key, or characters an Authorization header
// cannot carry: whitespace and control characters).
std::string api_key_problem(std::string_view key);

// The configured keys, or the environment's one when none is configured.
std::vector<std::string> api_keys_with_environment(std::vector<std::string> configured);

// What an operator must hear at start-up: one line per endpoint that listens beyond this host's
// loopback while no key is required (HTTP on a non-loopback address, ZeroMQ on a tcp:// one).
std::vector<std::string> exposure_warnings(const GatewayOptions& options);

// Whether an HTTP host (an IP address) or a ZeroMQ endpoint is reachable from this host only:
// loopback addresses, "localhost", ipc:// and inproc://. A wildcard ("*", 0.0.0.0, ::), another
// address or an interface name is not.
bool is_loopback_host(std::string_view host);
bool is_local_zmq_endpoint(std::string_view endpoint);

}  // namespace zinfer::gateway
