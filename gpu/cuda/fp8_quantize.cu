// The activation quantization of fp8_kernels.h for x (or the gated MLP's silu(gate) · up), by
// (row, group) items, each read once and held in registers between its amax and its codes:
//   - groups of up to 1,024 inputs (block-wise layers' 1 x 128 groups, rows of small models):
//     kLanes lanes of a warp per item (8, 16 or 32), so that a 128-input group keeps 16 lanes busy
//     with one 16-byte load each instead of idling half a warp;
//   - wider groups (a whole row of a per-token scale) up to 1,024 · 8 · 4 inputs: blocks of 256 to
//     1,024 threads as many as the GPU holds at once, each walking items a grid apart, VPT 16-byte
//     loads per thread, one block reduction per item, and the next item's bytes fetched before the
//     current one's values are computed (a block's reduction and codes would otherwise leave HBM
//     idle: the gated rows, which compute silu once per input, ran at 0.46 of the copy rate). Wide
//     rows take more threads rather than more vectors per thread (fewer registers a thread);
//   - whole rows (a per-token scale) whose bytes fit a shared-memory ring at least two rows deep:
//     the ring kernel, each block walking the rows a grid apart with the rows after the current one
//     in flight into the ring by the bulk copy engine. The row kernel holds one row's bytes in flight
//     per block, in registers; at 57 KB a row (the gated rows of an 8B model, one 1,024-thread block
//     per SM) each SM then waits out HBM's latency between rows and the kernel read at 0.67 of the
//     copy rate. A bulk copy is one instruction per row and holds no registers;
//   - anything else (wider rows, K or groups not multiples of 8, unaligned x): a block per item in
//     two passes (amax, then codes, the row then in L1/L2), scalar loads where vectors cannot be.
#include "gpu/cuda/fp8_kernels.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpu/cuda/async_copy.cuh"
#include "gpu/cuda/fp8_quantize.cuh"
#include "gpu/cuda/resident_blocks.h"
#include "gpu/cuda/shared_memory_opt_in.cuh"

namespace zinfer::gpu::cuda {
namespace {

using namespace fp8_quantize_detail;

// The lanes kernel: a lane holds up to kWarpVectors 16-byte loads of its item's inputs.
constexpr int kWarpVectors = 4;
constexpr int kWarpInputs = 32 * 8 * kWarpVectors;

template <int kLanes>
__device__ __forceinline__ float lanes_max(float a) {
  for (int off = kLanes / 2; off > 0; off >>= 1) a = fmaxf(a, __shfl_xor_sync(0xffffffffu, a, off));
  return a;
}

template <int kLanes, typename Rows>
__global__ void __launch_bounds__(kThreads) fp8_quantize_lanes_kernel(const Rows x, int32_t M, int32_t K,
                                                                      int32_t group, int32_t groups,
                                                                      float static_scale,
                                                                      __nv_fp8_e4m3* __restrict__ x_q,
                                                                      __half* __restrict__ x_f16,
                                                                      float* __restrict__ s_x, bool by_group) {
  const int64_t thread = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  const int64_t items = static_cast<int64_t>(M) * groups, item = thread / kLanes;
  if ((thread & ~int64_t{31}) / kLanes >= items) return;  // whole warps leave together (the shuffles)
  const bool valid = item < items;
  const int sub = threadIdx.x % kLanes;
  const auto [m, g, k0, k1] = valid ? item_at(item, groups, group, K) : Item{0, 0, 0, 0};
  Inputs<8> e[kWarpVectors];
  float a = 0.f;
#pragma unroll
  for (int i = 0; i < kWarpVectors; ++i) {
    const int32_t k = k0 + (i * kLanes + sub) * 8;
    if (k < k1) {
      e[i] = x.template load<8>(m, k);
      a = amax_of(e[i], a);
    }
  }
  const float s = static_scale > 0.f ? static_scale : dynamic_scale(lanes_max<kLanes>(a));
  if (!valid) return;
  if (sub == 0) s_x[scale_index(m, g, M, groups, by_group)] = s;
  const float inv_s = inverse_scale(s);
  const size_t row = static_cast<size_t>(m) * K;
#pragma unroll
  for (int i = 0; i < kWarpVectors; ++i) {
    const int32_t k = k0 + (i * kLanes + sub) * 8;
    if (k < k1) write_codes(e[i], inv_s, row + k, x_q, x_f16);
  }
}

template <int THREADS, int VPT, typename Rows>
__global__ void __launch_bounds__(THREADS) fp8_quantize_row_kernel(const Rows x, int32_t M, int32_t K, int32_t group,
                                                                   int32_t groups, float static_scale,
                                                                   __nv_fp8_e4m3* __restrict__ x_q,
                                                                   __half* __restrict__ x_f16,
                                                                   float* __restrict__ s_x, bool by_group) {
  __shared__ float scratch[THREADS / 32];
  using Raw = typename Rows::Raw;
  const int64_t items = static_cast<int64_t>(M) * groups;
  auto fetch = [&](int64_t item, Raw (&raw)[VPT]) {
    const auto [m, g, k0, k1] = item_at(item, groups, group, K);
#pragma unroll
    for (int i = 0; i < VPT; ++i) {
      const int32_t k = k0 + (i * THREADS + threadIdx.x) * 8;
      if (k < k1) raw[i] = x.fetch(m, k);
    }
  };
  // The next item's bytes are in flight while this one's values, amax and codes are computed; at
  // four vectors a thread the two sets would not fit a 1,024-thread block's 64 registers a thread.
  constexpr bool kAhead = VPT <= 2;
  Raw raw[VPT], next[kAhead ? VPT : 1];
  if (kAhead && blockIdx.x < items) fetch(blockIdx.x, raw);
  for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    if constexpr (kAhead) {
      if (item + gridDim.x < items) fetch(item + gridDim.x, next);
    } else {
      fetch(item, raw);
    }
    const auto [m, g, k0, k1] = item_at(item, groups, group, K);
    Inputs<8> e[VPT];
    float a = 0.f;
#pragma unroll
    for (int i = 0; i < VPT; ++i) {
      const int32_t k = k0 + (i * THREADS + threadIdx.x) * 8;
      if (k < k1) {
        e[i] = Rows::values(raw[i]);
        a = amax_of(e[i], a);
      }
    }
    const float s = static_scale > 0.f ? static_scale : dynamic_scale(block_reduce<THREADS>(a, scratch, true));
    if (threadIdx.x == 0) s_x[scale_index(m, g, M, groups, by_group)] = s;
    const float inv_s = inverse_scale(s);
    const size_t row = static_cast<size_t>(m) * K;
#pragma unroll
    for (int i = 0; i < VPT; ++i) {
      const int32_t k = k0 + (i * THREADS + threadIdx.x) * 8;
      if (k < k1) write_codes(e[i], inv_s, row + k, x_q, x_f16);
      if constexpr (kAhead) raw[i] = next[i];
    }
  }
}

// The ring: kRingStages at most, within kRingBytes of shared memory (an SM has 227 KB; 3 stages of
// a 57 KB gated row), each stage a row's bytes rounded up to 128.
constexpr int kRingStages = 4;
constexpr uint32_t kRingBytes = 200 * 1024;

// A row's bytes: K bf16, or 2 · K for the gated rows (gate, up).
__host__ __device__ inline uint32_t ring_row_bytes(int32_t K, int row_widths) {
  return static_cast<uint32_t>(row_widths) * K * sizeof(__nv_bfloat16);
}
__host__ __device__ inline uint32_t ring_stride(uint32_t row_bytes) { return (row_bytes + 127u) / 128u * 128u; }
inline int ring_stages(uint32_t row_bytes) {
  return static_cast<int>(std::min<uint32_t>(kRingStages, kRingBytes / ring_stride(row_bytes)));
}

template <int THREADS, int VPT, typename Rows>
__global__ void __launch_bounds__(THREADS) fp8_quantize_ring_kernel(const Rows x, int32_t M, int32_t K, int stages,
                                                                    float static_scale,
                                                                    __nv_fp8_e4m3* __restrict__ x_q,
                                                                    __half* __restrict__ x_f16,
                                                                    float* __restrict__ s_x) {
  extern __shared__ __align__(128) unsigned char ring[];
  __shared__ float scratch[THREADS / 32];
  __shared__ __align__(8) uint64_t full[kRingStages];  // stage s holds its row (the bulk copy landed)
  const uint32_t row_bytes = ring_row_bytes(K, Rows::kRowWidths);
  const uint32_t stride = ring_stride(row_bytes);
  auto take = [&](int64_t m, int stage) {  // thread 0: row m into the stage
    if (m >= M) return;
    const uint32_t bar = smem_u32(&full[stage]);
    mbar_arrive_expect_tx(bar, row_bytes);
    bulk_copy_to_shared(smem_u32(ring + stage * stride), x.row(static_cast<int32_t>(m)), row_bytes, bar);
  };
  if (threadIdx.x == 0) {
    for (int i = 0; i < stages; ++i) mbar_init(smem_u32(&full[i]), 1);
    mbar_init_fence();
    for (int i = 0; i < stages; ++i) take(blockIdx.x + static_cast<int64_t>(i) * gridDim.x, i);
  }
  __syncthreads();
  int stage = 0;
  uint32_t parity = 0;
  for (int64_t m = blockIdx.x; m < M; m += gridDim.x) {
    mbar_wait(smem_u32(&full[stage]), parity);
    const Rows staged = x.rebased(reinterpret_cast<const __nv_bfloat16*>(ring + stage * stride));
    Inputs<8> e[VPT];
    float a = 0.f;
#pragma unroll
    for (int i = 0; i < VPT; ++i) {
      const int32_t k = (i * THREADS + threadIdx.x) * 8;
      if (k < K) {
        e[i] = Rows::values(staged.fetch(0, k));
        a = amax_of(e[i], a);
      }
    }
    // The reduction's barrier is also the stage's release: every thread has its values in registers.
    const float s = static_scale > 0.f ? static_scale : dynamic_scale(block_reduce<THREADS>(a, scratch, true));
    if (static_scale > 0.f) __syncthreads();
    if (threadIdx.x == 0) {
      take(m + static_cast<int64_t>(stages) * gridDim.x, stage);
      s_x[m] = s;
    }
    const float inv_s = inverse_scale(s);
    const size_t row = static_cast<size_t>(m) * K;
#pragma unroll
    for (int i = 0; i < VPT; ++i) {
      const int32_t k = (i * THREADS + threadIdx.x) * 8;
      if (k < K) write_codes(e[i], inv_s, row + k, x_q, x_f16);
    }
    if (++stage == stages) {
      stage = 0;
      parity ^= 1u;
    }
  }
}

template <int V, typename Rows>
__global__ void __launch_bounds__(kThreads) fp8_quantize_two_pass_kernel(const Rows x, int32_t M, int32_t K,
                                                                         int32_t group, int32_t groups,
                                                                         float static_scale,
                                                                         __nv_fp8_e4m3* __restrict__ x_q,
                                                                         __half* __restrict__ x_f16,
                                                                         float* __restrict__ s_x, bool by_group) {
  __shared__ float scratch[kThreads / 32];
  const auto [m, g, k0, k1] = item_at(blockIdx.x, groups, group, K);
  const size_t row = static_cast<size_t>(m) * K;
  float s = static_scale;
  if (!(static_scale > 0.f)) {
    float a = 0.f;
    for (int32_t k = k0 + threadIdx.x * V; k < k1; k += kThreads * V) a = amax_of(x.template load<V>(m, k), a);
    s = dynamic_scale(block_reduce(a, scratch, true));
  }
  if (threadIdx.x == 0) s_x[scale_index(m, g, M, groups, by_group)] = s;
  const float inv_s = inverse_scale(s);
  for (int32_t k = k0 + threadIdx.x * V; k < k1; k += kThreads * V)
    write_codes(x.template load<V>(m, k), inv_s, row + k, x_q, x_f16);
}

struct Launch {
  int32_t M, K, group, groups;
  float static_scale;
  __nv_fp8_e4m3* x_q;
  __half* x_f16;
  float* s_x;
  bool by_group;
  cudaStream_t stream;
};

template <int kLanes, typename Rows>
void lanes(const Rows& rows, const Launch& l) {
  const int64_t threads = static_cast<int64_t>(l.M) * l.groups * kLanes;
  const unsigned blocks = static_cast<unsigned>((threads + kThreads - 1) / kThreads);
  fp8_quantize_lanes_kernel<kLanes><<<blocks, kThreads, 0, l.stream>>>(rows, l.M, l.K, l.group, l.groups,
                                                                       l.static_scale, l.x_q, l.x_f16, l.s_x,
                                                                       l.by_group);
}

// A grid of the blocks the GPU holds at once (each walks items gridDim apart), or one per item.
template <int THREADS, int VPT, typename Rows>
void row(const Rows& rows, const Launch& l) {
  auto kernel = fp8_quantize_row_kernel<THREADS, VPT, Rows>;
  static const int resident = resident_blocks(kernel, THREADS);
  const int64_t items = static_cast<int64_t>(l.M) * l.groups;
  const unsigned blocks = static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(items, resident)));
  kernel<<<blocks, THREADS, 0, l.stream>>>(rows, l.M, l.K, l.group, l.groups, l.static_scale, l.x_q, l.x_f16, l.s_x,
                                          l.by_group);
}

// Whole rows through a ring of `stages` rows: false (nothing launched) where the device refuses
// the ring's shared memory.
template <int THREADS, int VPT, typename Rows>
bool ring(const Rows& rows, const Launch& l, int stages) {
  auto kernel = fp8_quantize_ring_kernel<THREADS, VPT, Rows>;
  const size_t bytes = static_cast<size_t>(stages) * ring_stride(ring_row_bytes(l.K, Rows::kRowWidths));
  static std::atomic<uint64_t> opted_in{0};
  if (opt_in_shared_memory(kernel, opted_in, [](int* size) {
        *size = static_cast<int>(kRingBytes);
        return cudaSuccess;
      }) != cudaSuccess)
    return false;
  // The blocks an SM holds depend on the ring's bytes: one count per row width asked (a handful).
  static std::mutex mutex;
  static std::vector<std::pair<size_t, int>> known;
  int resident = 0;
  {
    const std::lock_guard lock(mutex);
    const auto it = std::find_if(known.begin(), known.end(), [&](const auto& k) { return k.first == bytes; });
    resident = it != known.end() ? it->second : known.emplace_back(bytes, resident_blocks(kernel, THREADS, bytes)).second;
  }
  const unsigned blocks = static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(l.M, resident)));
  kernel<<<blocks, THREADS, bytes, l.stream>>>(rows, l.M, l.K, stages, l.static_scale, l.x_q, l.x_f16, l.s_x);
  return true;
}

// f(THREADS, VPT) as integral constants, for the block shapes fp8_quantize_launch names.
template <typename F>
void with_block(const Fp8QuantizeLaunch& c, F&& f) {
  using std::integral_constant;
  if (c.threads == 256) f(integral_constant<int, 256>{}, integral_constant<int, 2>{});
  else if (c.threads == 512) f(integral_constant<int, 512>{}, integral_constant<int, 2>{});
  else if (c.vectors == 2) f(integral_constant<int, 1024>{}, integral_constant<int, 2>{});
  else f(integral_constant<int, 1024>{}, integral_constant<int, 4>{});
}

template <int V, typename Rows>
void two_pass(const Rows& rows, const Launch& l) {
  fp8_quantize_two_pass_kernel<V><<<static_cast<unsigned>(l.M * l.groups), kThreads, 0, l.stream>>>(
      rows, l.M, l.K, l.group, l.groups, l.static_scale, l.x_q, l.x_f16, l.s_x, l.by_group);
}

template <typename Rows>
cudaError_t launch_quantize(const Rows& rows, bool aligned, int32_t M, int32_t K, int32_t group, float static_scale,
                            __nv_fp8_e4m3* x_q, float* s_x, cudaStream_t stream, __half* x_f16, Fp8ScaleOrder order) {
  if (M == 0) return cudaSuccess;
  if (x_q == nullptr && x_f16 == nullptr) return cudaErrorInvalidValue;
  const Launch l{M, K, group, (K + group - 1) / group, static_scale, x_q, x_f16, s_x,
                 order == Fp8ScaleOrder::kByGroup, stream};
  // The vector kernels need every 8 inputs' bytes aligned: rows and groups start on multiples of 8.
  const bool vectors = aligned && K % 8 == 0 && group % 8 == 0 && aligned16(x_f16) &&
                       reinterpret_cast<uintptr_t>(x_q) % 8 == 0;
  const Fp8QuantizeLaunch c = fp8_quantize_launch(K, group, vectors, Rows::kRowWidths == 2);
  switch (c.kernel) {
    case Fp8QuantizeKernel::kTwoPassScalar: two_pass<1>(rows, l); break;
    case Fp8QuantizeKernel::kTwoPassVectors: two_pass<8>(rows, l); break;
    case Fp8QuantizeKernel::kLanes:
      if (c.threads == 8) lanes<8>(rows, l);
      else if (c.threads == 16) lanes<16>(rows, l);
      else lanes<32>(rows, l);
      break;
    case Fp8QuantizeKernel::kRing:
    case Fp8QuantizeKernel::kRow:
      with_block(c, [&](auto threads, auto vpt) {
        if (c.kernel == Fp8QuantizeKernel::kRing && ring<threads(), vpt()>(rows, l, c.stages)) return;
        row<threads(), vpt()>(rows, l);  // also where the device refused the ring's shared memory
      });
      break;
  }
  return cudaGetLastError();
}

}  // namespace

Fp8QuantizeLaunch fp8_quantize_launch(int32_t K, int32_t group, bool vectors, bool gated) {
  if (!vectors) return {Fp8QuantizeKernel::kTwoPassScalar};
  const int32_t width = std::min(group, K);  // inputs of the widest item
  if (width <= kWarpInputs) return {Fp8QuantizeKernel::kLanes, width <= 64 ? 8 : width <= 128 ? 16 : 32};
  // Wide rows take more threads rather than more vectors per thread (fewer registers a thread).
  Fp8QuantizeLaunch c{Fp8QuantizeKernel::kRow, 1024, 4};
  if (width <= 256 * 8 * 2) c = {Fp8QuantizeKernel::kRow, 256, 2};
  else if (width <= 512 * 8 * 2) c = {Fp8QuantizeKernel::kRow, 512, 2};
  else if (width <= 1024 * 8 * 2) c = {Fp8QuantizeKernel::kRow, 1024, 2};
  else if (width > 1024 * 8 * 4) return {Fp8QuantizeKernel::kTwoPassVectors};
  const int stages = ring_stages(ring_row_bytes(K, gated ? 2 : 1));
  if (group >= K && stages >= 2) {  // whole rows, two of them in the ring at least
    c.kernel = Fp8QuantizeKernel::kRing;
    c.stages = stages;
  }
  return c;
}

cudaError_t launch_fp8_quantize(const __nv_bfloat16* x, int32_t M, int32_t K, int32_t group, float static_scale,
                                __nv_fp8_e4m3* x_q, float* s_x, cudaStream_t stream, __half* x_f16,
                                Fp8ScaleOrder order) {
  return launch_quantize(PlainRows{x, K}, aligned16(x), M, K, group, static_scale, x_q, s_x, stream, x_f16, order);
}

cudaError_t launch_fp8_silu_mul_quantize(const __nv_bfloat16* gate_up, int32_t M, int32_t inter, int32_t group,
                                         float static_scale, __nv_fp8_e4m3* x_q, float* s_x, cudaStream_t stream,
                                         __half* x_f16, Fp8ScaleOrder order) {
  return launch_quantize(GatedRows{gate_up, inter}, aligned16(gate_up), M, inter, group, static_scale, x_q, s_x,
                         stream, x_f16, order);
}

}  // namespace zinfer::gpu::cuda
