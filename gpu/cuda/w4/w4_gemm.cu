// Dispatch of the W4A16 kernels of few rows (w4_gemm.h: the decode kernel up to 8 rows, the
// chunked one for 9-64) and the dequantization for steps of many rows.
#include "gpu/cuda/w4/w4_decode_launch.cuh"
#include "gpu/cuda/w4/w4_launch.cuh"

#include <algorithm>

namespace zinfer::gpu::cuda {
namespace {

// The decode kernel's rows: from 9 rows on, staging x for a whole split costs it more than the
// chunked kernel's double buffer (docs/benchmarks/quantization.md).
constexpr int32_t kDecodeRows = 8;

// The chunked kernel's instantiation for 9-64 rows (256-input chunks).
w4_detail::Instance instance(int32_t m) {
  using namespace w4_detail;
  switch (mma_fragments(m)) {
    case 2: return instance_mf2_c256();
    case 4: return instance_mf4_c256();
    default: return instance_mf8_c256();
  }
}

// Writes W'[n, k'] = bf16(scale · (q − zero)) in packed input order. Block n writes row n, 8
// inputs a thread: inputs k'..k'+7 (k' a multiple of 8) are nibble half h of registers
// 2·(k'%16/8) + (n%16/8) in lanes 4·(n%8) .. +3, and become one 16-byte store.
__global__ void w4_dequantize_kernel(W4Weight w, __nv_bfloat16* out) {
  const auto* raw = reinterpret_cast<const uint32_t*>(w.words);
  const int32_t n = blockIdx.x, steps = w.k / 64, rr = n % 16;
  const uint32_t* row_words = raw + (static_cast<size_t>(n / 16) * steps * 32 + 4 * (rr % 8)) * 4;
  __nv_bfloat16* row_out = out + static_cast<size_t>(n) * w.k;
  for (int32_t k0 = threadIdx.x * 8; k0 < w.k; k0 += blockDim.x * 8) {
    const int32_t step = k0 / 64, tile = (k0 % 64) / 16, reg = 2 * ((k0 % 16) / 8) + rr / 8;
    const uint32_t* words = row_words + step * 128 + tile;
    const size_t g = static_cast<size_t>(k0 / w.group_size) * w.n + n;
    const float zero = __uint_as_float((w.zeros[g] & 0xFFFFu) << 16) - 128.f, scale = w.scales[g];
    __align__(16) __nv_bfloat16 v[8];
#pragma unroll
    for (int t = 0; t < 4; ++t) {  // lane 4·(n%8) + t holds inputs 2t, 2t + 1 of these 8
      const uint32_t word = __ldg(words + t * 4);
      v[2 * t] = __float2bfloat16(scale * (static_cast<float>((word >> (4 * reg)) & 0xFu) - zero));
      v[2 * t + 1] = __float2bfloat16(scale * (static_cast<float>((word >> (4 * reg + 16)) & 0xFu) - zero));
    }
    *reinterpret_cast<uint4*>(row_out + k0) = *reinterpret_cast<const uint4*>(v);
  }
}

// x'[m, k'] = x[m, perm[k']]: the input in the packed order of an act-order layer.
__global__ void w4_permute_kernel(const __nv_bfloat16* x, const int32_t* perm, __nv_bfloat16* out, int32_t m,
                                  int32_t k) {
  const size_t total = static_cast<size_t>(m) * k;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const size_t row = i / k;
    out[i] = x[row * k + perm[i % k]];
  }
}

}  // namespace

int32_t w4_gemm_splits(int32_t m, int32_t n, int32_t k) {
  if (m <= kDecodeRows) return w4_decode::splits(m, n, k, multiprocessor_count(), mma_fragments(m));
  return one_wave_splits(static_cast<int32_t>(w4_gemm_counters(n)), k / 64, instance(m).resident());
}

int32_t w4_gemm_launch_splits(int32_t m, int32_t n, int32_t k, int32_t requested) {
  const int32_t steps = k / 64;
  const int32_t splits = requested > 0 ? std::min(requested, steps) : w4_gemm_splits(m, n, k);
  int32_t per = (steps + splits - 1) / splits;
  if (m <= kDecodeRows) per = std::min(per, w4_decode::max_steps(m, mma_fragments(m)));
  return (steps + per - 1) / per;
}

size_t w4_gemm_workspace_floats(int32_t m, int32_t n, int32_t splits) { return split_partial_floats(m, n, splits); }

size_t w4_gemm_counters(int32_t n) {  // the more of the two kernels' output blocks
  return static_cast<size_t>(std::max(output_blocks(n, w4_detail::kWarps), output_blocks(n, w4_decode::kWarps)));
}

cudaError_t launch_w4_gemm(const W4GemmArgs& a, cudaStream_t stream) {
  const W4Weight& w = a.w;
  if (a.m < 1 || a.m > kW4GemmMaxRows || !w4_args_complete(a)) return cudaErrorInvalidValue;
  const int32_t steps = w.k / 64;
  int32_t splits = w4_gemm_launch_splits(a.m, w.n, w.k, a.splits);
  int32_t per = (steps + splits - 1) / splits;
  if (a.m <= kDecodeRows && per % w4_decode::unit_steps(w) != 0) {  // units of two steps: fewer splits
    per += 1;
    splits = (steps + per - 1) / per;
  }
  if (splits > 1 && (a.partials == nullptr || a.counters == nullptr)) return cudaErrorInvalidValue;
  const W4KernelParams p{w, a.x, a.output, a.y, a.residual, a.m, splits, per, a.partials, a.counters};
  if (a.m <= kDecodeRows) {
    const dim3 grid(static_cast<unsigned>(output_blocks(w.n, w4_decode::kWarps)), static_cast<unsigned>(splits));
    return w4_decode::launch_mf1(p, grid, stream);
  }
  const dim3 grid(static_cast<unsigned>(output_blocks(w.n, w4_detail::kWarps)), static_cast<unsigned>(splits));
  return instance(a.m).launch(p, grid, stream);
}

cudaError_t launch_w4_dequantize(const W4Weight& w, __nv_bfloat16* out, cudaStream_t stream) {
  if (w.n % 16 != 0 || w.k % 64 != 0 || w.group_size % 64 != 0 || w.group_size <= 0 || out == nullptr)
    return cudaErrorInvalidValue;
  w4_dequantize_kernel<<<static_cast<unsigned>(w.n), 128, 0, stream>>>(w, out);
  return cudaGetLastError();
}

cudaError_t launch_w4_permute(const __nv_bfloat16* x, const int32_t* perm, __nv_bfloat16* out, int32_t m, int32_t k,
                              cudaStream_t stream) {
  if (x == nullptr || perm == nullptr || out == nullptr || m < 1 || k < 1) return cudaErrorInvalidValue;
  const size_t total = static_cast<size_t>(m) * k;
  const unsigned blocks = static_cast<unsigned>(std::min<size_t>((total + 255) / 256, 132u * 16));
  w4_permute_kernel<<<blocks, 256, 0, stream>>>(x, perm, out, m, k);
  return cudaGetLastError();
}

}  // namespace zinfer::gpu::cuda
