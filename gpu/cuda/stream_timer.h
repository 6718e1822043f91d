// Times the work a stream runs between two points with a pair of CUDA events, which it owns: they
// are destroyed however the timing ends, a CudaError thrown between the two points included.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>

#include "gpu/cuda/cuda_check.h"

namespace zinfer::gpu::cuda {

class StreamTimer {
 public:
  StreamTimer() {
    check_cuda(cudaEventCreate(&start_), "cudaEventCreate");
    try {
      check_cuda(cudaEventCreate(&stop_), "cudaEventCreate");
    } catch (...) {
      cudaEventDestroy(start_);
      throw;
    }
  }
  ~StreamTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  StreamTimer(const StreamTimer&) = delete;
  StreamTimer& operator=(const StreamTimer&) = delete;

  void start(cudaStream_t stream) { check_cuda(cudaEventRecord(start_, stream), "cudaEventRecord"); }
  // Milliseconds of `stream`'s work since start(), once the stream has done it.
  float stop_ms(cudaStream_t stream) {
    check_cuda(cudaEventRecord(stop_, stream), "cudaEventRecord");
    check_cuda(cudaEventSynchronize(stop_), "cudaEventSynchronize");
    float ms = 0.f;
    check_cuda(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    return ms;
  }

 private:
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

// Seconds per call of run(), which queues work on `stream`: one untimed call, then `rounds` rounds
// of `calls` back-to-back calls, the best round's mean (the start-up choices' measure: a round
// that something else slowed is dropped).
template <typename Run>
double best_round_seconds(cudaStream_t stream, int rounds, int calls, Run&& run) {
  run();
  StreamTimer timer;
  double best = 0;
  for (int r = 0; r < rounds; ++r) {
    timer.start(stream);
    for (int i = 0; i < calls; ++i) run();
    const double s = timer.stop_ms(stream) * 1e-3 / calls;
    best = r == 0 ? s : std::min(best, s);
  }
  return best;
}

}  // namespace zinfer::gpu::cuda
