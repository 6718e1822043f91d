#include "tools/bench/lib/measured_gpu.h"

#include <cctype>

namespace zinfer::bench {
namespace {

std::string letters_and_digits(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

}  // namespace

const GpuSpec* table_entry_for_device(const std::string& device_name) {
  const std::string device = letters_and_digits(device_name);
  const GpuSpec* best = nullptr;
  size_t best_len = 0;
  for (const auto& g : gpu_table()) {
    // The chip is the key up to its first '-': "h100-sxm" -> "h100", "rtx4090" -> "rtx4090".
    const std::string chip = letters_and_digits(g.key.substr(0, g.key.find('-')));
    if (chip.size() > best_len && device.find(chip) != std::string::npos) {
      best = &g;
      best_len = chip.size();
    }
  }
  if (best == nullptr) return nullptr;
  // Of a chip's variants, prefer the one whose form factor the name states ("PCIe").
  for (const auto& g : gpu_table()) {
    const std::string chip = letters_and_digits(best->key.substr(0, best->key.find('-')));
    if (letters_and_digits(g.key.substr(0, g.key.find('-'))) != chip) continue;
    const auto dash = g.key.find('-');
    if (dash != std::string::npos && device.find(letters_and_digits(g.key.substr(dash))) != std::string::npos) return &g;
  }
  return best;
}

GpuSpec gpu_spec_from_ceilings(const gpu::DeviceCeilings& c) {
  GpuSpec g;
  g.key = "measured";
  g.name = c.name + " (measured)";
  g.mem_bw_gbs = c.copy_gbps;
  g.bf16_tflops = c.bf16_tflops;
  g.mem_gib = c.mem_gib;
  g.int8_tflops = c.bf16_tflops;
  if (const GpuSpec* sheet = table_entry_for_device(c.name); sheet != nullptr && sheet->bf16_tflops > 0) {
    g.int8_tflops = c.bf16_tflops * sheet->int8_tflops / sheet->bf16_tflops;
  }
  return g;
}

GpuSpec measured_gpu_spec() { return gpu_spec_from_ceilings(gpu::measure_device_ceilings()); }

}  // namespace zinfer::bench
