#include "gpu/tensor_parallel_backend.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace zinfer::gpu {
namespace {

// The ranks' threads and the jobs the group hands them: one job per rank at a time, run() returns
// when every rank finished it or, as soon as one failed, after aborting the group and waiting for
// the rest. A thread that waits polls for up to `poll` (RankGroupHooks::poll), then sleeps: the
// state it polls is atomic, and is changed under the mutex, so a sleeper is always notified.
class RankThreads {
 public:
  RankThreads(int32_t size, std::function<void()> abort, std::chrono::microseconds poll)
      : abort_(std::move(abort)), poll_(poll), jobs_(size), errors_(size) {
    for (int32_t r = 0; r < size; ++r) threads_.emplace_back([this, r] { loop(r); });
  }

  ~RankThreads() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  // Runs job(rank) on every rank's thread. Returns the first failure's rank (-1 if none); its
  // exception is in error(rank).
  int32_t run(const std::function<void(int32_t)>& job) {
    std::unique_lock lock(mu_);
    for (size_t r = 0; r < jobs_.size(); ++r) {
      jobs_[r] = job;
      errors_[r] = nullptr;
    }
    pending_ = static_cast<int32_t>(jobs_.size());
    failed_rank_ = -1;
    ++generation_;
    cv_.notify_all();
    wait(lock, done_, [&] { return pending_ == 0 || failed_rank_ >= 0; });
    if (failed_rank_ >= 0 && pending_ > 0) {
      // Release the ranks waiting for the failed one, then let them finish.
      lock.unlock();
      abort_();
      lock.lock();
      done_.wait(lock, [&] { return pending_ == 0; });
    }
    return failed_rank_;
  }

  std::exception_ptr error(int32_t rank) const { return errors_[rank]; }

 private:
  // Waits (lock held) until ready(): polling without the lock for up to poll_ first.
  template <typename Ready>
  void wait(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, Ready ready) {
    if (poll_.count() > 0 && !ready()) {
      lock.unlock();
      const auto until = std::chrono::steady_clock::now() + poll_;
      for (uint32_t spins = 0; !ready(); ++spins) {
        if (spins % 64 == 0 && std::chrono::steady_clock::now() > until) break;
        pause();
      }
      lock.lock();
    }
    cv.wait(lock, ready);
  }

  static void pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    std::this_thread::yield();
#endif
  }

  void loop(int32_t rank) {
    uint64_t seen = 0;
    for (;;) {
      std::function<void(int32_t)> job;
      {
        std::unique_lock lock(mu_);
        wait(lock, cv_, [&] { return stopping_ || generation_ != seen; });
        if (stopping_) return;
        seen = generation_;
        job = jobs_[rank];
      }
      std::exception_ptr error;
      try {
        job(rank);
      } catch (...) {
        error = std::current_exception();
      }
      std::lock_guard lock(mu_);
      errors_[rank] = error;
      // The first rank to fail is the one named, unless it only saw the abort of another.
      if (error && failed_rank_ < 0) failed_rank_ = rank;
      --pending_;
      done_.notify_all();
    }
  }

  std::function<void()> abort_;
  const std::chrono::microseconds poll_;
  std::mutex mu_;
  std::condition_variable cv_, done_;
  std::vector<std::function<void(int32_t)>> jobs_;
  std::vector<std::exception_ptr> errors_;
  std::vector<std::thread> threads_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int32_t> pending_{0};
  std::atomic<int32_t> failed_rank_{-1};
  std::atomic<bool> stopping_{false};
};

std::string message_of(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "unknown exception";
  }
}

class TensorParallelBackend final : public Backend {
 public:
  TensorParallelBackend(int32_t size, const RankFactory& factory, std::unique_ptr<RankGroupHooks> hooks)
      : hooks_(hooks != nullptr ? std::move(hooks) : std::make_unique<RankGroupHooks>()),
        group_(size),
        ranks_(size),
        threads_(size, [this] { abort_group("another rank failed"); }, hooks_->poll()) {
    const uint64_t seed = std::random_device{}() * 0x9E3779B97F4A7C15ull ^ std::random_device{}();
    std::vector<RankContext> contexts(size);
    for (int32_t r = 0; r < size; ++r) {
      contexts[r].rank = r;
      contexts[r].group = &group_;
      contexts[r].seed = seed;
      contexts[r].device = r;
      hooks_->prepare(contexts[r]);
    }
    const int32_t failed = threads_.run([&](int32_t r) { ranks_[r] = factory(contexts[r]); });
    if (failed >= 0) {
      const std::string why = message_of(threads_.error(failed));
      release_ranks();
      throw std::runtime_error("tensor-parallel rank " + std::to_string(failed) + " of " + std::to_string(size) +
                               " failed to start: " + why);
    }
  }

  ~TensorParallelBackend() override { release_ranks(); }

  const ModelConfig& config() const override { return ranks_[0]->config(); }
  CacheGeometry cache_geometry() const override { return ranks_[0]->cache_geometry(); }
  std::string name() const override {
    return ranks_[0]->name() + " x" + std::to_string(ranks_.size()) + " (tensor parallel)";
  }

  std::vector<SampledToken> step(const BatchInput& batch) override {
    std::vector<std::vector<SampledToken>> tokens(ranks_.size());
    run("step", [&](int32_t r) { tokens[r] = ranks_[r]->step(batch); });
    return std::move(tokens[0]);
  }

  std::vector<float> forward_logits(const SequenceInput& seq) override {
    std::vector<std::vector<float>> logits(ranks_.size());
    run("forward", [&](int32_t r) { logits[r] = ranks_[r]->forward_logits(seq); });
    return std::move(logits[0]);
  }

 private:
  void run(const char* what, const std::function<void(int32_t)>& job) {
    if (!failure_.empty()) throw BackendFailure(failure_);
    const int32_t failed = threads_.run(job);
    if (failed < 0) return;
    failure_ = "tensor-parallel rank " + std::to_string(failed) + " of " + std::to_string(ranks_.size()) + " failed in a " +
               what + ": " + message_of(threads_.error(failed)) + "; the group is stopped";
    throw BackendFailure(failure_);
  }

  void abort_group(const std::string& why) {
    group_.abort(why);
    hooks_->abort();
  }

  // Each rank's backend is destroyed on its own thread (where its device is current).
  void release_ranks() {
    threads_.run([&](int32_t r) { ranks_[r].reset(); });
  }

  std::unique_ptr<RankGroupHooks> hooks_;
  RankGroup group_;
  std::vector<std::unique_ptr<Backend>> ranks_;
  std::string failure_;
  RankThreads threads_;  // last: its threads end before the members they use
};

}  // namespace

std::chrono::microseconds device_group_polling(unsigned cores, int32_t ranks) {
  return ranks > 0 && cores >= static_cast<unsigned>(ranks) + 4 ? std::chrono::milliseconds{20}
                                                                 : std::chrono::milliseconds{0};
}

std::unique_ptr<Backend> make_tensor_parallel_backend(int32_t size, RankFactory factory,
                                                      std::unique_ptr<RankGroupHooks> hooks) {
  if (size < 1) throw std::invalid_argument("tensor_parallel_size must be at least 1");
  return std::make_unique<TensorParallelBackend>(size, factory, std::move(hooks));
}

}  // namespace zinfer::gpu
