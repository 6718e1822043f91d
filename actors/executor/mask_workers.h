// A few threads for the grammar masks of one step (docs/structured-output.md): run(n, job) calls
// job(0..n-1) spread over the workers and the calling thread, and returns when all are done.
// The threads sleep between steps; a step without constrained rows never wakes them.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace zinfer::actors {

class MaskWorkers {
 public:
  explicit MaskWorkers(int threads);  // threads besides the caller's; 0: the caller alone
  ~MaskWorkers();
  MaskWorkers(const MaskWorkers&) = delete;
  MaskWorkers& operator=(const MaskWorkers&) = delete;

  // Rethrows the first exception a job threw (after every job ended).
  void run(size_t n, const std::function<void(size_t)>& job);
  int threads() const { return static_cast<int>(threads_.size()); }

 private:
  void work();
  void drain();  // takes jobs until none is left

  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(size_t)>* job_ = nullptr;
  size_t next_ = 0, count_ = 0, finished_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
  std::vector<std::thread> threads_;
};

}  // namespace zinfer::actors
