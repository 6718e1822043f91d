// The GEMV kernel template behind gemv.h; each (input, output) variant is instantiated in its own
// .cu file of this folder, for padded row counts 1, 2, 4 and 8.
//
// Work split: two blocks of 8 warps per SM (2 x 256 threads x <= 128 registers fill the register
// file). Two half-size blocks rather than one of 16 warps: an SM whose first block ends takes a
// block of the next kernel (launched programmatically) while its second still streams, so the
// next kernel's first weight loads overlap this one's tail instead of waiting for the whole SM
// to drain (decode at batch 1, Llama-3-8B shapes, H200: 4.37 -> 4.32 ms). Each warp owns whole rows of W: rows warp_id, warp_id + total_warps, ... and streams them
// in batches of 8 16-byte loads per lane (a warp-wide load instruction reads 512 contiguous bytes,
// whole DRAM bursts). Batches are double-buffered in registers, so 8-16 loads (128-256 bytes) per
// lane are in flight: 64-128 KB per SM, above the ~50 KB that ~4.4 TB/s x ~1.5 us of loaded HBM
// latency needs spread over 132 SMs. x[MT, K] sits in shared memory as bf16; consecutive lanes
// read consecutive 16-byte pieces of it, so a warp's read is conflict-free.
// (Measured and left out: a cp.async shared-memory ring of 3 x 4 KB per warp, which sped up the
// plain 33-50 MB matrices but slowed the fused ones and the whole decode step; and warps
// prefetching the next GEMV's first weights into L2 with cp.async.bulk.prefetch, which cost
// 0.28 ms per decode step; and a version streaming W with bulk copies into a shared-memory ring,
// which would have the faster load kind (1.06 of copy for a read-only stream, against 1.01 for
// these loads) but streamed at 0.5-0.7 of copy once it computed: docs/benchmarks/gpu.md.)
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "gpu/cuda/gemv.h"
#include "gpu/cuda/programmatic_launch.cuh"

namespace zinfer::gpu::cuda::gemv_detail {

constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
constexpr int kBlocksPerSm = 2;  // 2 x 256 threads x <= 128 registers fill the register file
constexpr int kLoadsPerBatch = 8;                       // 16-byte loads per lane per batch
constexpr int kChunksPerBatch = 32 * kLoadsPerBatch;    // 8-element chunks of a row per warp batch

struct Params {
  const __nv_bfloat16* x;
  const float* norm_residual;
  const float* norm_weight;
  float norm_eps;
  const __nv_bfloat16* w;
  __nv_bfloat16* y_bf16;
  float* residual_out;
  int32_t m, n, k;
};

// Weight bytes are read exactly once: bypass L1 (keeps x and the activations there) and let L2
// fetch 256-byte blocks (the warp reads 512 contiguous bytes anyway).
__device__ __forceinline__ uint4 load_weights(const __nv_bfloat16* p) {
  uint4 r;
  asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
               : "l"(p));
  return r;
}

// residual += v without waiting for the old value: a reduction the memory system applies, so the
// warp goes on streaming. Each element has one writer, so the sum is the plain float add.
__device__ __forceinline__ void add_to_residual(float* p, float v) {
  asm volatile("red.global.add.f32 [%0], %1;" ::"l"(p), "f"(v) : "memory");
}

// bf16 -> float is a 16-bit shift: two values per 32-bit register.
__device__ __forceinline__ float bf16_lo(uint32_t v) { return __uint_as_float(v << 16); }
__device__ __forceinline__ float bf16_hi(uint32_t v) { return __uint_as_float(v & 0xffff0000u); }
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

__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&v);
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

template <int MT, GemvInput IN, GemvOutput OUT>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm) gemv_kernel(const Params p) {
  constexpr int kHalves = rows_per_output<OUT>();
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ float reduce[kWarps][MT];
  auto* xs = reinterpret_cast<__nv_bfloat16*>(smem);  // [MT, K] bf16
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int K = p.k, outputs = p.n / kHalves, chunks = K / 8;
  const int batches = (chunks + kChunksPerBatch - 1) / kChunksPerBatch;
  const int first = blockIdx.x * kWarps + warp, stride = gridDim.x * kWarps;
  const int my_outputs = first < outputs ? (outputs - 1 - first) / stride + 1 : 0;
  const int steps = my_outputs * kHalves * batches;  // (output, half, batch) of this warp, in order

  auto output_of = [&](int step) { return first + static_cast<int64_t>(step / (kHalves * batches)) * stride; };
  auto w_row_of = [&](int step) {
    const int half = (step / batches) % kHalves;
    return p.w + (output_of(step) + static_cast<int64_t>(half) * outputs) * K;
  };
  auto load = [&](uint4 (&buf)[kLoadsPerBatch], int step) {
    const int c0 = (step % batches) * kChunksPerBatch + lane;
    const __nv_bfloat16* w_row = w_row_of(step);
#pragma unroll
    for (int u = 0; u < kLoadsPerBatch; ++u) {
      const int c = c0 + u * 32;
      buf[u] = c < chunks ? load_weights(w_row + static_cast<int64_t>(c) * 8) : make_uint4(0, 0, 0, 0);
    }
  };

  float acc[MT];
#pragma unroll
  for (int m = 0; m < MT; ++m) acc[m] = 0.f;
  float gate = 0.f;  // kSiluMul: lane m's gate total of the current pair

  auto consume = [&](const uint4 (&buf)[kLoadsPerBatch], int step) {
    const int batch = step % batches;
    const int c0 = batch * kChunksPerBatch + lane;
#pragma unroll
    for (int u = 0; u < kLoadsPerBatch; ++u) {
      const int c = c0 + u * 32;
      if (c < chunks) {
#pragma unroll
        for (int m = 0; m < MT; ++m) {
          const uint4 xv = reinterpret_cast<const uint4*>(xs + static_cast<int64_t>(m) * K)[c];
          acc[m] = dot8(buf[u], xv, acc[m]);
        }
      }
    }
    if (batch != batches - 1) return;
    // A row of W is done: butterfly sums leave every lane with all MT totals; lane m keeps row m's.
    float mine = 0.f;
#pragma unroll
    for (int m = 0; m < MT; ++m) {
      float v = acc[m];
      for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
      if (lane == m) mine = v;
      acc[m] = 0.f;
    }
    const int64_t at = static_cast<int64_t>(lane) * outputs + output_of(step);
    if constexpr (OUT == GemvOutput::kBf16) {
      if (lane < p.m) p.y_bf16[at] = __float2bfloat16(mine);
    } else if constexpr (OUT == GemvOutput::kAddToResidual) {
      if (lane < p.m) add_to_residual(p.residual_out + at, mine);
    } else {
      if ((step / batches) % 2 == 0) {
        gate = mine;
      } else if (lane < p.m) {
        // silu_mul.cu's float32 expression on the bf16-rounded gate and up.
        const float g = round_bf16(gate), u = round_bf16(mine);
        p.y_bf16[at] = __float2bfloat16(g / (1.f + expf(-g)) * u);
      }
    }
  };

  uint4 wa[kLoadsPerBatch], wb[kLoadsPerBatch];
  // The first two batches of weights are requested before waiting for the previous kernel: they
  // depend on nothing it writes, so they stream in while it finishes (after short kernels such
  // as the decode attention, this block may have started on an idle SM long before).
  if (steps > 0) load(wa, 0);
  if (steps > 1) load(wb, 1);
  wait_for_previous_kernel();
  stage_input<MT, IN>(p, xs, reduce);
  __syncthreads();
  allow_next_kernel();
  for (int s = 0; s < steps; s += 2) {
    if (s > 0 && s + 1 < steps) load(wb, s + 1);
    consume(wa, s);
    if (s + 1 < steps) {
      if (s + 2 < steps) load(wa, s + 2);
      consume(wb, s + 1);
    }
  }
}

inline int sm_count() {
  static const int count = [] {
    int device = 0, sms = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
      return 0;
    }
    return sms;
  }();
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

template <int MT, GemvInput IN, GemvOutput OUT>
cudaError_t launch_padded(const GemvArgs& a, cudaStream_t stream, bool programmatic_launch) {
  auto kernel = gemv_kernel<MT, IN, OUT>;
  static const cudaError_t attribute_status = [&] {
    int device = 0, optin = 0;
    cudaError_t s = cudaGetDevice(&device);
    if (s == cudaSuccess) s = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
    if (s == cudaSuccess) {
      s = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               optin - static_cast<int>(sizeof(float) * kWarps * MT));
    }
    return s;
  }();
  if (attribute_status != cudaSuccess) return attribute_status;
  const Params p{a.x, a.norm_residual, a.norm_weight, a.norm_eps, a.w, a.y_bf16, a.residual_out, a.m, a.n, a.k};
  ProgrammaticLaunch launch(dim3(grid_blocks(a.n / rows_per_output<OUT>())), dim3(kThreads), x_bytes(MT, a.k), stream,
                            programmatic_launch);
  return cudaLaunchKernelEx(&launch.config, kernel, p);
}

// The row count is padded to 1, 2, 4 or 8 (the decode graph buckets); padded rows of x are zero
// and their outputs are not written.
template <GemvInput IN, GemvOutput OUT>
cudaError_t launch_variant(const GemvArgs& a, cudaStream_t stream, bool programmatic_launch) {
  if (a.m <= 1) return launch_padded<1, IN, OUT>(a, stream, programmatic_launch);
  if (a.m <= 2) return launch_padded<2, IN, OUT>(a, stream, programmatic_launch);
  if (a.m <= 4) return launch_padded<4, IN, OUT>(a, stream, programmatic_launch);
  return launch_padded<8, IN, OUT>(a, stream, programmatic_launch);
}

// One per .cu file of this folder (each instantiates its variant's four kernels).
cudaError_t launch_bf16_in_bf16_out(const GemvArgs& a, cudaStream_t stream, bool programmatic_launch);
cudaError_t launch_bf16_in_residual_out(const GemvArgs& a, cudaStream_t stream, bool programmatic_launch);
cudaError_t launch_norm_in_bf16_out(const GemvArgs& a, cudaStream_t stream, bool programmatic_launch);
cudaError_t launch_norm_in_silu_out(const GemvArgs& a, cudaStream_t stream, bool programmatic_launch);

}  // namespace zinfer::gpu::cuda::gemv_detail
