// The kernel of fp8_gemv.h (one row of x), instantiated for one scale group per row and for
// groups of 128 in fp8_gemv_channel.cu and fp8_gemv_block.cu.
//
// Work: W's rows in tiles of 8 (one MMA's A operand holds two halves of a tile's inputs,
// step_products). A block owns `tiles_per_block` consecutive tiles and splits each tile's
// inputs into `slices` ranges of whole ring steps; its warp w takes the (tile, slice) items w,
// w + 8, ... (slices divides 8, so a warp keeps one slice), and each item's float32 sums land in
// shared memory, summed per output at the block's end in slice order (deterministic). The host
// picks tiles_per_block and slices so that a one-wave grid of two blocks per SM gives every warp
// the same bytes (fp8_gemv.cu).
//
// Stream: each warp has kStages slots; step s of its items (8 rows × kStepK inputs) arrives in
// slot s % kStages as 8 bulk copies of one row piece each, completing on the slot's mbarrier, as
// the bf16 GEMV's ring does (gemv_ring_kernel.cuh); the first kStages are issued before the wait
// for the previous kernel. A row piece lands at a stride of kStepK + 64 bytes: a quarter warp's
// 16-byte reads (lanes of two rows, same columns) then fall in different banks.
//
// Arithmetic: Hopper has no warp-level e4m3 MMA (ptxas widens both operands of an e4m3 mma.sync to
// f16 itself), so the kernel widens W's codes with one cvt per two and keeps x's codes as f16 in
// shared memory (exact: e4m3 ⊂ f16, and each product of two codes is exact in the MMA).
//
// Prologue: every block quantizes x itself (the values from their source, the row's amax by a
// block reduction or a group's by 16 lanes, the codes as f16 into shared memory), reading x from
// L2 while the first weight copies are in flight; one kernel fewer per product than a separate
// quantization.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/cuda/async_copy.cuh"
#include "gpu/cuda/bf16_pairs.cuh"
#include "gpu/cuda/e4m3_widen.cuh"
#include "gpu/cuda/fp8/fp8_gemv.h"
#include "gpu/cuda/fp8_quantize.cuh"
#include "gpu/cuda/programmatic_launch.cuh"
#include "gpu/cuda/skinny_mma.cuh"

namespace zinfer::gpu::cuda::fp8_gemv_detail {

constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
constexpr int kBlocksPerSm = 2;
constexpr int kTileRows = 8;                   // W rows per tile: the MMA's n
constexpr int kStepK = 512;                    // inputs (bytes) of a tile row per ring step
constexpr int kHalf = kStepK / 2;              // a step's two halves (the MMA's A rows g and g + 8)
constexpr int kSubSteps = kHalf / 64;          // 64-input sub-steps of a half: four MMAs each
constexpr int kRowStride = kStepK + 64;        // bytes between a slot's rows
constexpr int kSlotBytes = kTileRows * kRowStride;
constexpr int kStages = 2;                     // slots per warp: 8 KB of weights in flight
constexpr int kRingBytes = kWarps * kStages * kSlotBytes;
constexpr int kPieces = 8;                     // 8-input pieces of a row a prologue thread holds
constexpr int kMaxK = kPieces * kThreads * 8;  // 16,384
constexpr int kGroup = 128;                    // the block-wise group

struct Params {
  Fp8GemvArgs a;
  int32_t tiles_per_block = 0, slices = 0;
  int32_t steps = 0;     // ring steps of a whole row: ceil(k / kStepK)
  int32_t x_stride = 0;  // bytes of the staged row of f16 codes: 2k
  int32_t groups = 0;    // 1 (group k), or ceil(k / 128)
};

// Dynamic shared memory: ring [kWarps][kStages][kSlotBytes], x's f16 codes [x_stride], s_x [groups],
// partial sums [tiles_per_block][slices][kTileRows].
inline size_t shared_bytes(const Params& p) {
  return kRingBytes + static_cast<size_t>(p.x_stride) +
         sizeof(float) * (static_cast<size_t>(p.groups) + static_cast<size_t>(p.tiles_per_block) * p.slices * kTileRows);
}

// True in one lane of the (converged) warp, as elect.sync chooses it.
__device__ __forceinline__ bool elect_one() {
  uint32_t elected = 0;
  asm volatile(
      "{\n .reg .pred p;\n elect.sync _|p, 0xffffffff;\n selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(elected));
  return elected != 0;
}

// Eight consecutive inputs of x from the source, as bf16 values (each source's values are bf16
// numbers: x itself, the normed row rounded as rmsnorm.cu rounds it, silu_mul.cu's output).
__device__ __forceinline__ uint4 values8(const Fp8GemvArgs& a, int32_t at, float inv_rms) {
  if (a.input == Fp8GemvInput::kBf16) return *reinterpret_cast<const uint4*>(a.x + at);
  if (a.input == Fp8GemvInput::kGated) {
    const fp8_quantize_detail::GatedRows rows{a.x, a.k};
    const fp8_quantize_detail::Inputs<8> e = rows.values(rows.fetch(0, at));
    return make_uint4(pack_bf16(e.v[0], e.v[1]), pack_bf16(e.v[2], e.v[3]), pack_bf16(e.v[4], e.v[5]), pack_bf16(e.v[6], e.v[7]));
  }
  const float4 r0 = *reinterpret_cast<const float4*>(a.residual + at);
  const float4 r1 = *reinterpret_cast<const float4*>(a.residual + at + 4);
  const float4 w0 = *reinterpret_cast<const float4*>(a.norm_weight + at);
  const float4 w1 = *reinterpret_cast<const float4*>(a.norm_weight + at + 4);
  return make_uint4(pack_bf16(r0.x * inv_rms * w0.x, r0.y * inv_rms * w0.y), pack_bf16(r0.z * inv_rms * w0.z, r0.w * inv_rms * w0.w),
                    pack_bf16(r1.x * inv_rms * w1.x, r1.y * inv_rms * w1.y), pack_bf16(r1.z * inv_rms * w1.z, r1.w * inv_rms * w1.w));
}

__device__ __forceinline__ float amax8(const uint4& v) {
  const uint32_t u[4] = {v.x, v.y, v.z, v.w};
  float a = 0.f;
#pragma unroll
  for (int i = 0; i < 4; ++i) a = fmaxf(a, fmaxf(fabsf(bf16_lo(u[i])), fabsf(bf16_hi(u[i]))));
  return a;
}

// The eight codes of v (fp8_quantize.cuh's code_of) as f16, low input first.
__device__ __forceinline__ uint4 codes8(const uint4& v, float inv_s) {
  using fp8_quantize_detail::code_of;
  const uint32_t u[4] = {v.x, v.y, v.z, v.w};
  uint32_t c[4];
#pragma unroll
  for (int i = 0; i < 4; ++i)
    c[i] = e4m3x2_to_f16x2(static_cast<uint16_t>(code_of(bf16_lo(u[i]), inv_s) | (code_of(bf16_hi(u[i]), inv_s) << 8)));
  return make_uint4(c[0], c[1], c[2], c[3]);
}

// Every thread gets the block's sum (or max) of v; scratch holds a value per warp.
__device__ __forceinline__ float block_reduce(float v, float* scratch, bool max) {
  for (int o = 16; o > 0; o >>= 1) {
    const float other = __shfl_xor_sync(0xffffffffu, v, o);
    v = max ? fmaxf(v, other) : v + other;
  }
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  float r = 0.f;
  for (int w = 0; w < kWarps; ++w) r = max ? fmaxf(r, scratch[w]) : r + scratch[w];
  return r;
}

// x's f16 codes [k] and scales [groups] into shared memory. Thread tid holds pieces tid, tid + 256,
// ... of the row (8 inputs each): a group of 128 inputs is 16 consecutive lanes.
__device__ inline void stage_codes(const Params& p, uint8_t* xs, float* sx, float* sum_scratch, float* max_scratch) {
  using namespace fp8_quantize_detail;
  const Fp8GemvArgs& a = p.a;
  const int tid = threadIdx.x;
  const int32_t pieces = a.k / 8;
  const bool grouped = a.group != a.k;
  float inv_rms = 1.f;
  if (a.input == Fp8GemvInput::kNorm) {  // the row's sum of squares from the float32 residual
    float ss = 0.f;
#pragma unroll
    for (int j = 0; j < kPieces; ++j) {
      const int32_t i = tid + j * kThreads;
      if (i < pieces) {
        const float4* r = reinterpret_cast<const float4*>(a.residual + i * 8);
        const float4 r0 = r[0], r1 = r[1];
        ss += r0.x * r0.x + r0.y * r0.y + r0.z * r0.z + r0.w * r0.w + r1.x * r1.x + r1.y * r1.y + r1.z * r1.z +
              r1.w * r1.w;
      }
    }
    inv_rms = rsqrtf(block_reduce(ss, sum_scratch, false) / static_cast<float>(a.k) + a.eps);
  }
  uint4 v[kPieces];
  float row_amax = 0.f;
#pragma unroll
  for (int j = 0; j < kPieces; ++j) {
    const int32_t i = tid + j * kThreads;
    v[j] = i < pieces ? values8(a, i * 8, inv_rms) : make_uint4(0, 0, 0, 0);
    row_amax = fmaxf(row_amax, amax8(v[j]));
  }
  const bool dynamic = !(a.static_scale > 0.f);
  if (!grouped && dynamic) row_amax = block_reduce(row_amax, max_scratch, true);
  const float row_scale = dynamic ? dynamic_scale(row_amax) : a.static_scale;
  if (!grouped && tid == 0) sx[0] = row_scale;
#pragma unroll
  for (int j = 0; j < kPieces; ++j) {
    const int32_t i = tid + j * kThreads;
    if (j * kThreads >= pieces) break;  // uniform over the block
    float s = row_scale;
    if (grouped) {  // the group's amax over its 16 lanes; lanes past the row hold zeros
      float g = amax8(v[j]);
      for (int o = 8; o > 0; o >>= 1) g = fmaxf(g, __shfl_xor_sync(0xffffffffu, g, o));
      s = dynamic ? dynamic_scale(g) : a.static_scale;
      if (i < pieces && i % 16 == 0) sx[i / 16] = s;
    }
    if (i < pieces) *reinterpret_cast<uint4*>(xs + i * 16) = codes8(v[j], inverse_scale(s));
  }
}

// One ring step's products for lane (g, t), one row of x. The step's 512 inputs are two halves
// of 256; in 64-input sub-step u the lane holds 16 bytes of W row g at 16t + 64u of each half (w[h]),
// the MMA's A rows g and g + 8 (W row g, halves 0 and 1), and x's 16 inputs at the same place of
// half g & 1 (xh), B's column g: D[g][0] sums half 0 and D[g + 8][1] half 1, both in lane (g, 0)
// (c0 and c3); the other columns repeat them and are unused. So every operand comes straight from
// a load or a cvt, with no zero registers moved into place, and an MMA covers 256 bytes of W.
// GROUPED: at each 128-input group's end the half's sum is scaled into `sum` and cleared.
// FULL: the step has all 512 inputs (every step but a row's last, if short).
template <bool GROUPED, bool FULL>
__device__ __forceinline__ void step_products(const uint4 (&w)[2][kSubSteps], const uint8_t* x_lane, bool odd,
                                              int32_t k0, int32_t bytes, float (&acc)[2][4], float& sum,
                                              const float* s_x, const float* s_w) {
#pragma unroll
  for (int u = 0; u < kSubSteps; ++u) {
    const bool valid0 = FULL || 64 * u < bytes, valid1 = FULL || kHalf + 64 * u < bytes;
    if (!valid0) break;
    uint4 xa = make_uint4(0, 0, 0, 0), xb = xa;
    if (odd ? valid1 : valid0) {  // past the row, x reads as zeros (not what lies beyond it)
      xa = *reinterpret_cast<const uint4*>(x_lane + 2 * (k0 + 64 * u));
      xb = *reinterpret_cast<const uint4*>(x_lane + 2 * (k0 + 64 * u) + 16);
    }
    const uint32_t xh[8] = {xa.x, xa.y, xa.z, xa.w, xb.x, xb.y, xb.z, xb.w};
    const uint32_t w0[4] = {w[0][u].x, w[0][u].y, w[0][u].z, w[0][u].w};
    const uint32_t w1[4] = {w[1][u].x, w[1][u].y, w[1][u].z, w[1][u].w};
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const uint32_t a[4] = {e4m3x2_to_f16x2(static_cast<uint16_t>(w0[j])), e4m3x2_to_f16x2(static_cast<uint16_t>(w1[j])),
                             e4m3x2_to_f16x2(static_cast<uint16_t>(w0[j] >> 16)),
                             e4m3x2_to_f16x2(static_cast<uint16_t>(w1[j] >> 16))};
      mma_f16(acc[j & 1], a, xh[2 * j], xh[2 * j + 1]);
    }
    if constexpr (GROUPED) {
      // k0 is a multiple of 512: each half's groups end after every odd sub-step, and where the
      // half's next sub-step lies past a short row's end.
      const int32_t first = k0 / kGroup + u / 2;
      if ((u & 1) != 0 || !(FULL || 64 * (u + 1) < bytes)) {
        sum = fmaf(acc[0][0] + acc[1][0], s_x[first] * __ldg(s_w + first), sum);
        acc[0][0] = acc[1][0] = 0.f;
      }
      if (valid1 && ((u & 1) != 0 || !(FULL || kHalf + 64 * (u + 1) < bytes))) {
        const int32_t second = first + kHalf / kGroup;
        sum = fmaf(acc[0][3] + acc[1][3], s_x[second] * __ldg(s_w + second), sum);
        acc[0][3] = acc[1][3] = 0.f;
      }
    }
  }
}

template <bool GROUPED>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm) fp8_gemv_kernel(const __grid_constant__ Params p) {
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ __align__(8) uint64_t full[kWarps][kStages];
  __shared__ float sum_scratch[kWarps], max_scratch[kWarps];
  const Fp8GemvArgs& a = p.a;
  // warp from lane 0: the compiler then knows it is the same in every lane, and so are the copy
  // addresses made from it, which the bulk copies take in uniform registers without a loop over lanes.
  const int warp = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x / 32), 0);
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int32_t K = a.k, tiles = a.n / kTileRows, G = p.groups, S = p.slices;
  const int32_t tile0 = blockIdx.x * p.tiles_per_block;
  const int32_t block_tiles = min(p.tiles_per_block, tiles - tile0);
  // The warp's items: its slice of the block's tiles warp / S + i · kWarps / S (slices divides
  // kWarps), each ns ring steps from first_step.
  const int slice = warp % S;
  const int32_t tile_first = warp / S, tile_stride = kWarps / S;
  const int32_t first_step = slice * p.steps / S, ns = (slice + 1) * p.steps / S - first_step;
  const int32_t my_items = tile_first < block_tiles ? (block_tiles - 1 - tile_first) / tile_stride + 1 : 0;
  const uint32_t total = ns > 0 ? static_cast<uint32_t>(my_items * ns) : 0u;
  unsigned char* ring = smem + warp * kStages * kSlotBytes;
  uint8_t* xs = smem + kRingBytes;
  float* sx = reinterpret_cast<float*>(xs + p.x_stride);
  float* partials = sx + G;
  const unsigned char* w = reinterpret_cast<const unsigned char*>(a.w);

  // The next step to issue: its ring position, item and step within the item. One elected lane
  // issues a step's 8 row pieces.
  uint32_t issued = 0;
  int32_t issue_item = 0, issue_step = 0;
  auto issue_next = [&]() {  // the whole warp, uniformly
    if (elect_one()) {
      const int32_t k0 = (first_step + issue_step) * kStepK;
      const uint32_t bytes = static_cast<uint32_t>(min(kStepK, K - k0));
      const uint32_t slot = issued % kStages, bar = smem_u32(&full[warp][slot]);
      mbar_arrive_expect_tx(bar, bytes * kTileRows);
      const int64_t row = static_cast<int64_t>(tile0 + tile_first + issue_item * tile_stride) * kTileRows;
      const unsigned char* src = w + row * K + k0;
      const uint32_t dst = smem_u32(ring + slot * kSlotBytes);
#pragma unroll
      for (int r = 0; r < kTileRows; ++r) bulk_copy_to_shared(dst + r * kRowStride, src + static_cast<int64_t>(r) * K, bytes, bar);
    }
    ++issued;
    if (++issue_step == ns) issue_step = 0, ++issue_item;
  };
  if (lane == 0) {
    for (int s = 0; s < kStages; ++s) mbar_init(smem_u32(&full[warp][s]), 1);
    mbar_init_fence();
  }
  __syncwarp();
  while (issued < kStages && issued < total) issue_next();
  wait_for_previous_kernel();
  stage_codes(p, xs, sx, sum_scratch, max_scratch);
  __syncthreads();
  allow_next_kernel();

  float acc[2][4] = {{0.f, 0.f, 0.f, 0.f}, {0.f, 0.f, 0.f, 0.f}};  // two MMAs in flight
  float sum = 0.f;  // the item's sum of W row g (GROUPED: scaled per group)
  const bool odd = (g & 1) != 0;
  const uint8_t* x_lane = xs + 2 * ((odd ? kHalf : 0) + 16 * t);
  uint32_t consumed = 0;
  for (int32_t item = 0; item < my_items && ns > 0; ++item) {
    const int32_t tile = tile_first + item * tile_stride;
    const float* s_w = a.s_w + (static_cast<int64_t>(tile0 + tile) * kTileRows + g) * G;
    for (int32_t step = 0; step < ns; ++step, ++consumed) {
      const uint32_t slot = consumed % kStages;
      mbar_wait(smem_u32(&full[warp][slot]), (consumed / kStages) & 1u);
      const int32_t k0 = (first_step + step) * kStepK, bytes = min(kStepK, K - k0);
      const unsigned char* at = ring + slot * kSlotBytes + g * kRowStride + t * 16;
      uint4 wv[2][kSubSteps];
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int u = 0; u < kSubSteps; ++u)
          wv[h][u] = h * kHalf + 64 * u < bytes ? *reinterpret_cast<const uint4*>(at + h * kHalf + 64 * u)
                                                : make_uint4(0, 0, 0, 0);
      __syncwarp();  // every lane has read the slot before it is refilled
      if (issued < total) issue_next();
      if (bytes == kStepK) {
        step_products<GROUPED, true>(wv, x_lane, odd, k0, bytes, acc, sum, sx, s_w);
      } else {
        step_products<GROUPED, false>(wv, x_lane, odd, k0, bytes, acc, sum, sx, s_w);
      }
    }
    if constexpr (!GROUPED) {
      sum = (acc[0][0] + acc[1][0]) + (acc[0][3] + acc[1][3]);
      acc[0][0] = acc[1][0] = acc[0][3] = acc[1][3] = 0.f;
    }
    if (t == 0) partials[(static_cast<size_t>(tile) * S + slice) * kTileRows + g] = sum;
    sum = 0.f;
  }
  __syncthreads();

  // Each output: its slices' sums in slice order (empty slices have none), scaled, written.
  for (int32_t i = threadIdx.x; i < block_tiles * kTileRows; i += kThreads) {
    const int32_t tile = i / kTileRows, r = i % kTileRows;
    float total_sum = 0.f;
    for (int j = 0; j < S; ++j)
      if ((j + 1) * p.steps / S > j * p.steps / S) total_sum += partials[(static_cast<size_t>(tile) * S + j) * kTileRows + r];
    const int64_t n = static_cast<int64_t>(tile0 + tile) * kTileRows + r;
    const float y = GROUPED ? total_sum : total_sum * (sx[0] * __ldg(a.s_w + n));
    if (a.out.add_f32 != nullptr) {
      asm volatile("red.global.add.f32 [%0], %1;" ::"l"(a.out.add_f32 + n), "f"(y) : "memory");
    } else {
      a.out.bf16[n] = __float2bfloat16(y);
    }
  }
}

template <bool GROUPED>
cudaError_t launch(const Params& p, int blocks, size_t smem, cudaStream_t stream);

}  // namespace zinfer::gpu::cuda::fp8_gemv_detail
