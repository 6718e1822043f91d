#include "runtime/rpc.h"

#include <cstring>

#include "runtime/context.h"

namespace zinfer::runtime {

RpcClient::RpcClient(Loop& loop, const std::string& endpoint)
    : loop_(loop), socket_(zmq_context(), zmq::socket_type::dealer) {
  socket_.set(zmq::sockopt::linger, 0);
  socket_.connect(endpoint);
  loop_.on(socket_, [this](zmq::socket_t& s) { on_readable(s); });
}

RpcClient::~RpcClient() {
  loop_.remove(socket_);
  for (auto& [id, p] : pending_) {
    p.set_exception(std::make_exception_ptr(RpcError("rpc client closed while waiting for a reply")));
  }
  pending_.clear();
}

std::string RpcClient::call(std::string_view request) {
  uint64_t id = next_id_++;
  auto future = pending_[id].get_future();
  char corr[8];
  std::memcpy(corr, &id, 8);
  socket_.send(zmq::buffer(corr, 8), zmq::send_flags::sndmore);
  socket_.send(zmq::buffer(request.data(), request.size()), zmq::send_flags::none);
  return future.get();
}

void RpcClient::on_readable(zmq::socket_t& s) {
  for (;;) {
    zmq::message_t corr;
    if (!s.recv(corr, zmq::recv_flags::dontwait)) return;
    zmq::message_t body;
    bool has_body = corr.more() && s.recv(body, zmq::recv_flags::none);
    // Drain any extra frames of a malformed reply.
    while (body.more()) {
      zmq::message_t extra;
      (void)s.recv(extra, zmq::recv_flags::none);
      body = std::move(extra);
    }
    if (corr.size() != 8 || !has_body) continue;
    uint64_t id;
    std::memcpy(&id, corr.data(), 8);
    auto it = pending_.find(id);
    if (it == pending_.end()) continue;
    it->second.set_value(body.to_string());
    pending_.erase(it);
  }
}

void RpcRequest::reply(std::string_view payload) {
  if (replied_) throw RpcError("reply() called twice");
  replied_ = true;
  socket_->send(zmq::buffer(identity_), zmq::send_flags::sndmore);
  socket_->send(zmq::buffer(correlation_), zmq::send_flags::sndmore);
  socket_->send(zmq::buffer(payload.data(), payload.size()), zmq::send_flags::none);
}

RpcServer::RpcServer(Loop& loop, const std::string& endpoint, Handler handler)
    : loop_(loop), socket_(zmq_context(), zmq::socket_type::router), handler_(std::move(handler)) {
  socket_.set(zmq::sockopt::linger, 0);
  socket_.bind(endpoint);
  loop_.on(socket_, [this](zmq::socket_t& s) {
    for (;;) {
      zmq::message_t identity;
      if (!s.recv(identity, zmq::recv_flags::dontwait)) return;
      std::vector<zmq::message_t> frames;
      bool more = identity.more();
      while (more) {
        zmq::message_t f;
        (void)s.recv(f, zmq::recv_flags::none);
        more = f.more();
        frames.push_back(std::move(f));
      }
      if (frames.size() != 2) continue;  // not a request of this protocol: dropped
      handler_(std::make_shared<RpcRequest>(&socket_, identity.to_string(), frames[0].to_string(),
                                            frames[1].to_string()));
    }
  });
}

RpcServer::~RpcServer() { loop_.remove(socket_); }

}  // namespace zinfer::runtime
