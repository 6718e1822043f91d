// What every HTTP connection of one server shares. Held by shared_ptr: sessions and the engine's
// sinks may outlive HttpServer::stop() by a moment, and must still find it.
#pragma once

#include <memory>
#include <mutex>
#include <unordered_set>

#include <boost/asio/io_context.hpp>

#include "gateway/api_keys.h"
#include "gateway/engine_client.h"
#include "gateway/in_flight.h"
#include "gateway/metrics.h"
#include "gateway/options.h"

namespace zinfer::gateway {

struct HttpContext {
  HttpContext(EngineClient& e, HttpOptions o, std::shared_ptr<Metrics> m, std::shared_ptr<RequestIds> i)
      : engine(e), options(std::move(o)), metrics(std::move(m)), ids(std::move(i)), limiter(options.max_in_flight),
        api_keys(options.api_keys) {}

  EngineClient& engine;
  HttpOptions options;
  std::shared_ptr<Metrics> metrics;
  std::shared_ptr<RequestIds> ids;
  InFlightLimiter limiter;
  ApiKeys api_keys;
  // Owned by the server and by every engine sink, so that a late event always has somewhere to be
  // posted. Weak here: the io_context holds the sessions' handlers, which hold this context.
  std::weak_ptr<boost::asio::io_context> io;

  // Ids of requests submitted and not finished, so that stopping the server aborts them.
  std::mutex active_mu;
  std::unordered_set<uint64_t> active;

  void add_active(uint64_t id) {
    std::lock_guard lock(active_mu);
    active.insert(id);
  }
  void remove_active(uint64_t id) {
    std::lock_guard lock(active_mu);
    active.erase(id);
  }
};

}  // namespace zinfer::gateway
