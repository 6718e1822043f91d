// A read-only stream over a buffer far beyond L2: the rate at which the SMs can pull bytes from
// HBM when nothing is written back, by two kinds of load. The copy ceiling (device_ceilings.cpp)
// counts a read and a write per byte; a decode step only reads weights, so this is the rate its
// GEMVs stream toward.
//   ldg:  every thread keeps U 16-byte loads in flight (as the GEMV's register batches)
//   bulk: one thread per block keeps S bulk copies (cp.async.bulk, the TMA engine) of C bytes in
//         flight into a shared-memory ring; the block reads each chunk from shared memory
#include "tools/gpu/read_stream.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "gpu/cuda/async_copy.cuh"
#include "gpu/cuda/cuda_check.h"
#include "gpu/cuda/device_memory.h"
#include "gpu/cuda/gemv/gemv_register_kernel.cuh"
#include "gpu/cuda/stream_timer.h"

namespace zinfer::gpu::cuda::bench {
namespace {

constexpr int kThreads = 256;

// The GEMV's own weight load (16 bytes, not allocated in L1), so this stream measures its load kind.
__device__ __forceinline__ uint4 load_streaming(const uint4* p) {
  return gemv_detail::load_weights(reinterpret_cast<const __nv_bfloat16*>(p));
}

// Each thread xors what it reads; the sink is written only if the xor hits a value the fill
// does not give, so the loads cannot be dropped and nothing is written in practice.
template <int U>
__global__ void __launch_bounds__(kThreads) ldg_kernel(const uint4* data, int64_t n, uint32_t* sink) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  uint32_t acc = 0;
  int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  for (; i + (U - 1) * stride < n; i += U * stride) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = load_streaming(data + i + u * stride);
#pragma unroll
    for (int u = 0; u < U; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < n; i += stride) {
    const uint4 v = load_streaming(data + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) *sink = acc;
}

// Chunk c of the block's sequence into ring slot c % S, completing on that slot's barrier. The
// sequence: chunks blockIdx.x, blockIdx.x + gridDim.x, ... (the grid sweeps the buffer together),
// or with kContiguous the block's own stretch of chunks / gridDim.x chunks (the rest is not read).
template <int S, int C, bool kContiguous>
__global__ void __launch_bounds__(kThreads) bulk_kernel(const unsigned char* data, int64_t chunks, uint32_t* sink) {
  extern __shared__ __align__(128) unsigned char ring[];
  __shared__ __align__(8) uint64_t full[S];
  const int64_t mine = kContiguous ? chunks / gridDim.x : chunks > blockIdx.x ? (chunks - 1 - blockIdx.x) / gridDim.x + 1 : 0;
  auto issue = [&](int64_t c) {
    const uint32_t bar = smem_u32(&full[c % S]);
    mbar_arrive_expect_tx(bar, C);
    const int64_t index = kContiguous ? (chunks / gridDim.x) * blockIdx.x + c : blockIdx.x + c * gridDim.x;
    const unsigned char* src = data + index * static_cast<int64_t>(C);
    bulk_copy_to_shared(smem_u32(ring + (c % S) * C), src, C, bar);
  };
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) mbar_init(smem_u32(&full[s]), 1);
    mbar_init_fence();
    for (int64_t c = 0; c < S && c < mine; ++c) issue(c);
  }
  __syncthreads();
  uint32_t acc = 0;
  for (int64_t c = 0; c < mine; ++c) {
    mbar_wait(smem_u32(&full[c % S]), static_cast<uint32_t>((c / S) & 1));
    const uint4* chunk = reinterpret_cast<const uint4*>(ring + (c % S) * C);
    for (int i = threadIdx.x; i < C / 16; i += kThreads) {
      const uint4 v = chunk[i];
      acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    __syncthreads();  // every thread is done with slot c % S before it is refilled
    if (threadIdx.x == 0 && c + S < mine) issue(c + S);
  }
  if (acc == 0x9e3779b9u) *sink = acc;
}

// GB/s of `bytes` read per launch(), over 20 launches back to back after 3: a stream's rate, so
// one kernel's ramp and tail overlap the next (bench_common.h's time_ms times each launch alone,
// ramp and tail included, which reads lower on launches this short; docs/benchmarks/gpu.md).
template <typename Launch>
double timed_gbps(size_t bytes, cudaStream_t stream, Launch launch) {
  StreamTimer timer;
  for (int i = 0; i < 3; ++i) launch();
  constexpr int kRuns = 20;
  timer.start(stream);
  for (int i = 0; i < kRuns; ++i) launch();
  const float ms = timer.stop_ms(stream);
  return static_cast<double>(bytes) * kRuns / (ms * 1e-3) / 1e9;
}

template <int U>
ReadStreamResult ldg(const void* data, size_t bytes, uint32_t* sink, int sms, int blocks_per_sm, cudaStream_t stream) {
  const int64_t n = static_cast<int64_t>(bytes / 16);
  const double gbps = timed_gbps(bytes, stream, [&] {
    ldg_kernel<U><<<sms * blocks_per_sm, kThreads, 0, stream>>>(static_cast<const uint4*>(data), n, sink);
    check_cuda(cudaGetLastError(), "ldg stream launch");
  });
  return {"ldg_u" + std::to_string(U) + "_b" + std::to_string(blocks_per_sm), gbps};
}

template <int S, int C, bool kContiguous = false>
ReadStreamResult bulk(const void* data, size_t bytes, uint32_t* sink, int sms, int blocks_per_sm, cudaStream_t stream) {
  const int64_t chunks = static_cast<int64_t>(bytes / C);
  const int grid = sms * blocks_per_sm;
  const int64_t read = kContiguous ? chunks / grid * grid : chunks;
  check_cuda(cudaFuncSetAttribute(bulk_kernel<S, C, kContiguous>, cudaFuncAttributeMaxDynamicSharedMemorySize, S * C),
             "bulk smem opt-in");
  const double gbps = timed_gbps(static_cast<size_t>(read) * C, stream, [&] {
    bulk_kernel<S, C, kContiguous><<<grid, kThreads, S * C, stream>>>(static_cast<const unsigned char*>(data),
                                                                        chunks, sink);
    check_cuda(cudaGetLastError(), "bulk stream launch");
  });
  return {std::string(kContiguous ? "bulk_contiguous_s" : "bulk_s") + std::to_string(S) + "_c" + std::to_string(C / 1024) + "k_b" + std::to_string(blocks_per_sm),
          gbps};
}

}  // namespace

std::vector<ReadStreamResult> read_stream_rates(size_t bytes, cudaStream_t stream) {
  DeviceBuffer buffer(bytes, "read stream buffer"), sink_buffer(sizeof(uint32_t), "read stream sink");
  check_cuda(cudaMemsetAsync(buffer.get(), 0x5a, bytes, stream), "read stream fill");
  const void* data = buffer.get();
  auto* sink = sink_buffer.as<uint32_t>();
  const int sms = std::max(1, gemv_detail::sm_count());
  // Depths around what the GEMV keeps in flight (2 blocks x 256 threads x 8-16 loads of 16 bytes
  // per SM); the bulk rings hold 64-192 KB per SM, in chunks interleaved across blocks or, as a
  // GEMV block reads its rows, one contiguous stretch per block.
  std::vector<ReadStreamResult> r;
  r.push_back(ldg<8>(data, bytes, sink, sms, 2, stream));
  r.push_back(ldg<16>(data, bytes, sink, sms, 2, stream));
  r.push_back(ldg<4>(data, bytes, sink, sms, 8, stream));
  r.push_back(bulk<4, 16384>(data, bytes, sink, sms, 1, stream));
  r.push_back(bulk<4, 16384>(data, bytes, sink, sms, 2, stream));
  r.push_back(bulk<4, 16384, true>(data, bytes, sink, sms, 2, stream));
  r.push_back(bulk<4, 32768>(data, bytes, sink, sms, 1, stream));
  r.push_back(bulk<3, 65536>(data, bytes, sink, sms, 1, stream));
  return r;
}

}  // namespace zinfer::gpu::cuda::bench
