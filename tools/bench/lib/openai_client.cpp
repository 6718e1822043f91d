#include "tools/bench/lib/openai_client.h"

#include <limits>
#include <utility>  // Boost 1.74's awaitable.hpp uses std::exchange without including it
#include <stdexcept>
#include <thread>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

namespace zinfer::bench {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

HttpUrl parse_http_url(const std::string& url) {
  const std::string scheme = "http://";
  if (url.rfind("https://", 0) == 0) {
    throw std::invalid_argument("base URL '" + url + "': https is not supported, use http://");
  }
  if (url.rfind(scheme, 0) != 0) throw std::invalid_argument("base URL '" + url + "' does not start with http://");
  std::string rest = url.substr(scheme.size());
  HttpUrl out;
  const auto slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  out.path = slash == std::string::npos ? "" : rest.substr(slash);
  while (!out.path.empty() && out.path.back() == '/') out.path.pop_back();
  const auto colon = authority.rfind(':');
  if (colon != std::string::npos && authority.find(']') == std::string::npos) {
    out.host = authority.substr(0, colon);
    out.port = authority.substr(colon + 1);
  } else {
    out.host = authority;
    out.port = "80";
  }
  if (out.host.empty() || out.port.empty()) throw std::invalid_argument("base URL '" + url + "' names no host or port");
  return out;
}

struct OpenAIBackend::Impl {
  ApiKind kind;
  HttpUrl url;
  std::string target;
  std::string api_key;
  RequestBodyOptions body;
  std::vector<std::pair<std::string, std::string>> headers;
  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
  tcp::resolver::results_type endpoints;
  std::vector<std::thread> threads;

  asio::awaitable<void> stream(BackendRequest req, Completion done);
};

namespace {

std::string shorten(std::string s, size_t n = 200) {
  if (s.size() > n) s = s.substr(0, n) + "...";
  return s;
}

}  // namespace

asio::awaitable<void> OpenAIBackend::Impl::stream(BackendRequest req, Completion done) {
  RequestRecord rec;
  rec.index = req.index;
  rec.prompt_len = req.prompt_len;
  rec.expected_output_len = req.max_tokens;
  rec.send_time_s = seconds_since(req.origin);
  try {
    tcp::socket sock(co_await asio::this_coro::executor);
    co_await asio::async_connect(sock, endpoints, asio::use_awaitable);
    sock.set_option(tcp::no_delay(true));

    http::request<http::string_body> hr{http::verb::post, target, 11};
    hr.set(http::field::host, url.host + ":" + url.port);
    hr.set(http::field::content_type, "application/json");
    hr.set(http::field::accept, "text/event-stream");
    hr.set(http::field::user_agent, "zinfer-bench");
    if (!api_key.empty()) hr.set(http::field::authorization, "Bearer " + api_key);
    for (const auto& [name, value] : headers) hr.set(name, value);
    hr.body() = openai_request_body(kind, req.model, req.prompt, req.max_tokens, req.ignore_eos, body);
    hr.prepare_payload();
    co_await http::async_write(sock, hr, asio::use_awaitable);

    beast::flat_buffer buffer;
    http::response_parser<http::buffer_body> parser;
    parser.body_limit(std::numeric_limits<std::uint64_t>::max());
    co_await http::async_read_header(sock, buffer, parser, asio::use_awaitable);
    const unsigned status = parser.get().result_int();

    std::string error_body;
    std::optional<std::string> stream_error;
    bool saw_done = false;
    SseParser sse;
    char chunk[16384];
    double now = 0;
    auto on_event = [&](std::string_view data) {
      const StreamEvent ev = interpret_openai_event(data, kind);
      if (ev.done) saw_done = true;
      if (ev.error && !stream_error) stream_error = *ev.error;
      if (ev.choice) rec.event_times_s.push_back(now);
      if (!ev.text.empty()) {
        rec.chunk_times_s.push_back(now);
        rec.generated_text += ev.text;
      }
      if (ev.completion_tokens) rec.usage_completion_tokens = ev.completion_tokens;
      if (ev.prompt_tokens) rec.usage_prompt_tokens = ev.prompt_tokens;
    };
    while (!parser.is_done() && !saw_done) {
      parser.get().body().data = chunk;
      parser.get().body().size = sizeof chunk;
      beast::error_code ec;
      // read_some, not read: read would keep reading until the 16 KiB were full, and the chunks
      // would get the arrival time of the last of them.
      co_await http::async_read_some(sock, buffer, parser, asio::redirect_error(asio::use_awaitable, ec));
      if (ec == http::error::need_buffer) ec = {};
      if (ec) throw beast::system_error(ec);
      now = seconds_since(req.origin);
      const std::string_view got(chunk, sizeof chunk - parser.get().body().size);
      if (status != 200) {
        error_body.append(got);
      } else {
        sse.feed(got, on_event);
      }
    }
    if (status == 200 && !saw_done) sse.finish(on_event);
    rec.end_time_s = seconds_since(req.origin);
    beast::error_code ignored;
    sock.shutdown(tcp::socket::shutdown_both, ignored);

    if (status != 200) {
      rec.error = "HTTP " + std::to_string(status) + ": " + shorten(error_body);
    } else if (stream_error) {
      rec.error = "server error: " + shorten(*stream_error);
    } else if (rec.chunk_times_s.empty()) {
      rec.error = "the stream carried no text";
    } else {
      rec.success = true;
    }
  } catch (const std::exception& e) {
    rec.end_time_s = seconds_since(req.origin);
    rec.success = false;
    rec.error = e.what();
  }
  done(std::move(rec));
}

OpenAIBackend::OpenAIBackend(const std::string& base_url, const std::string& endpoint, ApiKind kind,
                             int io_threads, std::string api_key, RequestBodyOptions body,
                             std::vector<std::pair<std::string, std::string>> headers)
    : impl_(std::make_unique<Impl>()) {
  impl_->body = std::move(body);
  impl_->headers = std::move(headers);
  impl_->kind = kind;
  impl_->url = parse_http_url(base_url);
  impl_->target = impl_->url.path + (endpoint.empty() || endpoint.front() == '/' ? endpoint : "/" + endpoint);
  impl_->api_key = std::move(api_key);
  try {
    tcp::resolver resolver(impl_->io);
    impl_->endpoints = resolver.resolve(impl_->url.host, impl_->url.port);
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot resolve '" + impl_->url.host + ":" + impl_->url.port + "': " + e.what());
  }
  for (int i = 0; i < std::max(1, io_threads); ++i) impl_->threads.emplace_back([this] { impl_->io.run(); });
}

OpenAIBackend::~OpenAIBackend() {
  impl_->work.reset();
  for (auto& t : impl_->threads) t.join();
}

void OpenAIBackend::submit(BackendRequest request, Completion done) {
  asio::co_spawn(impl_->io, impl_->stream(std::move(request), std::move(done)), asio::detached);
}

}  // namespace zinfer::bench
