#include "runtime/link.h"

#include <stdexcept>

#include <zmq.hpp>

#include "runtime/context.h"
#include "runtime/loop.h"
#include "runtime/messaging.h"
#include "runtime/shm_link.h"

namespace zinfer::runtime {

namespace {

bool binds(Link::Role role) { return role == Link::Role::kPull || role == Link::Role::kServer; }

// ZeroMQ: one socket of the role's type; a kServer keeps the identity of the last message.
class ZmqLink final : public Link {
 public:
  ZmqLink(Role role, const std::string& endpoint, const LinkOptions& options)
      : Link(endpoint), role_(role), socket_(zmq_context(), socket_type(role)) {
    configure_pipeline_socket(socket_, options.zmq_hwm);
    if (binds(role)) {
      socket_.bind(endpoint);
    } else {
      socket_.connect(endpoint);
    }
  }

  void send(std::string_view message) override {
    if (role_ == Role::kPull) throw std::logic_error("a kPull link does not send");
    if (role_ == Role::kServer) {
      if (last_identity_.empty()) throw std::logic_error("a kServer link sends only after it received a message");
      socket_.send(zmq::buffer(last_identity_), zmq::send_flags::sndmore);
    }
    socket_.send(zmq::buffer(message.data(), message.size()), zmq::send_flags::none);
  }

  std::optional<std::string> recv() override {
    if (role_ != Role::kServer) return recv_frame(socket_, true);
    for (;;) {
      zmq::message_t identity;
      if (!socket_.recv(identity, zmq::recv_flags::dontwait)) return std::nullopt;
      if (!identity.more()) continue;  // a peer sent nothing after its identity: skip
      auto body = recv_frame(socket_, false);
      if (!body) continue;
      last_identity_ = identity.to_string();
      return body;
    }
  }

  void watch(Loop& loop, std::function<void(Link&)> on_readable) override {
    loop.on(socket_, [this, h = std::move(on_readable)](zmq::socket_t&) { h(*this); });
  }
  void unwatch(Loop& loop) override { loop.remove(socket_); }

 private:
  static zmq::socket_type socket_type(Role role) {
    switch (role) {
      case Role::kPull: return zmq::socket_type::pull;
      case Role::kPush: return zmq::socket_type::push;
      case Role::kServer: return zmq::socket_type::router;
      case Role::kClient: return zmq::socket_type::dealer;
    }
    throw std::invalid_argument("unknown link role");
  }

  Role role_;
  zmq::socket_t socket_;
  std::string last_identity_;
};

// shm://: the binder's or the connector's end of a ShmLink.
class ShmMessageLink final : public Link {
 public:
  ShmMessageLink(Role role, const std::string& endpoint, const LinkOptions& options)
      : Link(endpoint), role_(role), should_stop_(options.should_stop) {
    const std::string path = shm_path(endpoint);
    link_ = binds(role) ? ShmLink::bind(path, options.shm_ring_bytes) : ShmLink::connect(path, should_stop_);
  }

  void send(std::string_view message) override {
    if (role_ == Role::kPull) throw std::logic_error("a kPull link does not send");
    link_->send(message, should_stop_);
  }
  std::optional<std::string> recv() override { return link_->reader().try_read(); }
  void watch(Loop& loop, std::function<void(Link&)> on_readable) override {
    loop.on(link_->reader(), [this, h = std::move(on_readable)](ShmRingReader&) { h(*this); });
  }
  void unwatch(Loop& loop) override { loop.remove(link_->reader()); }

 private:
  Role role_;
  std::function<bool()> should_stop_;
  std::unique_ptr<ShmLink> link_;
};

}  // namespace

std::unique_ptr<Link> open_link(Link::Role role, const std::string& endpoint, const LinkOptions& options) {
  if (is_shm_endpoint(endpoint)) return std::make_unique<ShmMessageLink>(role, endpoint, options);
  return std::make_unique<ZmqLink>(role, endpoint, options);
}

}  // namespace zinfer::runtime
