#include "gpu/cuda/nccl_group.h"

#include <cstdlib>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gpu/cuda/cuda_backend.h"
#include "gpu/cuda/cuda_backend_impl.h"
#include "gpu/cuda/cuda_check.h"
#include "gpu/cuda/residual_exchange.h"
#include "gpu/tensor_parallel_backend.h"

#if ZINFER_HAVE_NCCL
#include <nccl.h>
#endif

namespace zinfer::gpu {

#if ZINFER_HAVE_NCCL

namespace cuda {
namespace {

void check_nccl(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) throw std::runtime_error(std::string("NCCL ") + what + ": " + ncclGetErrorString(r));
}

// Communicators NcclHooks::abort() freed: a symmetric buffer released after that must not
// deregister its window from them.
std::mutex g_aborted_mu;
std::set<void*> g_aborted_comms;

bool comm_aborted(void* comm) {
  std::lock_guard lock(g_aborted_mu);
  return g_aborted_comms.count(comm) != 0;
}

// The communicators of devices 0..N-1. abort() releases ranks blocked in a collective whose peer
// failed (NCCL's kernels poll the abort flag); the destructor frees what abort() did not.
class NcclHooks final : public RankGroupHooks {
 public:
  explicit NcclHooks(int32_t size) : comms_(size, nullptr) {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess) devices = 0;
    if (devices < size) {
      throw std::runtime_error("tensor_parallel_size " + std::to_string(size) + " needs " + std::to_string(size) +
                               " CUDA devices; this machine has " + std::to_string(devices));
    }
    std::vector<int> list(size);
    for (int32_t r = 0; r < size; ++r) list[r] = r;
    check_nccl(ncclCommInitAll(comms_.data(), size, list.data()), "ncclCommInitAll");
  }
  ~NcclHooks() override {
    for (ncclComm_t c : comms_)
      if (c != nullptr) ncclCommDestroy(c);
  }
  // A CUDA rank's thread queues a step and waits for the device: polling saves two thread
  // wake-ups per step (gpu/tensor_parallel_backend.h).
  std::chrono::microseconds poll() const override {
    return device_group_polling(std::thread::hardware_concurrency(), static_cast<int32_t>(comms_.size()));
  }
  void prepare(RankContext& rank) override {
    rank.nccl_comm = comms_[rank.rank];
    rank.abort_flag = abort_flag_.device();
  }
  void abort() override {
    abort_flag_.raise();  // first: ranks spinning in a residual exchange stop waiting for a peer
    for (ncclComm_t& c : comms_) {
      if (c == nullptr) continue;
      {
        std::lock_guard lock(g_aborted_mu);
        g_aborted_comms.insert(c);
      }
      ncclCommAbort(c);
      c = nullptr;
    }
  }

 private:
  std::vector<ncclComm_t> comms_;
  ExchangeAbortFlag abort_flag_;
};

}  // namespace

void nccl_all_reduce_sum(void* comm, float* data, size_t n, cudaStream_t stream) {
  check_nccl(ncclAllReduce(data, data, n, ncclFloat32, ncclSum, static_cast<ncclComm_t>(comm), stream), "all-reduce");
}

void nccl_all_gather(void* comm, const float* in, float* out, size_t n, cudaStream_t stream) {
  check_nccl(ncclAllGather(in, out, n, ncclFloat32, static_cast<ncclComm_t>(comm), stream), "all-gather");
}

DeviceBuffer nccl_symmetric_buffer(void* comm, size_t bytes, const char* what, void** window_out) {
  void* ptr = nullptr;
  const ncclResult_t alloc = ncclMemAlloc(&ptr, bytes);
  if (alloc != ncclSuccess) {
    throw std::runtime_error(std::string("ncclMemAlloc of ") + std::to_string(bytes) + " bytes for " + what + ": " +
                             ncclGetErrorString(alloc));
  }
  ncclWindow_t window = nullptr;
  const ncclResult_t reg =
      ncclCommWindowRegister(static_cast<ncclComm_t>(comm), ptr, bytes, &window, NCCL_WIN_COLL_SYMMETRIC);
  if (reg != ncclSuccess) {
    ncclMemFree(ptr);
    throw std::runtime_error(std::string("NCCL window registration of ") + what + ": " + ncclGetErrorString(reg));
  }
  if (window_out != nullptr) *window_out = window;
  return DeviceBuffer::adopt(ptr, bytes, [comm, window](void* p) {
    if (!comm_aborted(comm)) ncclCommWindowDeregister(static_cast<ncclComm_t>(comm), window);
    ncclMemFree(p);
  });
}

}  // namespace cuda

std::unique_ptr<Backend> make_cuda_tensor_parallel_backend(const BackendOptions& options,
                                                           const ModelConfig* random_config, uint64_t seed) {
  // NVLink SHARP (multicast) stays off unless the user asked for it: the GPU machines' notes
  // say it is not to be used there, and the decode all-reduces are latency-bound anyway.
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  const int32_t size = options.tensor_parallel_size;
  return make_tensor_parallel_backend(
      size,
      [options, random = random_config != nullptr, config = random_config != nullptr ? *random_config : ModelConfig{},
       seed](const RankContext& rank) {
        return random ? std::make_unique<cuda::CudaBackend>(options, config, seed + rank.rank, rank)
                      : std::make_unique<cuda::CudaBackend>(options, rank);
      },
      std::make_unique<cuda::NcclHooks>(size));
}

#else

namespace cuda {
DeviceBuffer nccl_symmetric_buffer(void*, size_t, const char*, void**) {
  throw std::runtime_error("this build has no NCCL: tensor parallelism on CUDA is unavailable");
}
void nccl_all_reduce_sum(void*, float*, size_t, cudaStream_t) {
  throw std::runtime_error("this build has no NCCL: tensor parallelism on CUDA is unavailable");
}
void nccl_all_gather(void*, const float*, float*, size_t, cudaStream_t) {
  throw std::runtime_error("this build has no NCCL: tensor parallelism on CUDA is unavailable");
}
}  // namespace cuda
std::unique_ptr<Backend> make_cuda_tensor_parallel_backend(const BackendOptions&, const ModelConfig*, uint64_t) {
  throw std::runtime_error("tensor_parallel_size > 1 on CUDA needs NCCL, which this build did not find");
}

#endif

}  // namespace zinfer::gpu
