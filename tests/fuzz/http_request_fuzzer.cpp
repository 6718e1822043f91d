// libFuzzer target for the HTTP request parser as the server runs it (gateway/http_session.cpp):
// Beast's request parser with the session's header and body limits, fed in pieces as a socket
// delivers them, then what the session reads of a parsed request (target, method, keep-alive, the
// Authorization header checked against API keys). Any byte string must parse or fail with an
// error code: never crash, hang or leak.
// Invariant 25 (docs/architecture.md): no input aborts a process.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "gateway/api_keys.h"

namespace http = boost::beast::http;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const zinfer::gateway::ApiKeys keys(std::vector<std::string>{"sk-one", "sk-two"});
  if (size == 0) return 0;
  // The first byte chooses the piece size: a socket may hand the parser any split of the bytes.
  const size_t piece = 1 + data[0] % 64;
  std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  http::request_parser<http::string_body> parser;
  parser.header_limit(16 * 1024);  // the session's limits
  parser.body_limit(64 * 1024);
  boost::beast::error_code ec;
  std::string pending;
  while (!input.empty() && !parser.is_done()) {
    const size_t n = std::min(piece, input.size());
    pending.append(input.substr(0, n));
    input.remove_prefix(n);
    const size_t used = parser.put(boost::asio::buffer(pending), ec);
    if (ec == http::error::need_more) {
      ec = {};
      pending.erase(0, used);
      continue;
    }
    if (ec) return 0;
    pending.erase(0, used);
  }
  if (!parser.is_done()) return 0;
  auto req = parser.release();
  std::string target(req.target());
  if (auto q = target.find('?'); q != std::string::npos) target.resize(q);
  (void)req.keep_alive();
  (void)req.method_string();
  const auto authorization = req[http::field::authorization];
  (void)keys.admits_http(target, std::string_view(authorization.data(), authorization.size()));
  return 0;
}
