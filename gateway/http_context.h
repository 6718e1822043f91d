// What every HTTP connection of one server shares. Held by shared_ptr: sessions and the engine's
// sinks may outlive HttpServer::stop() by a moment, and must still find it.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <unordered_map>

#include <boost/asio/io_context.hpp>

#include "gateway/api_keys.h"
#include "gateway/engine_client.h"
#include "gateway/in_flight.h"
#include "gateway/metrics.h"
#include "gateway/options.h"
#include "gateway/tenant_limiter.h"

namespace zinfer::gateway {

struct HttpContext {
  HttpContext(EngineClient& e, HttpOptions o, std::shared_ptr<Metrics> m, std::shared_ptr<RequestIds> i)
      : engine(e), options(std::move(o)), metrics(std::move(m)), ids(std::move(i)), limiter(options.max_in_flight),
        tenants(options.max_in_flight_per_tenant), api_keys(options.api_keys) {}

  EngineClient& engine;
  HttpOptions options;
  std::shared_ptr<Metrics> metrics;
  std::shared_ptr<RequestIds> ids;
  InFlightLimiter limiter;
  TenantLimiter tenants;  // [server] max_inflight_per_tenant
  ApiKeys api_keys;
  // Open connections (HttpSession counts itself in and out) and their cap, max_connections or
  // the default HttpServer::start() derives from the descriptor limit.
  std::atomic<int64_t> connections{0};
  int64_t max_connections = 0;
  // Owned by the server and by every engine sink, so that a late event always has somewhere to be
  // posted. Weak here: the io_context holds the sessions' handlers, which hold this context.
  std::weak_ptr<boost::asio::io_context> io;

  // Requests submitted and not finished, with their sinks, so that stopping the server can end
  // each with an error (an event posted to its connection like the engine's own) and abort it.
  std::mutex active_mu;
  std::unordered_map<uint64_t, DeltaSink> active;

  // Set when the server drains (graceful shutdown): new generations get 503, /health 503.
  std::atomic<bool> draining{false};
  // Connections with response bytes not yet written, so that stopping can wait for the errors
  // it sent to go out.
  std::atomic<int> connections_writing{0};

  void add_active(uint64_t id, DeltaSink sink) {
    std::lock_guard lock(active_mu);
    active.emplace(id, std::move(sink));
  }
  void remove_active(uint64_t id) {
    std::lock_guard lock(active_mu);
    active.erase(id);
  }
};

}  // namespace zinfer::gateway
