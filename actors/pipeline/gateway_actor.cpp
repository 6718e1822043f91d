#include "actors/pipeline/gateway_actor.h"

#include "actors/executor/executor_actor.h"
#include "actors/pipeline/generation_defaults.h"
#include "actors/pipeline/zmq_engine_client.h"
#include "gpu/model_config.h"
#include "gateway/api_keys.h"
#include "gateway/gateway.h"
#include "runtime/context.h"
#include "runtime/logging.h"
#include "runtime/loop.h"
#include "runtime/peer_notice.h"

namespace zinfer::actors {

runtime::ActorBody gateway_actor(const EngineConfig& config) {
  return [config](runtime::Pipe& pipe) {
    auto log = runtime::logger("gateway");
    ZmqEngineClient engine(config.endpoints);
    // The context length lets the gateway check prompts early and fill in max_tokens for chat
    // requests that give none ("until the context is full").
    gateway::GatewayOptions options = gateway_options(
        config, effective_max_model_len(config.backend, gpu::load_model_config(config.backend.model_dir)));
    // A request that leaves a sampling field out gets the model's default, as with vLLM.
    options.http.sampling_defaults =
        load_sampling_defaults(options.http.generation_config, config.backend.model_dir);
    gateway::Gateway gw(engine, options, &runtime::zmq_context());
    gw.start();
    for (const auto& warning : gateway::exposure_warnings(options)) log->warn("{}", warning);
    if (!options.http.api_keys.empty()) log->info("clients must present one of {} API keys", options.http.api_keys.size());
    log->info("serving model '{}' on http://{}:{}{}", options.http.served_model_name, options.http.host,
              gw.http() ? gw.http()->port() : 0,
              options.enable_zmq ? " and " + options.zmq.bind : std::string());

    runtime::Loop loop(&pipe);
    loop.on(engine.events_socket(), [&](zmq::socket_t&) { engine.dispatch(); });
    // Supervision (I38): another actor is down (its requests end with errors, /health is 503)
    // or back.
    loop.on_notice([&](const std::string& text) {
      if (auto notice = runtime::PeerNotice::parse(text)) {
        engine.dispatch();  // what the actor sent before it went down still counts
        engine.on_peer_notice(*notice);
      } else {
        log->warn("unknown notice from the supervisor: {}", text);
      }
    });
    pipe.signal_ready();
    loop.run();  // until $TERM (SIGTERM or SIGINT to the process)
    // A graceful shutdown: the other actors still run (the gateway is stopped first), so requests
    // in flight can finish while new ones are refused; this thread keeps reading their events.
    log->info("shutting down: {} s for the requests in flight to finish", options.shutdown_grace_s);
    const auto summary = gw.drain([&](std::chrono::milliseconds timeout) {
      zmq::pollitem_t item{engine.events_socket().handle(), 0, ZMQ_POLLIN, 0};
      if (zmq::poll(&item, 1, timeout) > 0) engine.dispatch();
    });
    log->info("stopped after {} ms: {} requests were in flight, {} finished, {} ended with an error", summary.took.count(),
              summary.in_flight, summary.in_flight - summary.ended, summary.ended);
  };
}

}  // namespace zinfer::actors
