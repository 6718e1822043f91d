// Settings of the gateway, filled from the config by whoever starts it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace zinfer::gateway {

struct HttpOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 8000;              // 0 = pick a free port (HttpServer::port() tells which)
  std::string served_model_name = "zinfer";
  int io_threads = 2;                // all connections share these threads
  std::size_t max_body_bytes = 1 << 20;  // larger request bodies get 413
  int max_in_flight = 256;           // requests accepted but unfinished; more get 429
  int max_model_len = 0;             // context length; 0 = unknown (the engine checks it)
  int idle_timeout_ms = 60000;       // a connection with no complete request is closed after this
  int write_timeout_ms = 60000;      // a client that stops reading its stream is dropped after this
};

struct ZmqEndpointOptions {
  std::string bind = "tcp://127.0.0.1:5555";  // "tcp://127.0.0.1:*" picks a free port
  std::string served_model_name = "zinfer";    // a request naming another model gets 404
  int max_model_len = 0;                       // 0 = unknown (the engine checks it)
  int max_in_flight = 256;           // per endpoint; more get ErrorReply 429
  int send_high_water_mark = 100000; // frames queued towards slow clients
};

}  // namespace zinfer::gateway
