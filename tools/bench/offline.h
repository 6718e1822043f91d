// Offline benchmarks through the real actors (actors::LocalPipeline: tokenizer -> scheduler <->
// executor -> detokenizer, no HTTP): `latency` (a fixed batch, time per prefill and per decode
// step) and `throughput` (N random prompts at once; requests/s and tokens/s).
#pragma once

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "tools/flags/setting_flags.h"

namespace zinfer::bench {

struct OfflineArgs {
  std::string config;            // optional TOML for the other settings
  cli::SettingFlags flags;       // --model, --device, --max-num-seqs, --max-num-batched-tokens
  int input_len = 128;
  int output_len = 32;
  int batch_size = 1;            // latency
  int num_iters = 3;             // latency
  int num_prompts = 100;         // throughput
  int64_t seed = 0;
  bool json = false;
};

void add_offline_options(CLI::App& cmd, OfflineArgs& args);
void run_latency(const OfflineArgs& args);
void run_throughput(const OfflineArgs& args);

}  // namespace zinfer::bench
