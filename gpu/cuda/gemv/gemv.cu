// gemv.h's entry points: which shapes the kernel takes, and the dispatch to the variant files.
#include "gpu/cuda/gemv.h"

#include "gpu/cuda/gemv/gemv_launch.cuh"

namespace zinfer::gpu::cuda {

namespace {

int max_dynamic_shared_bytes() {
  static const int bytes = [] {
    // The register kernel's static reduction scratch: [warps][8] floats at most.
    return device_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin) -
           static_cast<int>(sizeof(float) * gemv_detail::kWarps * kGemvMaxRows);
  }();
  return bytes;
}

}  // namespace

bool gemv_supports(int32_t m, int32_t k) {
  if (m < 1 || m > kGemvMaxRows || k <= 0 || k % 8 != 0) return false;
  return gemv_detail::x_bytes(gemv_detail::padded_rows(m), k) <= static_cast<size_t>(max_dynamic_shared_bytes());
}

bool gemv_ring_fits(int32_t m, int32_t k) {
  return gemv_supports(m, k) && gemv_detail::ring_fits(gemv_detail::padded_rows(m), k);
}

GemvStreaming gemv_auto_streaming(int32_t m, int32_t k) {
  return m == 1 && gemv_ring_fits(m, k) ? GemvStreaming::kBulkRing : GemvStreaming::kRegisters;
}

cudaError_t launch_gemv(const GemvArgs& a, cudaStream_t stream, bool programmatic_launch) {
  if (a.n == 0) return cudaSuccess;
  if (a.n < 0 || !gemv_supports(a.m, a.k)) return cudaErrorInvalidValue;
  switch (a.output) {
    case GemvOutput::kBf16:
      return a.input == GemvInput::kBf16 ? gemv_detail::launch_bf16_in_bf16_out(a, stream, programmatic_launch)
                                         : gemv_detail::launch_norm_in_bf16_out(a, stream, programmatic_launch);
    case GemvOutput::kAddToResidual:
      if (a.input == GemvInput::kBf16) return gemv_detail::launch_bf16_in_residual_out(a, stream, programmatic_launch);
      break;
    case GemvOutput::kExchange:
      if (a.exchange == nullptr || a.residual_out == nullptr || static_cast<size_t>(a.m) * a.n > a.exchange->capacity) {
        return cudaErrorInvalidValue;  // [m, n] must fit a slot
      }
      if (a.input == GemvInput::kBf16) return gemv_detail::launch_bf16_in_exchange_out(a, stream, programmatic_launch);
      break;
    case GemvOutput::kSiluMul:
      if (a.n % 2 != 0) return cudaErrorInvalidValue;  // gate and up rows come in pairs
      if (a.input == GemvInput::kRmsNorm) return gemv_detail::launch_norm_in_silu_out(a, stream, programmatic_launch);
      break;
  }
  return cudaErrorNotSupported;  // a combination no caller needs, so none is instantiated
}

}  // namespace zinfer::gpu::cuda
