// The ceilings of the local accelerator, measured in a second or two: the denominators that
// `zinfer-bench roofline --gpu measured`, `zinfer-bench sweep --gpu measured` and zinfer-cuda-bench
// divide by. Measured rather than taken from a datasheet because a card's clocks, power limit and
// memory parts differ from the sheet (a card copies well below its datasheet's HBM bandwidth).
#pragma once

#include <string>

namespace zinfer::gpu {

struct DeviceCeilings {
  std::string name;         // cudaDeviceProp::name, e.g. "NVIDIA H200"
  double copy_gbps = 0;     // device-to-device copy of 2 GiB, bytes read + written per second (1e9)
  double bf16_tflops = 0;   // cuBLASLt bf16 GEMM 8192^3 with float32 accumulation (1e12 FLOP/s)
  double mem_gib = 0;       // total device memory (2^30 bytes)
};

// Measures device 0. Throws std::runtime_error when this build has no CUDA backend or no device
// is visible.
DeviceCeilings measure_device_ceilings();

}  // namespace zinfer::gpu
