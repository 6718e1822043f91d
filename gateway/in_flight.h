// A cap on the requests a gateway entry point has accepted and not yet finished: the answer to
// overload is a quick 429 rather than an ever longer queue.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>

namespace zinfer::gateway {

class InFlightLimiter {
 public:
  explicit InFlightLimiter(int64_t max_in_flight) : max_(max_in_flight) {}

  // Releases its slot when destroyed.
  class Token {
   public:
    Token() = default;
    explicit Token(InFlightLimiter* owner) : owner_(owner) {}
    Token(Token&& other) noexcept : owner_(other.owner_) { other.owner_ = nullptr; }
    Token& operator=(Token&& other) noexcept {
      if (this != &other) {
        release();
        owner_ = other.owner_;
        other.owner_ = nullptr;
      }
      return *this;
    }
    Token(const Token&) = delete;
    Token& operator=(const Token&) = delete;
    ~Token() { release(); }

    void release() {
      if (owner_) owner_->count_.fetch_sub(1);
      owner_ = nullptr;
    }

   private:
    InFlightLimiter* owner_ = nullptr;
  };

  std::optional<Token> try_acquire() {
    int64_t now = count_.load();
    while (now < max_) {
      if (count_.compare_exchange_weak(now, now + 1)) return Token(this);
    }
    return std::nullopt;
  }

  int64_t in_flight() const { return count_.load(); }
  int64_t max() const { return max_; }

 private:
  int64_t max_;
  std::atomic<int64_t> count_{0};
};

// Gateway-unique request ids shared by the HTTP server and the ZeroMQ endpoint (0 is never used:
// it means "unknown request" in ErrorReply). They start at the wall clock's milliseconds times
// 2^20, so that a gateway restarted under `zinfer launch` never reuses the id of a request its
// predecessor left in the pipeline (docs/architecture.md, I38).
class RequestIds {
 public:
  uint64_t next() { return next_.fetch_add(1); }

 private:
  static uint64_t first() {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::system_clock::now().time_since_epoch()).count();
    return (static_cast<uint64_t>(ms) << 20) | 1;
  }
  std::atomic<uint64_t> next_{first()};
};

}  // namespace zinfer::gateway
