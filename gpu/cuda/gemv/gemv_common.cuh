// What the two GEMV kernels (gemv_register_kernel.cuh, gemv_ring_kernel.cuh) share: the
// parameters, the split of W's rows over warps, the staging of x (with its RMSNorm prologue),
// the dot product of a batch and the epilogues, and the grid.
//
// Work split: two blocks of 8 warps per SM. Two half-size blocks rather than one of 16 warps: an
// SM whose first block ends takes a block of the next kernel (launched programmatically) while
// its second still streams, so the next kernel's first weight loads overlap this one's tail
// instead of waiting for the whole SM to drain. Each warp owns whole rows of W: rows warp_id,
// warp_id + total_warps, ... and streams them in batches of 32 L 16-byte chunks (lane l takes
// chunks l, l + 32, ...; 4 KB in the register kernel, 2 KB in the ring), so every output is
// summed by one warp in a fixed order and both kernels give the same bits.
// x[MT, K] sits in shared memory as bf16; consecutive lanes read consecutive 16-byte pieces of
// it, so a warp's read is conflict-free.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "gpu/cuda/bf16_pairs.cuh"
#include "gpu/cuda/gemv.h"
#include "gpu/cuda/residual_exchange.cuh"
#include "gpu/cuda/resident_blocks.h"
#include "gpu/cuda/silu.cuh"

namespace zinfer::gpu::cuda::gemv_detail {

constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
constexpr int kBlocksPerSm = 2;

struct Params {
  const __nv_bfloat16* x;
  const float* norm_residual;
  const float* norm_weight;
  float norm_eps;
  const __nv_bfloat16* w;
  __nv_bfloat16* y_bf16;
  float* residual_out;
  int32_t m, n, k;
  ExchangeView exchange;  // kExchange
};

inline Params params_of(const GemvArgs& a) {
  return Params{a.x, a.norm_residual, a.norm_weight, a.norm_eps, a.w, a.y_bf16, a.residual_out, a.m, a.n, a.k,
                a.exchange != nullptr ? *a.exchange : ExchangeView{}};
}

// kExchange: the exchange a kernel's partial belongs to and the offset of this rank's slot in
// it, read once the previous kernel is waited for.
struct ExchangeSlot {
  uint64_t exchange = 0;
  size_t offset = 0;
};
template <GemvOutput OUT>
__device__ __forceinline__ ExchangeSlot exchange_slot(const Params& p) {
  if constexpr (OUT != GemvOutput::kExchange) {
    return {};
  } else {
    const uint64_t e = exchange_detail::last_pushed(p.exchange) + 1;
    return {e, exchange_detail::slot_offset(p.exchange, e, p.exchange.rank)};
  }
}

// kExchange, once the block's threads have met behind their reads of the exchange's number
// (thread 0 only; residual_exchange.cuh).
template <GemvOutput OUT>
__device__ __forceinline__ void exchange_started(const Params& p, const ExchangeSlot& slot) {
  if constexpr (OUT == GemvOutput::kExchange) {
    if (threadIdx.x == 0) exchange_detail::block_started(p.exchange, slot.exchange);
  }
}

// kExchange, at the block's end (every thread): residual += every rank's partial of the rows
// this block owns (the split above: rows b * kWarps + w + j * gridDim.x * kWarps, w < kWarps),
// one (row, token) per thread, each waited for until every rank's value has arrived.
template <GemvOutput OUT>
__device__ __forceinline__ void finish_block(const Params& p, const ExchangeSlot& slot) {
  if constexpr (OUT == GemvOutput::kExchange) {
    const int64_t all_groups = (p.n + kWarps - 1) / kWarps;  // groups of kWarps rows; block b owns b, b + grid, ...
    const int64_t groups = all_groups > blockIdx.x ? (all_groups - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
    const int64_t mine = groups * kWarps;
    for (int64_t t = threadIdx.x; t < p.m * mine; t += kThreads) {
      const int64_t i = t / mine, within = t % mine;
      const int64_t row = (blockIdx.x + (within / kWarps) * gridDim.x) * kWarps + within % kWarps;
      if (row < p.n) exchange_detail::settle(p.exchange, slot.exchange, p.residual_out, i * p.n + row);
    }
  }
}

// residual += v without waiting for the old value: a reduction the memory system applies, so the
// warp goes on streaming. Each element has one writer, so the sum is the plain float add.
__device__ __forceinline__ void add_to_residual(float* p, float v) {
  asm volatile("red.global.add.f32 [%0], %1;" ::"l"(p), "f"(v) : "memory");
}

__device__ __forceinline__ float round_bf16(float v) { return __bfloat162float(__float2bfloat16(v)); }

__device__ __forceinline__ float dot8(const uint4& w, const uint4& x, float acc) {
  acc = fmaf(bf16_lo(w.x), bf16_lo(x.x), acc);
  acc = fmaf(bf16_hi(w.x), bf16_hi(x.x), acc);
  acc = fmaf(bf16_lo(w.y), bf16_lo(x.y), acc);
  acc = fmaf(bf16_hi(w.y), bf16_hi(x.y), acc);
  acc = fmaf(bf16_lo(w.z), bf16_lo(x.z), acc);
  acc = fmaf(bf16_hi(w.z), bf16_hi(x.z), acc);
  acc = fmaf(bf16_lo(w.w), bf16_lo(x.w), acc);
  acc = fmaf(bf16_hi(w.w), bf16_hi(x.w), acc);
  return acc;
}

// Stages x[MT, K] (bf16) into shared memory; rows m >= p.m are zero.
template <int MT, GemvInput IN>
__device__ void stage_input(const Params& p, __nv_bfloat16* xs, float (*reduce)[MT]) {
  const int K = p.k, tid = threadIdx.x;
  if constexpr (IN == GemvInput::kBf16) {
    const int vecs = K / 8;  // 16-byte pieces of a row
    const uint4* x4 = reinterpret_cast<const uint4*>(p.x);
    uint4* xs4 = reinterpret_cast<uint4*>(xs);
    for (int i = tid; i < MT * vecs; i += kThreads) xs4[i] = i / vecs < p.m ? x4[i] : make_uint4(0, 0, 0, 0);
  } else {
    // RMSNorm of each row: the row's sum of squares (float32 residual, 16 KB per row from L2),
    // then x = bf16(v * inv_rms * weight) as rmsnorm.cu computes it (a second read of the row).
    const int quads = K / 4;
    float ss[MT];
#pragma unroll
    for (int m = 0; m < MT; ++m) {
      ss[m] = 0.f;
      if (m < p.m) {
        const float4* r4 = reinterpret_cast<const float4*>(p.norm_residual + static_cast<int64_t>(m) * K);
        for (int i = tid; i < quads; i += kThreads) {
          const float4 v = r4[i];
          ss[m] += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
        }
      }
    }
    const int warp = tid / 32, lane = tid % 32;
#pragma unroll
    for (int m = 0; m < MT; ++m) {
      for (int o = 16; o > 0; o >>= 1) ss[m] += __shfl_xor_sync(0xffffffffu, ss[m], o);
      if (lane == 0) reduce[warp][m] = ss[m];
    }
    __syncthreads();
    const float4* w4 = reinterpret_cast<const float4*>(p.norm_weight);
#pragma unroll
    for (int m = 0; m < MT; ++m) {
      uint2* xs2 = reinterpret_cast<uint2*>(xs + static_cast<int64_t>(m) * K);
      if (m >= p.m) {
        for (int i = tid; i < quads; i += kThreads) xs2[i] = make_uint2(0, 0);
        continue;
      }
      float total = 0.f;
      for (int w = 0; w < kWarps; ++w) total += reduce[w][m];
      const float inv_rms = rsqrtf(total / static_cast<float>(K) + p.norm_eps);
      const float4* r4 = reinterpret_cast<const float4*>(p.norm_residual + static_cast<int64_t>(m) * K);
      for (int i = tid; i < quads; i += kThreads) {
        const float4 v = r4[i], w = w4[i];
        xs2[i] = make_uint2(pack_bf16(v.x * inv_rms * w.x, v.y * inv_rms * w.y),
                            pack_bf16(v.z * inv_rms * w.z, v.w * inv_rms * w.w));
      }
    }
  }
}

// Output rows a warp owns: plain rows of W, or for kSiluMul pairs (j, n/2 + j), streamed one
// after the other, the gate total kept in a register until the up total arrives.
template <GemvOutput OUT>
__host__ __device__ constexpr int rows_per_output() {
  return OUT == GemvOutput::kSiluMul ? 2 : 1;
}

// A warp's work as a sequence of steps (output, half, batch), in order: step s is batch
// s % batches of half (s / batches) % halves of the warp's output s / (halves * batches). A batch
// is L 16-byte chunks per lane (32 L chunks of the row); lane l takes chunks l, l + 32, ... of
// the row whatever L is, in the same order, so L does not change the result.
template <GemvOutput OUT, int L>
struct WarpRows {
  static constexpr int kHalves = rows_per_output<OUT>();
  static constexpr int kChunks = 32 * L;
  int k, chunks, batches, outputs, first, stride, steps;

  __device__ WarpRows(const Params& p, int warp) {
    k = p.k;
    chunks = k / 8;
    batches = (chunks + kChunks - 1) / kChunks;
    outputs = p.n / kHalves;
    first = blockIdx.x * kWarps + warp;
    stride = gridDim.x * kWarps;
    const int mine = first < outputs ? (outputs - 1 - first) / stride + 1 : 0;
    steps = mine * kHalves * batches;
  }
  __device__ int64_t output(int step) const { return first + static_cast<int64_t>(step / (kHalves * batches)) * stride; }
  __device__ int half(int step) const { return (step / batches) % kHalves; }
  __device__ int batch(int step) const { return step % batches; }
  __device__ bool last_batch(int step) const { return batch(step) == batches - 1; }
  // The first element of the step's batch in W.
  __device__ const __nv_bfloat16* batch_start(const Params& p, int step) const {
    const int64_t row = output(step) + static_cast<int64_t>(half(step)) * outputs;
    return p.w + row * k + static_cast<int64_t>(batch(step)) * kChunks * 8;
  }
  __device__ int batch_first_chunk(int step) const { return batch(step) * kChunks; }
  // Chunks of the step's batch (kChunks but in a row's last batch).
  __device__ int batch_chunks(int step) const { return min(kChunks, chunks - batch(step) * kChunks); }
};

// acc[m] += W chunk · x[m] chunk for lane's chunks of the batch (w[u] is chunk lane + 32 u).
template <int MT, int L>
__device__ __forceinline__ void accumulate_batch(float (&acc)[MT], const uint4 (&w)[L], const uint4* xs4, int k,
                                                 int batch_first_chunk, int chunks, int lane) {
#pragma unroll
  for (int u = 0; u < L; ++u) {
    const int c = batch_first_chunk + lane + u * 32;
    if (c < chunks) {
#pragma unroll
      for (int m = 0; m < MT; ++m) acc[m] = dot8(w[u], xs4[static_cast<int64_t>(m) * (k / 8) + c], acc[m]);
    }
  }
}

// A row of W is done: butterfly sums leave every lane with all MT totals; lane m keeps row m's
// and writes it as OUT says (kSiluMul: the gate half is kept in `gate` until its up half ends).
template <int MT, GemvOutput OUT>
__device__ __forceinline__ void finish_row(const Params& p, float (&acc)[MT], int lane, int64_t output,
                                           int outputs, int half, float& gate, const ExchangeSlot& slot) {
  float mine = 0.f;
#pragma unroll
  for (int m = 0; m < MT; ++m) {
    float v = acc[m];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if (lane == m) mine = v;
    acc[m] = 0.f;
  }
  const int64_t at = static_cast<int64_t>(lane) * outputs + output;
  if constexpr (OUT == GemvOutput::kBf16) {
    if (lane < p.m) p.y_bf16[at] = __float2bfloat16(mine);
  } else if constexpr (OUT == GemvOutput::kAddToResidual) {
    if (lane < p.m) add_to_residual(p.residual_out + at, mine);
  } else if constexpr (OUT == GemvOutput::kExchange) {
    if (lane < p.m) exchange_detail::push(p.exchange, slot.offset, slot.exchange, at, mine);
  } else {
    if (half == 0) {
      gate = mine;
    } else if (lane < p.m) {
      // silu.cuh's float32 expression on the bf16-rounded gate and up.
      const float g = round_bf16(gate), u = round_bf16(mine);
      p.y_bf16[at] = __float2bfloat16(silu_times(g, u));
    }
  }
}

inline int sm_count() {
  static const int count = device_attribute(cudaDevAttrMultiProcessorCount);
  return count;
}

// Blocks so that every warp owns the same number of outputs (within one): with R per warp,
// ceil(outputs / R) warps, R as small as keeps the grid within kBlocksPerSm blocks per SM.
inline int grid_blocks(int outputs) {
  const int warps_available = std::max(1, sm_count()) * kWarps * kBlocksPerSm;
  const int per_warp = (outputs + warps_available - 1) / warps_available;
  const int warps = (outputs + per_warp - 1) / per_warp;
  return (warps + kWarps - 1) / kWarps;
}

inline size_t x_bytes(int padded_rows, int k) { return static_cast<size_t>(padded_rows) * k * sizeof(__nv_bfloat16); }

inline int padded_rows(int m) { return m <= 1 ? 1 : m <= 2 ? 2 : m <= 4 ? 4 : 8; }

}  // namespace zinfer::gpu::cuda::gemv_detail
