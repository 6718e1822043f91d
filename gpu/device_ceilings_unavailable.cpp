// measure_device_ceilings() of a build without the CUDA backend (gpu/cuda/device_ceilings.cpp is
// the real one).
#include "gpu/device_ceilings.h"

#include <stdexcept>

#if !ZINFER_HAVE_CUDA
namespace zinfer::gpu {

DeviceCeilings measure_device_ceilings() {
  throw std::runtime_error("measuring the GPU needs a CUDA build of zinfer (this one was built without nvcc)");
}

}  // namespace zinfer::gpu
#endif
