// make_backend(): picks the backend named by options.device.
#include <stdexcept>
#include <string>

#include "gpu/backend.h"
#include "gpu/cpu/cpu_backend.h"
#include "gpu/synthetic_backend.h"
#include "gpu/tensor_parallel_backend.h"
#if ZINFER_HAVE_CUDA
#include "gpu/cuda/cuda_backend.h"
#endif

namespace zinfer::gpu {

std::unique_ptr<Backend> make_backend(const BackendOptions& options) {
  const int32_t tp = options.tensor_parallel_size;
  if (tp < 1) throw std::runtime_error("tensor_parallel_size " + std::to_string(tp) + " must be at least 1");
  if (options.device == "cpu") {
    if (tp == 1) return cpu::make_cpu_backend(options);
    return make_tensor_parallel_backend(tp, [options](const RankContext& rank) {
      return cpu::make_cpu_backend(options, rank);
    });
  }
  if (options.device == "synthetic") {
    if (tp != 1) throw std::runtime_error("device 'synthetic' has no tensor parallelism (tensor_parallel_size 1)");
    return make_synthetic_backend(options);
  }
  if (options.device == "cuda") {
#if ZINFER_HAVE_CUDA
    return tp == 1 ? make_cuda_backend(options) : make_cuda_tensor_parallel_backend(options);
#else
    throw std::runtime_error("device 'cuda': this build has no CUDA backend");
#endif
  }
  throw std::runtime_error("unknown device '" + options.device + "' (expected cpu, cuda or synthetic)");
}

}  // namespace zinfer::gpu
