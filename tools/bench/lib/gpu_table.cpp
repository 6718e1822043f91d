#include "tools/bench/lib/gpu_table.h"

#include <cctype>
#include <stdexcept>

namespace zinfer::bench {

const std::vector<GpuSpec>& gpu_table() {
  // Dense figures from the vendors' datasheets and architecture whitepapers; GeForce rates are
  // those with FP32 accumulation (what bf16 GEMMs use).
  static const std::vector<GpuSpec> table = {
      {"rtx3090", "NVIDIA GeForce RTX 3090 24GB", 936, 71, 284, 24},
      {"rtx4090", "NVIDIA GeForce RTX 4090 24GB", 1008, 165.2, 330.3, 24},
      {"l40", "NVIDIA L40 48GB", 864, 181.05, 362.05, 48},
      {"a100-40gb", "NVIDIA A100 SXM4 40GB", 1555, 312, 624, 40},
      {"a100-80gb", "NVIDIA A100 SXM4 80GB", 2039, 312, 624, 80},
      {"h100-sxm", "NVIDIA H100 SXM5 80GB", 3350, 989.4, 1978.9, 80},
      {"h100-pcie", "NVIDIA H100 PCIe 80GB", 2000, 756, 1513, 80},
      {"h200", "NVIDIA H200 SXM 141GB", 4800, 989.4, 1978.9, 141},
  };
  return table;
}

namespace {

std::string normalize(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == ' ' || c == '-' || c == '_') continue;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

}  // namespace

const GpuSpec& find_gpu(const std::string& name) {
  const std::string want = normalize(name);
  for (const auto& g : gpu_table()) {
    if (normalize(g.key) == want || normalize(g.name) == want) return g;
  }
  // Common short forms: "a100" is the 80 GB part, "h100" the SXM one.
  if (want == "a100") return find_gpu("a100-80gb");
  if (want == "h100") return find_gpu("h100-sxm");
  std::string keys;
  for (const auto& g : gpu_table()) keys += (keys.empty() ? "" : ", ") + g.key;
  throw std::invalid_argument("unknown GPU '" + name + "' (known: " + keys + ", or give --mem-bw, --tflops and --mem)");
}

}  // namespace zinfer::bench
