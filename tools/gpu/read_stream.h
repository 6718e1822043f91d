// Read-only HBM stream rates (read_stream.cu), beside the copy ceiling.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <vector>

namespace zinfer::gpu::cuda::bench {

struct ReadStreamResult {
  std::string name;  // the load kind and its depth
  double gbps;
};

// GB/s of kernels that only read `bytes` (pick far beyond L2), by load kind and depth.
std::vector<ReadStreamResult> read_stream_rates(size_t bytes, cudaStream_t stream);

}  // namespace zinfer::gpu::cuda::bench
