// fp8_gemv.h's host side: which products the kernel takes, its grid and its shared memory.
#include "gpu/cuda/fp8/fp8_gemv.h"

#include <algorithm>
#include <numeric>

#include "gpu/cuda/fp8/fp8_gemv_kernel.cuh"
#include "gpu/cuda/resident_blocks.h"

namespace zinfer::gpu::cuda {
namespace {

using namespace fp8_gemv_detail;

// Hopper's shared memory per SM and what the driver keeps per block: the budget of each of the
// kBlocksPerSm blocks, less the kernel's static arrays (fp8_gemv_supports is host arithmetic; the
// launch checks the device's own figures).
constexpr size_t kHopperSharedPerSm = 228 * 1024, kReservedPerBlock = 1024, kStaticBytes = 512;
// The fewest SMs fp8_gemv_supports sizes the partial sums for (more SMs: fewer tiles per block).
constexpr int kFewestSms = 64;

// The grid for `sms` SMs: one wave of kBlocksPerSm blocks each owning tiles_per_block tiles, and
// the slices that give each of a block's warps the same number of (tile, slice) items: with T
// tiles per block, 8 / gcd(T, 8) slices make T · slices a multiple of 8, fewer where a row has
// fewer ring steps than that.
Params plan(const Fp8GemvArgs& a, int sms) {
  Params p;
  p.a = a;
  const int32_t tiles = a.n / kTileRows, slots = std::max(1, sms) * kBlocksPerSm;
  p.tiles_per_block = (tiles + slots - 1) / slots;
  p.steps = (a.k + kStepK - 1) / kStepK;
  p.slices = kWarps / std::gcd(p.tiles_per_block, kWarps);
  while (p.slices > 1 && p.slices > p.steps) p.slices /= 2;
  p.x_stride = 2 * a.k;
  p.groups = a.group == a.k ? 1 : (a.k + kGroup - 1) / kGroup;
  return p;
}

}  // namespace

bool fp8_gemv_supports(int32_t m, int32_t n, int32_t k, int32_t group) {
  if (m < 1 || m > kFp8GemvMaxRows || n < kTileRows || n % kTileRows != 0 || k < 64 || k % 64 != 0 || k > kMaxK)
    return false;
  if (group != k && group != kGroup) return false;
  Fp8GemvArgs a;
  a.m = m;
  a.n = n;
  a.k = k;
  a.group = group;
  return shared_bytes(plan(a, kFewestSms)) + kStaticBytes <= kHopperSharedPerSm / kBlocksPerSm - kReservedPerBlock;
}

cudaError_t launch_fp8_gemv(const Fp8GemvArgs& a, cudaStream_t stream) {
  if (!fp8_gemv_supports(a.m, a.n, a.k, a.group) || a.w == nullptr || a.s_w == nullptr) return cudaErrorInvalidValue;
  if ((a.out.bf16 == nullptr) == (a.out.add_f32 == nullptr)) return cudaErrorInvalidValue;
  if (a.input == Fp8GemvInput::kNorm ? a.residual == nullptr || a.norm_weight == nullptr : a.x == nullptr)
    return cudaErrorInvalidValue;
  static const int sms = device_attribute(cudaDevAttrMultiProcessorCount);
  static const int per_block = shared_memory_per_block(kBlocksPerSm);
  static const int one_too_many = shared_memory_per_block(kBlocksPerSm + 1) + 1;
  const Params p = plan(a, sms);
  const int32_t tiles = a.n / kTileRows, blocks = (tiles + p.tiles_per_block - 1) / p.tiles_per_block;
  // At least just over a third of the SM's shared memory: a third block of this kernel on an SM
  // would share its bandwidth unevenly with the others (gemv_ring_kernel.cuh says so of the bf16 GEMV).
  const size_t need = shared_bytes(p);
  const size_t smem = std::max(need, static_cast<size_t>(std::max(one_too_many, 0)));
  if (need + kStaticBytes > static_cast<size_t>(std::max(per_block, 0))) return cudaErrorInvalidValue;
  return a.group == a.k ? launch<false>(p, blocks, smem, stream) : launch<true>(p, blocks, smem, stream);
}

}  // namespace zinfer::gpu::cuda
