#include "tools/bench/lib/zmq_client.h"

#include <atomic>
#include <cstdio>
#include <deque>
#include <mutex>
#include <random>
#include <thread>
#include <unordered_map>

#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "protocol/envelope.h"

namespace zinfer::bench {

struct ZmqBackend::Impl {
  struct Pending {
    RequestRecord record;
    Completion done;
    Clock::time_point origin;
  };
  struct Outgoing {
    uint64_t id;
    std::string frame;
  };

  zmq::context_t ctx{1};
  std::string wake_address;
  std::mutex mu;  // guards outbox, pending and wake_push
  zmq::socket_t wake_push{ctx, zmq::socket_type::push};
  std::deque<Outgoing> outbox;
  std::unordered_map<uint64_t, Pending> pending;
  std::atomic<bool> stopping{false};
  uint64_t id_base = 0;
  std::thread io;

  void loop(zmq::socket_t& dealer, zmq::socket_t& wake_pull);
  void on_reply(const zmq::multipart_t& msg);
  void finish(uint64_t id, bool success, std::string error);
};

void ZmqBackend::Impl::finish(uint64_t id, bool success, std::string error) {
  Pending p;
  {
    std::lock_guard lock(mu);
    auto it = pending.find(id);
    if (it == pending.end()) return;
    p = std::move(it->second);
    pending.erase(it);
  }
  p.record.end_time_s = seconds_since(p.origin);
  p.record.success = success;
  p.record.error = std::move(error);
  p.done(std::move(p.record));
}

void ZmqBackend::Impl::on_reply(const zmq::multipart_t& msg) {
  if (msg.empty()) return;
  // The envelope is the last frame; a ROUTER-side empty delimiter, if any, comes before it.
  const zmq::message_t& last = msg[msg.size() - 1];
  protocol::Frame frame;
  try {
    frame = protocol::open(std::string_view(static_cast<const char*>(last.data()), last.size()));
  } catch (const protocol::ProtocolError& e) {
    std::fprintf(stderr, "zinfer-bench: undecodable reply from the server: %s\n", e.what());
    return;
  }
  if (frame.type() == protocol::MessageType::kErrorReply) {
    const auto err = frame.as<protocol::ErrorReply>();
    const std::string text = "error " + std::to_string(err.code) + " " + err.kind + ": " + err.message;
    if (err.request_id == 0) {
      std::fprintf(stderr, "zinfer-bench: server error not tied to a request: %s\n", text.c_str());
      return;
    }
    finish(err.request_id, false, text);
    return;
  }
  if (frame.type() != protocol::MessageType::kTextDelta) return;
  const auto delta = frame.as<protocol::TextDelta>();
  if (delta.index != 0) return;  // the benchmark asks for n = 1
  bool ended = false, ok = false;
  std::string reason;
  {
    std::lock_guard lock(mu);
    auto it = pending.find(delta.request_id);
    if (it == pending.end()) return;
    RequestRecord& rec = it->second.record;
    rec.event_times_s.push_back(seconds_since(it->second.origin));
    if (!delta.text.empty()) {
      rec.chunk_times_s.push_back(seconds_since(it->second.origin));
      rec.generated_text += delta.text;
    }
    if (delta.completion_tokens > 0) rec.usage_completion_tokens = delta.completion_tokens;
    if (delta.prompt_tokens > 0) rec.usage_prompt_tokens = delta.prompt_tokens;
    if (!delta.finish_reason.empty()) {
      ended = true;
      reason = delta.finish_reason;
      ok = (reason == "stop" || reason == "length") && !rec.chunk_times_s.empty();
    }
  }
  if (ended) {
    finish(delta.request_id, ok,
           ok ? "" : (reason == "stop" || reason == "length" ? "the stream carried no text" : "finished with '" + reason + "'"));
  }
}

void ZmqBackend::Impl::loop(zmq::socket_t& dealer, zmq::socket_t& wake_pull) {
  while (!stopping.load()) {
    zmq::pollitem_t items[] = {{dealer.handle(), 0, ZMQ_POLLIN, 0}, {wake_pull.handle(), 0, ZMQ_POLLIN, 0}};
    zmq::poll(items, 2, std::chrono::milliseconds(-1));
    if (items[1].revents & ZMQ_POLLIN) {
      zmq::message_t token;
      while (wake_pull.recv(token, zmq::recv_flags::dontwait)) {
      }
      std::deque<Outgoing> batch;
      {
        std::lock_guard lock(mu);
        batch.swap(outbox);
      }
      for (auto& out : batch) {
        {
          std::lock_guard lock(mu);
          auto it = pending.find(out.id);
          if (it != pending.end()) it->second.record.send_time_s = seconds_since(it->second.origin);
        }
        dealer.send(zmq::buffer(out.frame), zmq::send_flags::none);
      }
    }
    if (items[0].revents & ZMQ_POLLIN) {
      zmq::multipart_t msg;
      while (msg.recv(dealer, ZMQ_DONTWAIT)) {
        on_reply(msg);
        msg.clear();
      }
    }
  }
}

ZmqBackend::ZmqBackend(const std::string& endpoint) : impl_(std::make_unique<Impl>()) {
  std::random_device rd;
  impl_->id_base = (static_cast<uint64_t>(rd()) << 32) & 0x7fffffff00000000ull;
  impl_->wake_address = "inproc://zinfer-bench-wake-" + std::to_string(reinterpret_cast<uintptr_t>(impl_.get()));
  auto dealer = std::make_shared<zmq::socket_t>(impl_->ctx, zmq::socket_type::dealer);
  auto wake_pull = std::make_shared<zmq::socket_t>(impl_->ctx, zmq::socket_type::pull);
  dealer->set(zmq::sockopt::linger, 0);
  // Unbounded queues: the benchmark's own concurrency limit is the back-pressure.
  dealer->set(zmq::sockopt::sndhwm, 0);
  dealer->set(zmq::sockopt::rcvhwm, 0);
  try {
    dealer->connect(endpoint);
  } catch (const zmq::error_t& e) {
    throw std::runtime_error("cannot connect to ZeroMQ endpoint '" + endpoint + "': " + e.what());
  }
  wake_pull->bind(impl_->wake_address);
  impl_->wake_push.set(zmq::sockopt::linger, 0);
  impl_->wake_push.connect(impl_->wake_address);
  impl_->io = std::thread([impl = impl_.get(), dealer, wake_pull] { impl->loop(*dealer, *wake_pull); });
}

ZmqBackend::~ZmqBackend() {
  impl_->stopping.store(true);
  {
    std::lock_guard lock(impl_->mu);
    impl_->wake_push.send(zmq::str_buffer("x"), zmq::send_flags::dontwait);
  }
  impl_->io.join();
}

void ZmqBackend::submit(BackendRequest request, Completion done) {
  protocol::GenerateRequest gen;
  gen.request_id = impl_->id_base | (static_cast<uint64_t>(request.index) + 1);
  gen.model = request.model;
  gen.prompt = request.prompt;
  gen.sampling.max_tokens = request.max_tokens;
  gen.sampling.temperature = 0.0f;
  gen.sampling.ignore_eos = request.ignore_eos;
  Impl::Pending p;
  p.record.index = request.index;
  p.record.prompt_len = request.prompt_len;
  p.record.expected_output_len = request.max_tokens;
  p.record.send_time_s = seconds_since(request.origin);
  p.done = std::move(done);
  p.origin = request.origin;
  std::lock_guard lock(impl_->mu);
  impl_->pending[gen.request_id] = std::move(p);
  impl_->outbox.push_back({gen.request_id, protocol::encode(gen)});
  impl_->wake_push.send(zmq::str_buffer("x"), zmq::send_flags::dontwait);
}

}  // namespace zinfer::bench
