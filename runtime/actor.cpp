#include "runtime/actor.h"

#include <stdexcept>
#include <utility>

#include "runtime/context.h"
#include "runtime/logging.h"

namespace zinfer::runtime {

namespace {
constexpr const char* kReady = "$READY";
constexpr const char* kFailedPrefix = "$FAILED:";
std::atomic<uint64_t> g_pipe_counter{0};
}  // namespace

Pipe::Pipe(zmq::socket_t socket, std::shared_ptr<std::atomic<bool>> term_flag, std::string name)
    : socket_(std::move(socket)), term_flag_(std::move(term_flag)), name_(std::move(name)) {}

void Pipe::signal_ready() {
  if (ready_signalled_) return;
  ready_signalled_ = true;
  socket_.send(zmq::buffer(std::string_view(kReady)), zmq::send_flags::none);
}

void Pipe::signal_failed(const std::string& why) {
  if (ready_signalled_) return;
  ready_signalled_ = true;
  socket_.send(zmq::buffer(std::string(kFailedPrefix) + why), zmq::send_flags::none);
}

void Pipe::hold_notice(std::string notice) {
  if (held_notices_.size() >= kMaxHeldNotices) held_notices_.erase(held_notices_.begin());
  held_notices_.push_back(std::move(notice));
}

std::vector<std::string> Pipe::take_held_notices() { return std::exchange(held_notices_, {}); }

Actor::Actor(std::string name, ActorBody body)
    : name_(std::move(name)),
      pipe_(zmq_context(), zmq::socket_type::pair),
      term_flag_(std::make_shared<std::atomic<bool>>(false)),
      alive_(std::make_shared<std::atomic<bool>>(true)),
      failure_(std::make_shared<std::string>()) {
  const std::string endpoint = "inproc://zinfer-pipe-" + std::to_string(g_pipe_counter++) + "-" + name_;
  pipe_.set(zmq::sockopt::linger, 0);
  pipe_.bind(endpoint);
  zmq::socket_t child(zmq_context(), zmq::socket_type::pair);
  child.set(zmq::sockopt::linger, 0);
  child.connect(endpoint);

  thread_ = std::thread([body = std::move(body), child = std::move(child), flag = term_flag_,
                         alive = alive_, failure = failure_, name = name_]() mutable {
    Pipe pipe(std::move(child), flag, name);
    try {
      body(pipe);
      if (!pipe.ready_signalled()) pipe.signal_failed("actor body returned before signalling ready");
    } catch (const std::exception& e) {
      if (!pipe.ready_signalled()) {
        pipe.signal_failed(e.what());
      } else {
        logger(name)->error("actor stopped by an exception: {}", e.what());
        *failure = e.what();
      }
    }
    alive->store(false);
  });

  zmq::message_t msg;
  if (!pipe_.recv(msg)) throw std::runtime_error("actor " + name_ + ": no start signal");
  std::string reply = msg.to_string();
  if (reply != kReady) {
    thread_.join();
    termed_ = true;
    std::string why = reply.rfind(kFailedPrefix, 0) == 0 ? reply.substr(std::char_traits<char>::length(kFailedPrefix)) : reply;
    throw std::runtime_error("actor " + name_ + " failed to start: " + why);
  }
}

void Actor::term() {
  if (termed_) return;
  termed_ = true;
  term_flag_->store(true);
  // The pipe is a PAIR over inproc: the send does not block while the body is busy (it queues),
  // and the body's loop reads it as soon as its handler returns.
  if (alive_->load()) {
    try {
      pipe_.send(zmq::buffer(std::string_view(kTermCommand)), zmq::send_flags::dontwait);
    } catch (const zmq::error_t&) {
    }
  }
  if (thread_.joinable()) thread_.join();
}

Actor::~Actor() { term(); }

std::string Actor::failure() const { return alive_->load() ? std::string() : *failure_; }

bool Actor::heartbeat() {
  if (termed_) return answered_ = false;
  zmq::message_t msg;
  while (pipe_.recv(msg, zmq::recv_flags::dontwait)) {
    if (msg.to_string_view() == kPongReply) ping_outstanding_ = false;
  }
  answered_ = !ping_outstanding_;
  if (!answered_) return false;
  try {
    if (pipe_.send(zmq::buffer(std::string_view(kPingCommand)), zmq::send_flags::dontwait)) ping_outstanding_ = true;
  } catch (const zmq::error_t&) {
  }
  return true;
}

void Actor::notify(const std::string& notice) {
  if (termed_) return;
  try {
    pipe_.send(zmq::buffer(std::string(kNoticePrefix) + notice), zmq::send_flags::dontwait);
  } catch (const zmq::error_t&) {
  }
}

}  // namespace zinfer::runtime
