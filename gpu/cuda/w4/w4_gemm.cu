// Dispatch of the W4A16 kernel (w4_gemm.h) and the dequantization for steps of many rows.
#include "gpu/cuda/w4/w4_launch.cuh"

#include <algorithm>

namespace zinfer::gpu::cuda {
namespace {

// The instantiation for m rows (256-input chunks: 512-input ones were no faster at 1-16 rows on
// an H200, docs/benchmarks/quantization.md).
w4_detail::Instance instance(int32_t m) {
  using namespace w4_detail;
  switch (mma_fragments(m)) {
    case 1: return instance_mf1_c256();
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
  return one_wave_splits(static_cast<int32_t>(w4_gemm_counters(n)), k / 64, instance(m).resident());
}

size_t w4_gemm_workspace_floats(int32_t m, int32_t n, int32_t splits) { return split_partial_floats(m, n, splits); }

size_t w4_gemm_counters(int32_t n) { return static_cast<size_t>(output_blocks(n, w4_detail::kWarps)); }

cudaError_t launch_w4_gemm(const W4GemmArgs& a, cudaStream_t stream) {
  const W4Weight& w = a.w;
  if (a.m < 1 || a.m > kW4GemmMaxRows || !w4_args_complete(a)) return cudaErrorInvalidValue;
  w4_detail::Params p{};
  p.w = w;
  p.x = a.x;
  p.output = a.output;
  p.y = a.y;
  p.residual = a.residual;
  p.m = a.m;
  const int32_t steps = w.k / 64;
  int32_t splits = a.splits > 0 ? std::min(a.splits, steps) : w4_gemm_splits(a.m, w.n, w.k);
  p.steps_per_split = (steps + splits - 1) / splits;
  splits = (steps + p.steps_per_split - 1) / p.steps_per_split;
  p.splits = splits;
  if (splits > 1 && (a.partials == nullptr || a.counters == nullptr)) return cudaErrorInvalidValue;
  p.partials = a.partials;
  p.counters = a.counters;
  const dim3 grid(static_cast<unsigned>(w4_gemm_counters(w.n)), static_cast<unsigned>(splits));
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
