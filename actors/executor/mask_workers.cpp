#include "actors/executor/mask_workers.h"

#include <utility>

namespace zinfer::actors {

MaskWorkers::MaskWorkers(int threads) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { work(); });
}

MaskWorkers::~MaskWorkers() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
}

void MaskWorkers::drain() {
  std::unique_lock lock(mutex_);
  while (job_ != nullptr && next_ < count_) {
    const size_t i = next_++;
    const auto* job = job_;
    lock.unlock();
    try {
      (*job)(i);
    } catch (...) {
      lock.lock();
      if (!error_) error_ = std::current_exception();
      lock.unlock();
    }
    lock.lock();
    if (++finished_ == count_) done_.notify_all();
  }
}

void MaskWorkers::work() {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    drain();
  }
}

void MaskWorkers::run(size_t n, const std::function<void(size_t)>& job) {
  if (n == 0) return;
  if (threads_.empty() || n == 1) {
    for (size_t i = 0; i < n; ++i) job(i);
    return;
  }
  {
    std::lock_guard lock(mutex_);
    job_ = &job;
    next_ = 0;
    count_ = n;
    finished_ = 0;
    error_ = nullptr;
    ++generation_;
  }
  wake_.notify_all();
  drain();
  std::unique_lock lock(mutex_);
  done_.wait(lock, [&] { return finished_ == count_; });
  job_ = nullptr;
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

}  // namespace zinfer::actors
