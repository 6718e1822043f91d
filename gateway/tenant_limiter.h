// A cap on the requests one tenant has in flight on an entry point ([server]
// max_inflight_per_tenant), so that one client cannot take every slot of max_inflight: past it
// the tenant's new requests get 429 while the others' go on. The tenant is the API key the
// request presented or its OpenAI `user` field ([server] tenant_key); requests without one share
// the tenant "".
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace zinfer::gateway {

class TenantLimiter {
 public:
  // 0 = no cap.
  explicit TenantLimiter(int64_t max_per_tenant) : max_(max_per_tenant) {}

  // Releases its slot when destroyed (the limiter must outlive it).
  class Token {
   public:
    Token() = default;
    Token(TenantLimiter* owner, std::string tenant) : owner_(owner), tenant_(std::move(tenant)) {}
    Token(Token&& other) noexcept : owner_(other.owner_), tenant_(std::move(other.tenant_)) { other.owner_ = nullptr; }
    Token& operator=(Token&& other) noexcept {
      if (this != &other) {
        release();
        owner_ = other.owner_;
        tenant_ = std::move(other.tenant_);
        other.owner_ = nullptr;
      }
      return *this;
    }
    Token(const Token&) = delete;
    Token& operator=(const Token&) = delete;
    ~Token() { release(); }
    void release() {
      if (owner_) owner_->release(tenant_);
      owner_ = nullptr;
    }

   private:
    TenantLimiter* owner_ = nullptr;
    std::string tenant_;
  };

  // A slot for `tenant`, or nothing when it holds max_per_tenant already.
  std::optional<Token> try_acquire(const std::string& tenant) {
    if (max_ <= 0) return Token();
    std::lock_guard lock(mu_);
    int64_t& n = counts_[tenant];
    if (n >= max_) return std::nullopt;
    ++n;
    return Token(this, tenant);
  }

  int64_t in_flight(const std::string& tenant) const {
    std::lock_guard lock(mu_);
    auto it = counts_.find(tenant);
    return it == counts_.end() ? 0 : it->second;
  }
  int64_t max() const { return max_; }

 private:
  void release(const std::string& tenant) {
    std::lock_guard lock(mu_);
    auto it = counts_.find(tenant);
    if (it != counts_.end() && --it->second <= 0) counts_.erase(it);  // the map holds busy tenants only
  }

  int64_t max_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, int64_t> counts_;
};

}  // namespace zinfer::gateway
