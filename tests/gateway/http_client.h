// A small blocking HTTP/1.1 client for the tests (Beast over a real TCP socket), and a parser of
// server-sent events.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

namespace zinfer::gateway::testing {

struct HttpReply {
  int status = 0;
  std::string content_type;
  std::string body;
  bool keep_alive = false;
  bool chunked = false;
  nlohmann::json json() const { return nlohmann::json::parse(body); }
};

// One keep-alive connection.
class HttpConnection {
 public:
  explicit HttpConnection(uint16_t port)
      : own_io_(std::make_unique<boost::asio::io_context>()), socket_(*own_io_) {
    socket_.connect({boost::asio::ip::make_address("127.0.0.1"), port});
  }
  // Many connections can share one io_context (each costs descriptors of its own).
  HttpConnection(boost::asio::io_context& io, uint16_t port) : socket_(io) {
    socket_.connect({boost::asio::ip::make_address("127.0.0.1"), port});
  }

  HttpReply request(boost::beast::http::verb method, const std::string& target, const std::string& body = {},
                    const std::string& content_type = "application/json") {
    send(method, target, body, content_type);
    return read_reply();
  }

  void send(boost::beast::http::verb method, const std::string& target, const std::string& body = {},
            const std::string& content_type = "application/json") {
    namespace http = boost::beast::http;
    http::request<http::string_body> req{method, target, 11};
    req.set(http::field::host, "127.0.0.1");
    if (!body.empty()) req.set(http::field::content_type, content_type);
    req.keep_alive(true);
    req.body() = body;
    req.prepare_payload();
    http::write(socket_, req);
  }

  HttpReply read_reply() {
    namespace http = boost::beast::http;
    http::response_parser<http::string_body> parser;
    parser.body_limit(64 << 20);
    http::read(socket_, buffer_, parser);
    auto& res = parser.get();
    HttpReply r;
    r.status = static_cast<int>(res.result_int());
    r.content_type = std::string(res[http::field::content_type]);
    r.keep_alive = res.keep_alive();
    r.chunked = res.chunked();
    r.body = res.body();
    return r;
  }

  // Reads raw bytes until `needle` was seen (for watching a stream arrive), returns all so far.
  std::string read_until(const std::string& needle) {
    std::string all;
    char buf[4096];
    while (all.find(needle) == std::string::npos) {
      size_t n = socket_.read_some(boost::asio::buffer(buf));
      all.append(buf, n);
    }
    return all;
  }

  boost::asio::ip::tcp::socket& socket() { return socket_; }
  void close() {
    boost::system::error_code ignored;
    socket_.shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
  }

 private:
  std::unique_ptr<boost::asio::io_context> own_io_;
  boost::asio::ip::tcp::socket socket_;
  boost::beast::flat_buffer buffer_;
};

inline HttpReply post_json(uint16_t port, const std::string& target, const std::string& body) {
  HttpConnection c(port);
  return c.request(boost::beast::http::verb::post, target, body);
}

inline HttpReply get(uint16_t port, const std::string& target) {
  HttpConnection c(port);
  return c.request(boost::beast::http::verb::get, target);
}

// The payloads of "data: ..." events, in order (the "[DONE]" marker included as a string).
inline std::vector<std::string> sse_payloads(const std::string& body) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < body.size()) {
    size_t end = body.find("\n\n", pos);
    if (end == std::string::npos) break;
    std::string event = body.substr(pos, end - pos);
    if (event.rfind("data: ", 0) == 0) out.push_back(event.substr(6));
    else out.push_back("<not data: " + event + ">");
    pos = end + 2;
  }
  if (pos != body.size()) out.push_back("<trailing: " + body.substr(pos) + ">");
  return out;
}

}  // namespace zinfer::gateway::testing
