#include "tools/bench/lib/server_api.h"

#include <stdexcept>
#include <thread>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

namespace zinfer::bench {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

HttpReply http_call(const HttpUrl& url, const std::string& target, const std::string& json_body, const Headers& headers) {
  try {
    asio::io_context io;
    tcp::resolver resolver(io);
    tcp::socket sock(io);
    asio::connect(sock, resolver.resolve(url.host, url.port));
    http::request<http::string_body> req{json_body.empty() ? http::verb::get : http::verb::post, url.path + target, 11};
    req.set(http::field::host, url.host + ":" + url.port);
    req.set(http::field::user_agent, "zinfer-bench");
    if (!json_body.empty()) {
      req.set(http::field::content_type, "application/json");
      req.body() = json_body;
    }
    for (const auto& [name, value] : headers) req.set(name, value);
    req.prepare_payload();
    http::write(sock, req);
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    http::read(sock, buffer, res);
    beast::error_code ignored;
    sock.shutdown(tcp::socket::shutdown_both, ignored);
    return {res.result_int(), res.body()};
  } catch (const std::exception& e) {
    throw std::runtime_error("HTTP " + url.host + ":" + url.port + url.path + target + ": " + e.what());
  }
}

bool wait_until_ready(const HttpUrl& url, std::chrono::seconds timeout, const Headers& headers) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    for (const char* path : {"/health", "/v1/models"}) {
      try {
        if (http_call(url, path, "", headers).status == 200) return true;
      } catch (const std::exception&) {
        // not up yet
      }
    }
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

RemoteTokenCodec::RemoteTokenCodec(HttpUrl url, std::string model, Headers headers)
    : url_(std::move(url)), model_(std::move(model)), headers_(std::move(headers)) {
  encode("probe");  // throws with the server's answer when it has no /tokenize
  if (!decodes(0)) throw std::runtime_error("the server's /detokenize refuses token id 0");
  int32_t lo = 0, hi = 1;  // decodes(lo), and the first refused id is above it
  while (decodes(hi)) {
    lo = hi;
    if (hi > (1 << 26)) throw std::runtime_error("the server's /detokenize accepts every token id");
    hi *= 2;
  }
  while (hi - lo > 1) {
    const int32_t mid = lo + (hi - lo) / 2;
    (decodes(mid) ? lo : hi) = mid;
  }
  vocab_size_ = hi;
}

std::vector<int32_t> RemoteTokenCodec::encode(std::string_view text) const {
  nlohmann::json body = {{"prompt", std::string(text)}, {"add_special_tokens", false}};
  if (!model_.empty()) body["model"] = model_;
  const HttpReply r = http_call(url_, "/tokenize", body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                                headers_);
  if (r.status != 200) {
    throw std::runtime_error("the server's /tokenize answered " + std::to_string(r.status) + ": " + r.body.substr(0, 200));
  }
  return nlohmann::json::parse(r.body).at("tokens").get<std::vector<int32_t>>();
}

std::string RemoteTokenCodec::decode(std::span<const int32_t> ids) const {
  nlohmann::json body = {{"tokens", std::vector<int32_t>(ids.begin(), ids.end())}};
  if (!model_.empty()) body["model"] = model_;
  const HttpReply r = http_call(url_, "/detokenize", body.dump(), headers_);
  if (r.status != 200) {
    throw std::runtime_error("the server's /detokenize answered " + std::to_string(r.status) + ": " + r.body.substr(0, 200));
  }
  return nlohmann::json::parse(r.body).at("prompt").get<std::string>();
}

bool RemoteTokenCodec::decodes(int32_t id) const {
  nlohmann::json body = {{"tokens", {id}}};
  if (!model_.empty()) body["model"] = model_;
  return http_call(url_, "/detokenize", body.dump(), headers_).status == 200;
}

}  // namespace zinfer::bench
