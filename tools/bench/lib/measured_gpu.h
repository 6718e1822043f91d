// `--gpu measured`: a GpuSpec from the local accelerator's measured ceilings instead of a
// datasheet. Bandwidth is the device-to-device copy rate (bytes read + written), which is what a
// decode step's weight stream can reach; the bf16 rate is cuBLAS's at 8192^3. No fp8 GEMM is
// measured: the 8-bit rate is the bf16 rate times the datasheet ratio of the table entry whose
// chip the device name names (2x on Hopper), or equal to bf16 for a chip the table does not know.
#pragma once

#include "gpu/device_ceilings.h"
#include "tools/bench/lib/gpu_table.h"

namespace zinfer::bench {

// The table entry for a CUDA device name ("NVIDIA H100 80GB HBM3" -> h100-sxm), or nullptr.
const GpuSpec* table_entry_for_device(const std::string& device_name);

// The spec the measured ceilings give (pure: tested without a GPU).
GpuSpec gpu_spec_from_ceilings(const gpu::DeviceCeilings& c);

// Measures the local GPU (about two seconds) and returns its spec; throws without a CUDA device.
GpuSpec measured_gpu_spec();

}  // namespace zinfer::bench
