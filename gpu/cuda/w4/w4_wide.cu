// The W4A16 GEMM of many rows (w4_wide_kernel.cuh): its token tile, split rule and launch.
#include <algorithm>

#include "gpu/cuda/skinny_mma.cuh"
#include "gpu/cuda/w4/w4_wide_launch.cuh"

namespace zinfer::gpu::cuda {
namespace {

// Blocks of 128 outputs (8 tiles of 16) over n outputs.
int32_t wide_output_blocks(int32_t n) { return output_blocks(n, w4_wide::kOutputs / 16); }

int32_t output_tiles(int32_t m, int32_t n, int32_t tokens) {
  return wide_output_blocks(n) * ((m + tokens - 1) / tokens);
}

}  // namespace

int32_t w4_gemm_wide_tokens(int32_t m) { return m <= 128 ? 128 : 256; }

int32_t w4_gemm_wide_splits(int32_t m, int32_t n, int32_t k, int32_t tokens) {
  return w4_gemm_wide_split_rule(output_tiles(m, n, tokens), k / 64, multiprocessor_count());
}

size_t w4_gemm_wide_workspace_floats(int32_t m, int32_t n, int32_t splits, int32_t tokens) {
  if (splits <= 1) return 0;
  // Each consumer thread keeps tokens / 2 float32 sums (w4_wide::Tile::kAcc).
  return static_cast<size_t>(splits) * output_tiles(m, n, tokens) * w4_wide::kConsumerThreads * (tokens / 2);
}

size_t w4_gemm_wide_counters(int32_t m, int32_t n, int32_t tokens) {
  return static_cast<size_t>(output_tiles(m, n, tokens));
}

cudaError_t launch_w4_gemm_wide(const W4GemmArgs& a, cudaStream_t stream) {
  using namespace w4_wide;
  const W4Weight& w = a.w;
  if (a.m < 1 || !w4_args_complete(a) || w.k % w.group_size != 0) return cudaErrorInvalidValue;
  const int32_t tokens = a.wide_tokens > 0 ? a.wide_tokens : w4_gemm_wide_tokens(a.m);
  if (tokens != 128 && tokens != 256) return cudaErrorInvalidValue;
  const int32_t steps = w.k / 64;
  int32_t splits = a.splits > 0 ? std::min(a.splits, steps) : w4_gemm_wide_splits(a.m, w.n, w.k, tokens);
  Params p{};
  p.a = a;
  p.steps_per_split = (steps + splits - 1) / splits;
  splits = (steps + p.steps_per_split - 1) / p.steps_per_split;
  if (splits > 1 && (a.partials == nullptr || a.counters == nullptr)) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>(wide_output_blocks(w.n)), static_cast<unsigned>((a.m + tokens - 1) / tokens),
                  static_cast<unsigned>(splits));
  return tokens == 128 ? launch_t128(p, grid, stream) : launch_t256(p, grid, stream);
}

}  // namespace zinfer::gpu::cuda
