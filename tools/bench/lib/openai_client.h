// The OpenAI backend: streaming POSTs to /v1/completions or /v1/chat/completions over plain HTTP
// (Boost.Beast), read as server-sent events. Each request is a C++20 coroutine on one io_context
// run by a few threads, so hundreds of concurrent streams need no thread each. One connection per
// request, as a fresh client would open.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tools/bench/lib/backend.h"
#include "tools/bench/lib/sse.h"

namespace zinfer::bench {

struct HttpUrl {
  std::string host;
  std::string port;  // "80" when the URL names none
  std::string path;  // "" or a prefix like "/v1" that the endpoint is appended to
};
// Parses http://HOST[:PORT][/PATH]; throws std::invalid_argument for https or a malformed URL.
HttpUrl parse_http_url(const std::string& url);

class OpenAIBackend : public Backend {
 public:
  // Resolves the host at once (throws std::runtime_error naming it when it does not resolve).
  // `body` is added to every request body (sse.h); `headers` (--header) are sent with every
  // request, after the benchmark's own, so a header named there replaces the default one.
  OpenAIBackend(const std::string& base_url, const std::string& endpoint, ApiKind kind, int io_threads,
                std::string api_key = "", RequestBodyOptions body = {},
                std::vector<std::pair<std::string, std::string>> headers = {});
  ~OpenAIBackend() override;
  void submit(BackendRequest request, Completion done) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace zinfer::bench
