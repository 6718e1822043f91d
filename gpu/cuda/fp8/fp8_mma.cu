// Dispatch of the FP8 mma kernel (fp8_mma.h): the instantiation for the row count, and the split
// over inputs that fills one wave of the GPU.
#include <algorithm>

#include "gpu/cuda/fp8/fp8_mma_launch.cuh"

namespace zinfer::gpu::cuda {
namespace {

fp8_detail::Instance instance(int32_t m) {
  using namespace fp8_detail;
  switch (mma_fragments(m)) {
    case 1: return instance_mf1();
    case 2: return instance_mf2();
    case 4: return instance_mf4();
    default: return instance_mf8();
  }
}

}  // namespace

bool fp8_mma_supports(int32_t n, int32_t k, int32_t group) {
  return n > 0 && k > 0 && n % 16 == 0 && k % 64 == 0 && (group == k || (group > 0 && group % 64 == 0));
}

int32_t fp8_mma_splits(int32_t m, int32_t n, int32_t k) {
  return one_wave_splits(static_cast<int32_t>(fp8_mma_counters(n)), k / 64, instance(m).resident());
}

size_t fp8_mma_workspace_floats(int32_t m, int32_t n, int32_t splits) { return split_partial_floats(m, n, splits); }

size_t fp8_mma_counters(int32_t n) { return static_cast<size_t>(output_blocks(n, fp8_detail::kWarps)); }

cudaError_t launch_fp8_mma(const Fp8MmaArgs& a, cudaStream_t stream) {
  if (a.m < 1 || a.m > kFp8MmaMaxRows || !fp8_mma_supports(a.n, a.k, a.group) || a.w == nullptr ||
      a.s_w == nullptr || a.x == nullptr || a.s_x == nullptr || (a.out.bf16 == nullptr) == (a.out.add_f32 == nullptr))
    return cudaErrorInvalidValue;
  fp8_detail::Params p{};
  p.a = a;
  p.groups = (a.k + a.group - 1) / a.group;
  const int32_t steps = a.k / 64;
  int32_t splits = a.splits > 0 ? std::min(a.splits, steps) : fp8_mma_splits(a.m, a.n, a.k);
  p.steps_per_split = (steps + splits - 1) / splits;
  splits = (steps + p.steps_per_split - 1) / p.steps_per_split;
  p.a.splits = splits;
  if (splits > 1 && (a.partials == nullptr || a.counters == nullptr)) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>(fp8_mma_counters(a.n)), static_cast<unsigned>(splits));
  return instance(a.m).launch(p, grid, stream);
}

}  // namespace zinfer::gpu::cuda
