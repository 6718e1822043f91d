// make_backend(): picks the backend named by options.device.
#include <stdexcept>

#include "gpu/backend.h"
#include "gpu/cpu/cpu_backend.h"
#include "gpu/synthetic_backend.h"
#if ZINFER_HAVE_CUDA
#include "gpu/cuda/cuda_backend.h"
#endif

namespace zinfer::gpu {

std::unique_ptr<Backend> make_backend(const BackendOptions& options) {
  if (options.device == "cpu") return cpu::make_cpu_backend(options);
  if (options.device == "synthetic") return make_synthetic_backend(options);
  if (options.device == "cuda") {
#if ZINFER_HAVE_CUDA
    return make_cuda_backend(options);
#else
    throw std::runtime_error("device 'cuda': this build has no CUDA backend");
#endif
  }
  throw std::runtime_error("unknown device '" + options.device + "' (expected cpu, cuda or synthetic)");
}

}  // namespace zinfer::gpu
