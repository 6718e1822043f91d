// `zinfer-bench sweep`: prefill and decode curves measured on the engine's backend, beside the
// theoretical lines (tools/bench/lib/sweep.h has the formulas), as CSV, gnuplot scripts and PNGs.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>

#include "gpu/backend.h"
#include "tools/bench/commands.h"
#include "tools/bench/lib/measured_gpu.h"
#include "tools/bench/lib/plot.h"
#include "tools/bench/lib/sweep.h"

namespace zinfer::bench {
namespace {

struct SweepArgs {
  std::string model;
  std::string device = "cpu";
  std::string mode = "both";
  std::vector<int64_t> prefill_lens = {1, 16, 64, 256, 1024, 4096, 8192};
  std::vector<int64_t> users = {1, 2, 4, 8, 16, 32, 64, 128, 256};
  std::vector<int64_t> contexts = {512, 2048, 8192};
  std::string gpu;
  double mem_bw = 0;
  double tflops = 0;
  double tflops_8bit = 0;
  std::string out_dir = "sweep-results";
  int repeat = 5;
  uint64_t seed = 0;
  int num_gpu_blocks = 0;
  int threads = 0;
  bool error_on_unfit = false;
};

// The figures of the theoretical lines: --gpu NAME from the table, or --gpu measured (the CPU or
// the GPU the sweep runs on), or --mem-bw and --tflops; explicit figures override the table's. On
// the CPU with no figures given, the CPU is measured.
GpuSpec choose_spec(const SweepArgs& a) {
  const bool explicit_figures = a.mem_bw > 0 && a.tflops > 0;
  GpuSpec g;
  if (a.gpu == "measured" || (a.gpu.empty() && !explicit_figures && a.device == "cpu")) {
    if (a.device == "cpu") {
      std::fprintf(stderr, "measuring this CPU's bandwidth and compute rate for the theoretical lines...\n");
      g = measure_cpu_spec();
    } else {
      std::fprintf(stderr, "measuring the local GPU's copy bandwidth and bf16 GEMM rate for the theoretical lines...\n");
      g = measured_gpu_spec();
    }
  } else if (!a.gpu.empty()) {
    g = find_gpu(a.gpu);
  } else if (!explicit_figures) {
    throw std::invalid_argument("give --gpu NAME (see `zinfer-bench roofline --list-gpus`), or --mem-bw and --tflops");
  } else {
    g.key = "custom";
    g.name = "custom";
    g.int8_tflops = a.tflops;  // no 8-bit figure known: no 8-bit speed-up assumed unless --tflops-8bit
  }
  if (a.mem_bw > 0) g.mem_bw_gbs = a.mem_bw;
  if (a.tflops > 0) g.bf16_tflops = a.tflops;
  if (a.tflops_8bit > 0) g.int8_tflops = a.tflops_8bit;
  if (g.mem_bw_gbs <= 0 || g.bf16_tflops <= 0 || g.int8_tflops <= 0) {
    throw std::invalid_argument("--mem-bw and --tflops must both be positive");
  }
  return g;
}

SweepPlan make_plan(const SweepArgs& a) {
  if (a.mode != "prefill" && a.mode != "decode" && a.mode != "both") {
    throw std::invalid_argument("--mode '" + a.mode + "': expected prefill, decode or both");
  }
  SweepPlan p;
  p.prefill = a.mode != "decode";
  p.decode = a.mode != "prefill";
  p.prefill_lens = a.prefill_lens;
  p.users = a.users;
  p.contexts = a.contexts;
  p.repeat = a.repeat;
  p.seed = a.seed;
  p.skip_unfit = !a.error_on_unfit;
  validate_plan(p);
  // The largest step: the longest prompt, or the most users; contexts are filled in chunks of it.
  int64_t largest = 8192;
  if (p.prefill) largest = std::max(largest, *std::max_element(p.prefill_lens.begin(), p.prefill_lens.end()));
  if (p.decode) largest = std::max(largest, *std::max_element(p.users.begin(), p.users.end()));
  p.chunk_tokens = largest;
  return p;
}

gpu::BackendOptions backend_options(const SweepArgs& a, const SweepPlan& plan) {
  gpu::BackendOptions o;
  o.model_dir = a.model;
  o.device = a.device;
  o.max_num_batched_tokens = static_cast<int32_t>(plan.chunk_tokens);
  o.max_num_seqs = plan.decode ? static_cast<int32_t>(*std::max_element(plan.users.begin(), plan.users.end())) : 1;
  o.max_model_len = static_cast<int32_t>(longest_sequence(plan));
  o.num_threads = a.threads;
  // The CPU cache is sized to the largest point (its pages are only touched when used); the CUDA
  // cache takes the free memory, and points that do not fit are skipped or refused.
  o.num_gpu_blocks = a.num_gpu_blocks > 0 ? a.num_gpu_blocks
                     : a.device == "cpu" ? static_cast<int32_t>(blocks_needed(plan, o.block_size))
                                         : 0;
  return o;
}

void print_progress(const std::string& line) { std::fprintf(stderr, "  %s\n", line.c_str()); }

void run(const SweepArgs& a) {
  if (a.model.empty()) throw std::invalid_argument("--model DIR is required");
  const SweepPlan plan = make_plan(a);
  const ModelShape shape = load_model_shape(a.model);
  const GpuSpec spec = choose_spec(a);
  std::filesystem::create_directories(a.out_dir);

  const gpu::BackendOptions options = backend_options(a, plan);
  std::unique_ptr<gpu::Backend> backend = gpu::make_backend(options);
  const gpu::CacheGeometry geo = backend->cache_geometry();
  std::fprintf(stderr, "sweep on %s: KV cache %d blocks of %d tokens; lines for %s (%.4g GB/s, %.4g/%.4g TFLOPS)\n",
               backend->name().c_str(), geo.num_gpu_blocks, geo.block_size, spec.name.c_str(), spec.mem_bw_gbs,
               spec.bf16_tflops, spec.int8_tflops);

  const SweepResult r = run_sweep(*backend, plan, shape, spec, print_progress);
  PlotRequest plots;
  plots.out_dir = a.out_dir;
  char figures[128];
  std::snprintf(figures, sizeof figures, "%.4g GB/s, %.4g TFLOPS (8-bit %.4g)", spec.mem_bw_gbs, spec.bf16_tflops,
                spec.int8_tflops);
  std::filesystem::path model_path(a.model);
  if (model_path.filename().empty()) model_path = model_path.parent_path();  // "DIR/"
  plots.title = model_path.filename().string() + " (" + shape.architecture + ") on " +
                backend->name() + "; lines for " + spec.name + ": " + figures;
  if (!r.prefill.empty()) {
    write_text_file(a.out_dir + "/prefill.csv", prefill_csv(r.prefill));
    plots.prefill = true;
  }
  if (!r.decode.empty()) {
    write_text_file(a.out_dir + "/decode.csv", decode_csv(r.decode));
    for (const auto& p : r.decode) {
      if (std::find(plots.contexts.begin(), plots.contexts.end(), p.context) == plots.contexts.end()) {
        plots.contexts.push_back(p.context);
      }
    }
  }
  const PlotOutcome outcome = make_plots(plots);

  std::fputs(sweep_table(r).c_str(), stdout);
  std::printf("\nwrote %s:%s%s", a.out_dir.c_str(), plots.prefill ? " prefill.csv" : "",
              plots.contexts.empty() ? "" : " decode.csv");
  for (const auto& s : outcome.scripts) std::printf(" %s", std::filesystem::path(s).filename().c_str());
  for (const auto& s : outcome.images) std::printf(" %s", std::filesystem::path(s).filename().c_str());
  std::printf("\n");
  if (!outcome.note.empty()) std::printf("note: %s\n", outcome.note.c_str());
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto a = std::make_shared<SweepArgs>();
  auto* cmd = app.add_subcommand("sweep", "prefill and decode curves on the engine, against the theoretical lines");
  cmd->add_option("--model", a->model, "model folder")->required();
  cmd->add_option("--device", a->device, "cpu or cuda")->capture_default_str();
  cmd->add_option("--mode", a->mode, "prefill, decode or both")->capture_default_str();
  cmd->add_option("--prefill-lens", a->prefill_lens, "prompt lengths")->delimiter(',')->capture_default_str();
  cmd->add_option("--users", a->users, "concurrent users (decode batch sizes)")->delimiter(',')->capture_default_str();
  cmd->add_option("--contexts", a->contexts, "decode context lengths")->delimiter(',')->capture_default_str();
  cmd->add_option("--gpu", a->gpu, "GPU of the built-in table for the lines, or 'measured' (this machine's CPU or GPU)");
  cmd->add_option("--mem-bw", a->mem_bw, "memory bandwidth in GB/s for the lines (overrides --gpu)");
  cmd->add_option("--tflops", a->tflops, "bf16 rate in TFLOPS for the lines (overrides --gpu)");
  cmd->add_option("--tflops-8bit", a->tflops_8bit, "8-bit rate in TFLOPS for the w8 line (default: --tflops)");
  cmd->add_option("--out-dir", a->out_dir, "folder for the CSV files, scripts and plots")->capture_default_str();
  cmd->add_option("--repeat", a->repeat, "timed runs per point (median), after one warm-up")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--seed", a->seed, "seed of the random token ids")->capture_default_str();
  cmd->add_option("--num-gpu-blocks", a->num_gpu_blocks,
                  "KV cache blocks (default: cpu, what the largest point needs; cuda, the free memory)");
  cmd->add_option("--threads", a->threads, "CPU backend threads (0 = all cores)");
  cmd->add_flag("--error-on-unfit", a->error_on_unfit,
                "fail when a decode point does not fit in the KV cache (default: skip it and say so)");
  cmd->callback([a] { run(*a); });
}

}  // namespace zinfer::bench
