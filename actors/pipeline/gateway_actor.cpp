#include "actors/pipeline/gateway_actor.h"

#include <filesystem>

#include "actors/executor/executor_actor.h"
#include "actors/pipeline/zmq_engine_client.h"
#include "gpu/model_config.h"
#include "gateway/gateway.h"
#include "runtime/context.h"
#include "runtime/logging.h"
#include "runtime/loop.h"

namespace zinfer::actors {

std::string served_model_name(const runtime::Config& config) {
  if (!config.server.served_model_name.empty()) return config.server.served_model_name;
  std::filesystem::path p(config.model.path);
  std::string name = p.filename().string();
  if (name.empty()) name = p.parent_path().filename().string();
  return name.empty() ? "default" : name;
}

runtime::ActorBody gateway_actor(const runtime::Config& config) {
  return [config](runtime::Pipe& pipe) {
    auto log = runtime::logger("gateway");
    ZmqEngineClient engine(config);
    gateway::GatewayOptions options;
    options.http.host = config.server.host;
    options.http.port = static_cast<uint16_t>(config.server.port);
    options.http.served_model_name = served_model_name(config);
    options.http.io_threads = static_cast<int>(config.server.io_threads);
    options.http.max_body_bytes = static_cast<size_t>(config.server.max_body_bytes);
    options.http.max_in_flight = static_cast<int>(config.server.max_inflight);
    // The context length lets the gateway check prompts early and fill in max_tokens for chat
    // requests that give none ("until the context is full").
    const int max_model_len = effective_max_model_len(config, gpu::load_model_config(config.model.path));
    options.http.max_model_len = max_model_len;
    options.enable_zmq = !config.server.zmq_endpoint.empty();
    options.zmq.bind = config.server.zmq_endpoint;
    options.zmq.served_model_name = options.http.served_model_name;
    options.zmq.max_in_flight = static_cast<int>(config.server.max_inflight);
    options.zmq.max_model_len = max_model_len;
    gateway::Gateway gw(engine, options, &runtime::zmq_context());
    gw.start();
    log->info("serving model '{}' on http://{}:{}{}", options.http.served_model_name, config.server.host,
              gw.http() ? gw.http()->port() : 0,
              options.enable_zmq ? " and " + config.server.zmq_endpoint : std::string());

    runtime::Loop loop(&pipe);
    loop.on(engine.events_socket(), [&](zmq::socket_t&) { engine.dispatch(); });
    pipe.signal_ready();
    loop.run();
    gw.stop();
  };
}

}  // namespace zinfer::actors
