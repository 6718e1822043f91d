// Part 3 of `zinfer-bench scheduler`: the control plane through the real actors. For each
// deployment (threads of this process over inproc://; child processes with the scheduler <->
// executor and scheduler -> detokenizer links on shm:// rings and the others on ipc://, as
// configs/multiproc.toml: "processes"; or child processes with every link on ipc://:
// "processes-ipc") the
// scheduler actor and the executor actor (synthetic backend: `[model] device = "synthetic"`) run
// as zinfer runs them; this process plays the tokenizer (TokenizedRequests into the scheduler's
// PULL), the detokenizer (drains and counts what the scheduler sends it) and the gateway (reads
// the scheduler's periodic Stats). For each count R of running sequences it admits R requests,
// waits until all of them decode, and measures the wall clock over a window of at least `steps`
// steps (Stats.steps before and after). docs/benchmarks/scheduler.md describes the method.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace zinfer::bench {

struct DeploymentBenchOptions {
  std::vector<std::string> deployments;  // "threads", "processes" (shm:// + ipc://), "processes-ipc"
  std::vector<int> running = {1, 64, 256};
  int steps = 500;                       // the window is at least this many steps
  int prompt_len = 128;
  std::string model_dir = "models/default";  // only its config.json is read
  std::string zinfer_exe;                // "" = `zinfer` next to this executable
  double timeout_s = 120.0;              // per deployment and count: start, admission and window
  int repeats = 1;                       // runs of each deployment per count, taking turns
  int plans_in_flight = 2;               // [scheduler] max_plans_in_flight of both deployments
};

// One row per run (deployment, R, repeat) under "rows", and for each R and each processes
// deployment measured with threads too, the medians and their difference under "differences"
// (keyed by "deployment"). Throws std::invalid_argument for bad options and
// std::runtime_error when a deployment fails (naming it and R).
nlohmann::json bench_deployments(const DeploymentBenchOptions& options);

// The checks bench_deployments starts with (deployment names, the model's config.json, counts and
// lengths), for callers that want them before other work. Throws std::invalid_argument.
void check_deployment_options(const DeploymentBenchOptions& options);

void print_deployments(const nlohmann::json& report);

}  // namespace zinfer::bench
