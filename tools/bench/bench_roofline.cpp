// `zinfer-bench roofline`: the capacity calculator (tools/bench/lib/roofline.h has the formulas).
#include <cstdio>
#include <memory>
#include <stdexcept>

#include "tools/bench/commands.h"
#include "tools/bench/lib/measured_gpu.h"
#include "tools/bench/lib/roofline.h"

namespace zinfer::bench {
namespace {

struct RooflineArgs {
  std::string model;
  std::string gpu;
  double mem_bw = 0;
  double tflops = 0;
  double tflops_8bit = 0;
  double mem = 0;
  bool json = false;
  bool list_gpus = false;
  int64_t tensor_parallel_size = 1;
};

GpuSpec choose_gpu(const RooflineArgs& a) {
  GpuSpec g;
  if (a.gpu == "measured") {
    std::fprintf(stderr, "measuring the local GPU's copy bandwidth and bf16 GEMM rate...\n");
    g = measured_gpu_spec();
  } else if (!a.gpu.empty()) {
    g = find_gpu(a.gpu);
  } else if (a.mem_bw <= 0 || a.tflops <= 0 || a.mem <= 0) {
    throw std::invalid_argument("give --gpu NAME, or all of --mem-bw, --tflops and --mem");
  } else {
    g.key = "custom";
    g.name = "custom GPU";
  }
  // Explicit figures override the table's.
  if (a.mem_bw > 0) g.mem_bw_gbs = a.mem_bw;
  if (a.tflops > 0) {
    g.bf16_tflops = a.tflops;
    if (a.gpu.empty()) g.int8_tflops = a.tflops;  // no 8-bit figure known: assume no 8-bit speed-up
  }
  if (a.tflops_8bit > 0) g.int8_tflops = a.tflops_8bit;
  if (a.mem > 0) g.mem_gib = a.mem;
  return g;
}

void run_roofline(const RooflineArgs& a) {
  if (a.list_gpus) {
    std::printf("%-10s %-32s %10s %12s %12s %8s\n", "key", "name", "GB/s", "bf16 TFLOPS", "8-bit TFLOPS", "GiB");
    for (const auto& g : gpu_table()) {
      std::printf("%-10s %-32s %10.0f %12.1f %12.1f %8.0f\n", g.key.c_str(), g.name.c_str(), g.mem_bw_gbs,
                  g.bf16_tflops, g.int8_tflops, g.mem_gib);
    }
    return;
  }
  if (a.model.empty()) throw std::invalid_argument("--model DIR|config.json is required");
  const Roofline r = compute_roofline(load_model_shape(a.model), choose_gpu(a), a.tensor_parallel_size);
  if (a.json) {
    std::printf("%s\n", roofline_json(r).dump(2).c_str());
  } else {
    std::fputs(roofline_text(r).c_str(), stdout);
  }
}

}  // namespace

void add_roofline_command(CLI::App& app) {
  auto args = std::make_shared<RooflineArgs>();
  auto* cmd = app.add_subcommand("roofline", "theoretical decode/prefill times and KV capacity of a model on a GPU");
  cmd->add_option("--model", args->model, "model folder or its config.json");
  cmd->add_option("--gpu", args->gpu, "GPU of the built-in table (see --list-gpus), or 'measured'");
  cmd->add_option("--mem-bw", args->mem_bw, "memory bandwidth in GB/s (overrides the table)");
  cmd->add_option("--tflops", args->tflops, "bf16 tensor rate in TFLOPS (overrides the table)");
  cmd->add_option("--tflops-8bit", args->tflops_8bit, "fp8/int8 tensor rate in TFLOPS (overrides the table)");
  cmd->add_option("--mem", args->mem, "GPU memory in GiB, as datasheets' 'GB' mean it (overrides the table)");
  cmd->add_option("--tensor-parallel-size", args->tensor_parallel_size,
                  "GPUs the model is split over: the figures become one GPU's")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--json", args->json, "print one JSON object");
  cmd->add_flag("--list-gpus", args->list_gpus, "print the built-in GPU table");
  cmd->callback([args] { run_roofline(*args); });
}

}  // namespace zinfer::bench
