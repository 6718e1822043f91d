// The subcommands of `zinfer-bench`. Each lives in its own bench_*.cpp and registers itself.
#pragma once

#include <CLI/CLI.hpp>

namespace zinfer::bench {

void add_runtime_command(CLI::App& app);     // bench_runtime.cpp: actor-to-actor latency/throughput
void add_serve_command(CLI::App& app);       // bench_serve.cpp: load generator for a running server
void add_sweep_command(CLI::App& app);       // bench_sweep.cpp: prefill/decode curves vs theory
void add_roofline_command(CLI::App& app);    // bench_roofline.cpp: capacity calculator
void add_latency_command(CLI::App& app);     // bench_latency.cpp
void add_throughput_command(CLI::App& app);  // bench_throughput.cpp
void add_scheduler_command(CLI::App& app);   // bench_scheduler.cpp: control plane alone
void add_tokenizer_command(CLI::App& app);   // bench_tokenizer.cpp: encode throughput

}  // namespace zinfer::bench
