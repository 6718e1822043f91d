// Host-side checking of CUDA / cuBLAS return codes. Every call into the runtime goes through
// check_cuda so that a failure becomes a CudaError naming the call, never a silent bad result.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace zinfer::gpu::cuda {

class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw CudaError(std::string("CUDA error in ") + what + ": " + cudaGetErrorName(status) + " (" +
                    cudaGetErrorString(status) + ")");
  }
}

inline void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw CudaError(std::string("cuBLAS error in ") + what + ": status " +
                    std::to_string(static_cast<int>(status)));
  }
}

// After a kernel launch: launch-configuration errors surface here, asynchronous faults at the
// next synchronisation.
inline void check_launch(const char* kernel) { check_cuda(cudaGetLastError(), kernel); }

}  // namespace zinfer::gpu::cuda
