// Datasheet figures of common inference GPUs: memory bandwidth, dense tensor-core rates (no
// sparsity) and memory. Memory is in GiB (2^30 bytes): that is what "80 GB" means for an H100 or
// "24 GB" for an RTX 4090 (nvidia-smi shows about 80 and 24 GiB). Bandwidth is in GB/s (10^9),
// rates in TFLOPS (10^12). The 8-bit rate is FP8 where the chip has it, else INT8 (RTX 3090, A100).
#pragma once

#include <string>
#include <vector>

namespace zinfer::bench {

struct GpuSpec {
  std::string key;   // what --gpu accepts, e.g. "h100-sxm"
  std::string name;  // e.g. "NVIDIA H100 SXM5 80GB"
  double mem_bw_gbs = 0;
  double bf16_tflops = 0;
  double int8_tflops = 0;  // FP8, or INT8 TOPS where there is no FP8
  double mem_gib = 0;
};

const std::vector<GpuSpec>& gpu_table();
// Matches the key or the name, ignoring case, spaces, '-' and '_' ("H100 SXM" = "h100-sxm").
// Throws std::invalid_argument listing the known keys when nothing matches.
const GpuSpec& find_gpu(const std::string& name);

}  // namespace zinfer::bench
