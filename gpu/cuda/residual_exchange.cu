// residual_exchange.h: the group's memory (NCCL's symmetric window and its peers' addresses) and
// the abort flag.
#include "gpu/cuda/residual_exchange.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "gpu/cuda/cuda_check.h"
#include "gpu/cuda/nccl_group.h"

#if ZINFER_HAVE_NCCL
#include <nccl.h>
#include <nccl_device.h>
#endif

namespace zinfer::gpu::cuda {

namespace {

#if ZINFER_HAVE_NCCL
// NCCL's device API gives each rank's address of the window (its flat mapping of the group's
// memory): out[r] = rank r's window base, as this device addresses it.
__global__ void peer_bases_kernel(ncclWindow_t window, int size, void** out) {
  for (int r = 0; r < size; ++r) out[r] = ncclGetPeerPointer(window, 0, r);
}
#endif

}  // namespace

#if ZINFER_HAVE_NCCL

bool ResidualExchange::possible(void* comm, int32_t size) {
  return size >= 1 && size <= kExchangeMaxRanks && ncclTeamLsa(static_cast<ncclComm_t>(comm)).nRanks == size;
}

ResidualExchange::ResidualExchange(void* comm, int32_t rank, int32_t size, size_t capacity,
                                   const volatile uint32_t* aborted) {
  if (size < 1 || size > kExchangeMaxRanks) {
    throw std::invalid_argument("the residual exchange takes 1 to " + std::to_string(kExchangeMaxRanks) + " ranks");
  }
  if (!possible(comm, size)) throw std::runtime_error("the residual exchange needs every rank's memory load/store accessible");
  const size_t bytes = 2 * static_cast<size_t>(size) * capacity * sizeof(uint64_t);
  void* window = nullptr;
  window_ = nccl_symmetric_buffer(comm, bytes, "residual exchange", &window);
  counters_ = DeviceBuffer(64, "residual exchange counters");

  DeviceBuffer bases(kExchangeMaxRanks * sizeof(void*), "residual exchange peer addresses");
  peer_bases_kernel<<<1, 1>>>(static_cast<ncclWindow_t>(window), size, bases.as<void*>());
  check_cuda(cudaGetLastError(), "peer addresses of the residual exchange");
  void* host[kExchangeMaxRanks] = {};
  check_cuda(cudaMemcpy(host, bases.get(), size * sizeof(void*), cudaMemcpyDeviceToHost),
             "peer addresses of the residual exchange");
  for (int32_t r = 0; r < size; ++r) {
    view_.stage[r] = static_cast<uint64_t*>(host[r]);
  }
  auto* counters = counters_.as<unsigned char>();
  view_.pushed = reinterpret_cast<uint64_t*>(counters);
  view_.started_blocks = reinterpret_cast<uint32_t*>(counters + 8);
  view_.aborted = aborted;
  view_.rank = rank;
  reset();
  view_.size = size;
  view_.capacity = static_cast<uint32_t>(capacity);
}

void ResidualExchange::reset() {
  check_cuda(cudaMemset(window_.get(), 0, window_.bytes()), "cudaMemset (residual exchange)");
  check_cuda(cudaMemset(counters_.get(), 0, counters_.bytes()), "cudaMemset (residual exchange counters)");
  check_cuda(cudaDeviceSynchronize(), "residual exchange reset");
  issued_ = 0;
}

#else

bool ResidualExchange::possible(void*, int32_t) { return false; }

ResidualExchange::ResidualExchange(void*, int32_t, int32_t, size_t, const volatile uint32_t*) {
  throw std::runtime_error("this build has no NCCL: the residual exchange is unavailable");
}

#endif

ResidualExchange::~ResidualExchange() = default;

ExchangeAbortFlag::ExchangeAbortFlag() {
  void* p = nullptr;
  check_cuda(cudaHostAlloc(&p, sizeof(uint32_t), cudaHostAllocMapped | cudaHostAllocPortable),
             "cudaHostAlloc (tensor-parallel abort flag)");
  host_ = static_cast<volatile uint32_t*>(p);
  *host_ = 0;
  void* device = nullptr;
  check_cuda(cudaHostGetDevicePointer(&device, p, 0), "cudaHostGetDevicePointer (tensor-parallel abort flag)");
  device_ = static_cast<const volatile uint32_t*>(device);
}

ExchangeAbortFlag::~ExchangeAbortFlag() { cudaFreeHost(const_cast<uint32_t*>(host_)); }

void ExchangeAbortFlag::raise() { *host_ = 1; }

}  // namespace zinfer::gpu::cuda
