#include "actors/pipeline/tokenizer_actor.h"

#include <atomic>
#include <memory>
#include <vector>

#include "actors/pipeline/tokenize_request.h"
#include "protocol/envelope.h"
#include "runtime/context.h"
#include "runtime/logging.h"
#include "runtime/loop.h"
#include "runtime/messaging.h"

namespace zinfer::actors {

namespace {

std::atomic<uint64_t> g_tokenizer_instance{0};

runtime::ActorBody tokenizer_worker(const runtime::EndpointsConfig& endpoints, std::string work_endpoint,
                                    std::shared_ptr<const TokenizerResources> resources) {
  return [endpoints, work_endpoint, resources](runtime::Pipe& pipe) {
    auto log = runtime::logger("tokenizer");
    zmq::socket_t work(runtime::zmq_context(), zmq::socket_type::pull);
    runtime::configure_pipeline_socket(work);
    work.connect(work_endpoint);
    zmq::socket_t to_scheduler(runtime::zmq_context(), zmq::socket_type::push);
    runtime::configure_pipeline_socket(to_scheduler);
    to_scheduler.connect(endpoints.scheduler);
    zmq::socket_t to_gateway(runtime::zmq_context(), zmq::socket_type::push);
    runtime::configure_pipeline_socket(to_gateway);
    to_gateway.connect(endpoints.gateway);

    runtime::Loop loop(&pipe);
    loop.on(work, [&](zmq::socket_t& s) {
      // One request per turn: a worker takes the next only when it is free, so PUSH spreads
      // requests over the idle workers.
      auto frame = runtime::recv_frame(s, true);
      if (!frame) return;
      try {
        protocol::Frame f = protocol::open_owned(std::move(*frame));
        if (f.type() == protocol::MessageType::kTokenizeRequest) {
          // /tokenize and /detokenize: answered to the gateway, nothing reaches the scheduler.
          auto result = answer_tokenize(*resources, f.as<protocol::TokenizeRequest>());
          if (auto* ok = std::get_if<protocol::TokenizeReply>(&result)) {
            runtime::send_message(to_gateway, *ok);
          } else {
            runtime::send_message(to_gateway, std::get<protocol::ErrorReply>(result));
          }
          return;
        }
        auto request = f.as<protocol::GenerateRequest>();
        auto result = tokenize_request(*resources, request);
        if (auto* ok = std::get_if<protocol::TokenizedRequest>(&result)) {
          runtime::send_message(to_scheduler, *ok);
        } else {
          runtime::send_message(to_gateway, std::get<protocol::ErrorReply>(result));
        }
      } catch (const protocol::ProtocolError& e) {
        log->warn("bad frame: {}", e.what());
        runtime::send_message(to_gateway, protocol::error_reply_for(e));
      }
    });
    pipe.signal_ready();
    loop.run();
  };
}

}  // namespace

runtime::ActorBody tokenizer_actor(const EngineConfig& config) {
  return [config](runtime::Pipe& pipe) {
    auto resources = std::make_shared<const TokenizerResources>(
        TokenizerResources::load(config.backend.model_dir, config.backend.max_model_len, config.tokenizer.chat_template));
    const std::string work_endpoint = "inproc://zinfer-tokenizer-work-" + std::to_string(g_tokenizer_instance++);

    zmq::socket_t front(runtime::zmq_context(), zmq::socket_type::pull);
    runtime::configure_pipeline_socket(front);
    front.bind(config.endpoints.tokenizer);
    zmq::socket_t work(runtime::zmq_context(), zmq::socket_type::push);
    runtime::configure_pipeline_socket(work, 64);  // a short queue: work waits here, not at a busy worker
    work.bind(work_endpoint);

    std::vector<std::unique_ptr<runtime::Actor>> workers;
    for (int32_t i = 0; i < config.tokenizer.workers; ++i) {
      workers.push_back(std::make_unique<runtime::Actor>("tokenizer-" + std::to_string(i),
                                                         tokenizer_worker(config.endpoints, work_endpoint, resources)));
    }
    runtime::Loop loop(&pipe);
    loop.on(front, [&](zmq::socket_t& s) {
      for (int i = 0; i < 256; ++i) {
        zmq::message_t msg;
        if (!s.recv(msg, zmq::recv_flags::dontwait)) return;
        work.send(msg, zmq::send_flags::none);  // blocks when every worker is busy: back-pressure
      }
    });
    pipe.signal_ready();
    loop.run();
    for (auto& w : workers) w->term();
  };
}

}  // namespace zinfer::actors
