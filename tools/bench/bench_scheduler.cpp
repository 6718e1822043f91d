// `zinfer-bench scheduler`: the control plane alone. A synthetic executor answers every plan at
// once (one token per sampling sequence), so what is timed is what the scheduler side costs per
// step: SchedulerCore::schedule(), the msgpack encode + decode of the StepPlan and of the
// StepResult (both ends of the socket, in one process), postprocess(), and the encode of the
// RequestStart/TokenDeltaBatch messages it emits. No sockets: the transport is measured by
// `zinfer-bench runtime`.
//
//   zinfer-bench scheduler [--running 1,64,256] [--steps 500] [--prompt-len 128]
//                          [--queued 10000] [--queued-prompt-len 64] [--queued-max-tokens 32]
//                          [--json]
//                          [--deployments threads,processes,processes-ipc] [--model DIR] [--zinfer PATH]
//                          [--deployment-repeats 1] [--deployment-timeout 120] [--plans-in-flight 2]
//
// Part 1, for each count R of --running: R requests are admitted and prefilled (untimed), then
// --steps decode steps of all R sequences are timed, per phase. Part 2: --queued requests are
// queued at once (max_num_seqs 256, max_num_batched_tokens 2048) and run to the end; it reports
// steps/s while the queue is deep (the first 1000 steps) and over the whole run. Part 3 (only
// with --deployments): the same decode steps through the real scheduler and executor actors over
// their links, as threads and/or as processes (shm:// rings, or all ipc://) (deployment_bench.h).
#include <algorithm>
#include <chrono>
#include <memory>
#include <cstdio>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "actors/scheduler/scheduler_core.h"
#include "protocol/block_table_delta.h"
#include "protocol/envelope.h"
#include "tools/bench/commands.h"
#include "tools/bench/deployment_bench.h"
#include "tools/bench/synthetic_request.h"

namespace zinfer::bench {

namespace {

using Clock = std::chrono::steady_clock;
using scheduler::SchedulerConfig;
using scheduler::SchedulerCore;

struct SchedulerBenchOptions {
  std::vector<int> running = {1, 64, 256};
  int steps = 500;
  int prompt_len = 128;
  int queued = 10000;
  int queued_prompt_len = 64;
  int queued_max_tokens = 32;
  bool json = false;
  // Part 3: the same decode steps through the scheduler and executor actors, per deployment.
  std::vector<std::string> deployments;
  std::string model_dir = "models/default";
  std::string zinfer_exe;
  double deployment_timeout_s = 120.0;
  int deployment_repeats = 1;
  int plans_in_flight = 2;
};

// Nanoseconds spent in each phase of one step.
struct StepPhases {
  double schedule = 0, encode_plan = 0, decode_plan = 0, encode_result = 0, decode_result = 0, postprocess = 0,
         emit = 0;
  double total() const {
    return schedule + encode_plan + decode_plan + encode_result + decode_result + postprocess + emit;
  }
};

double ns_between(Clock::time_point a, Clock::time_point b) {
  return static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count());
}

// The synthetic executor: one token per sampling sequence, a value that never stops a request.
protocol::StepResult answer(const protocol::StepPlan& plan) {
  protocol::StepResult r;
  r.step_id = plan.step_id;
  r.outputs.reserve(plan.seqs.size());
  for (const auto& w : plan.seqs) {
    if (!w.sample) continue;
    protocol::SeqOutput o;
    o.seq_id = w.seq_id;
    o.token = static_cast<int32_t>(1000 + (w.seq_id * 31 + static_cast<uint64_t>(w.sample_index)) % 30000);
    o.logprob = -0.5f;
    r.outputs.push_back(std::move(o));
  }
  return r;
}

// The scheduler core and the executor's end of its socket: plans travel with block-table deltas
// as in the actors (the core plans them, timed with schedule; the mirror lends whole tables for
// the step and takes them back, timed with the decode).
struct ControlPlane {
  explicit ControlPlane(SchedulerConfig c) : core(with_deltas(std::move(c))) {}
  static SchedulerConfig with_deltas(SchedulerConfig c) {
    c.block_table_deltas = true;
    return c;
  }
  SchedulerCore core;
  protocol::BlockTableMirror mirror;
  protocol::StepPlan received;  // the executor decodes each plan into the last one, as its actor does
};

// One step through the whole control plane. Returns false when there was nothing to plan.
bool run_step(ControlPlane& cp, StepPhases& ph, size_t* plan_seqs = nullptr, size_t* wire_bytes = nullptr,
              size_t* plan_tokens = nullptr) {
  SchedulerCore& core = cp.core;
  auto t0 = Clock::now();
  auto plan = core.schedule();
  auto t1 = Clock::now();
  if (!plan) return false;
  std::string plan_wire = protocol::encode(*plan);
  core.recycle(std::move(*plan));  // as the scheduler actor does once the plan is sent
  auto t2 = Clock::now();
  protocol::StepPlan& received = cp.received;
  protocol::decode_into(plan_wire, received);
  cp.mirror.lend(received);
  auto t3 = Clock::now();
  protocol::StepResult result = answer(received);  // the executor: not control plane
  auto t4a = Clock::now();
  for (auto& w : received.seqs) cp.mirror.take_back(w.seq_id, std::move(w.block_table));
  auto t4 = Clock::now();
  std::string result_wire = protocol::encode(result);
  auto t5 = Clock::now();
  auto result_back = protocol::decode<protocol::StepResult>(result_wire);
  auto t6 = Clock::now();
  scheduler::SchedulerOutput out = core.postprocess(result_back);
  auto t7 = Clock::now();
  size_t emitted = 0;
  for (const auto& s : out.starts) emitted += protocol::encode(s).size();
  if (!out.deltas.empty()) {  // one TokenDeltaBatch per step, as the scheduler actor sends them
    protocol::TokenDeltaBatch batch;
    batch.deltas = std::move(out.deltas);
    emitted += protocol::encode(batch).size();
    core.recycle(std::move(batch.deltas));  // as the scheduler actor does once the batch is sent
  }
  auto t8 = Clock::now();
  ph.schedule = ns_between(t0, t1);
  ph.encode_plan = ns_between(t1, t2);
  ph.decode_plan = ns_between(t2, t3) + ns_between(t4a, t4);
  ph.encode_result = ns_between(t4, t5);
  ph.decode_result = ns_between(t5, t6);
  ph.postprocess = ns_between(t6, t7);
  ph.emit = ns_between(t7, t8);
  if (plan_seqs) *plan_seqs = received.seqs.size();
  if (plan_tokens) {
    *plan_tokens = 0;
    for (const auto& w : received.seqs) *plan_tokens += static_cast<size_t>(w.num_tokens);
  }
  if (wire_bytes) *wire_bytes = plan_wire.size() + result_wire.size() + emitted;
  return true;
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * (v.size() - 1) + 0.5))];
}

nlohmann::json bench_running(int running, const SchedulerBenchOptions& o) {
  // Prefill shares each step's 2048 tokens with the decodes of the sequences admitted before:
  // the warm-up runs until every sequence decodes (at most twice this estimate).
  const int warm = running * o.prompt_len / std::max(256, 2048 - running) + 8;
  const int max_tokens = 2 * warm + o.steps + 16;
  SchedulerConfig c;
  c.max_num_seqs = running;
  c.max_num_batched_tokens = 2048;
  c.max_model_len = o.prompt_len + max_tokens + 16;
  c.num_device_blocks = running * ((c.max_model_len + 15) / 16) + 16;
  c.max_plans_in_flight = 1;
  ControlPlane cp(c);
  SchedulerCore& core = cp.core;
  for (int i = 0; i < running; ++i) core.add_request(synthetic_request(static_cast<uint64_t>(i + 1), o.prompt_len, max_tokens));
  StepPhases ph;
  for (int i = 0; i < 2 * warm; ++i) {
    size_t seqs = 0, tokens = 0;
    run_step(cp, ph, &seqs, nullptr, &tokens);
    if (seqs == static_cast<size_t>(running) && tokens == seqs) break;
  }
  std::vector<StepPhases> samples;
  samples.reserve(o.steps);
  size_t bytes_total = 0;
  for (int i = 0; i < o.steps; ++i) {
    size_t seqs = 0, bytes = 0;
    if (!run_step(cp, ph, &seqs, &bytes)) throw std::runtime_error("scheduler bench: no plan while timing");
    if (seqs != static_cast<size_t>(running)) {
      throw std::runtime_error("scheduler bench: a timed step ran " + std::to_string(seqs) + " sequences, not " +
                               std::to_string(running));
    }
    bytes_total += bytes;
    samples.push_back(ph);
  }
  // Medians: the development machine is shared, so a mean mostly measures other people's jobs.
  auto median_of = [&](double StepPhases::*field) {
    std::vector<double> v;
    for (const auto& p : samples) v.push_back(p.*field / 1000.0);
    return percentile(std::move(v), 0.5);
  };
  std::vector<double> totals;
  for (const auto& p : samples) totals.push_back(p.total() / 1000.0);
  nlohmann::json j;
  j["running"] = running;
  j["steps"] = o.steps;
  j["prompt_len"] = o.prompt_len;
  j["us_per_step_mean"] = std::accumulate(totals.begin(), totals.end(), 0.0) / totals.size();
  j["us_per_step_p50"] = percentile(totals, 0.5);
  j["us_per_step_p99"] = percentile(totals, 0.99);
  j["us_schedule"] = median_of(&StepPhases::schedule);
  j["us_encode_plan"] = median_of(&StepPhases::encode_plan);
  j["us_decode_plan"] = median_of(&StepPhases::decode_plan);
  j["us_encode_result"] = median_of(&StepPhases::encode_result);
  j["us_decode_result"] = median_of(&StepPhases::decode_result);
  j["us_postprocess"] = median_of(&StepPhases::postprocess);
  j["us_emit_deltas"] = median_of(&StepPhases::emit);
  j["wire_bytes_per_step"] = static_cast<double>(bytes_total) / o.steps;
  return j;
}

nlohmann::json bench_queued(const SchedulerBenchOptions& o) {
  SchedulerConfig c;
  c.max_num_seqs = 256;
  c.max_num_batched_tokens = 2048;
  c.max_model_len = o.queued_prompt_len + o.queued_max_tokens + 16;
  c.num_device_blocks = 256 * ((c.max_model_len + 15) / 16) + 64;
  c.max_plans_in_flight = 1;
  ControlPlane cp(c);
  SchedulerCore& core = cp.core;
  auto a0 = Clock::now();
  for (int i = 0; i < o.queued; ++i) {
    core.add_request(synthetic_request(static_cast<uint64_t>(i + 1), o.queued_prompt_len, o.queued_max_tokens));
  }
  auto a1 = Clock::now();
  StepPhases ph;
  int64_t steps = 0;
  double deep_seconds = 0;
  const int64_t deep_steps = 1000;
  auto r0 = Clock::now();
  while (run_step(cp, ph)) {
    if (++steps == deep_steps) deep_seconds = ns_between(r0, Clock::now()) / 1e9;
  }
  const double seconds = ns_between(r0, Clock::now()) / 1e9;
  if (core.has_unfinished()) throw std::runtime_error("scheduler bench: requests left after the queue drained");
  nlohmann::json j;
  j["queued"] = o.queued;
  j["prompt_len"] = o.queued_prompt_len;
  j["max_tokens"] = o.queued_max_tokens;
  j["add_request_us_each"] = ns_between(a0, a1) / 1000.0 / o.queued;
  j["steps"] = steps;
  j["seconds"] = seconds;
  j["steps_per_s"] = steps / seconds;
  j["requests_per_s"] = o.queued / seconds;
  j["generated_tokens_per_s"] = static_cast<double>(o.queued) * o.queued_max_tokens / seconds;
  if (deep_seconds > 0) j["steps_per_s_first_1000"] = deep_steps / deep_seconds;
  return j;
}

void run_scheduler_bench(const SchedulerBenchOptions& o) {
  if (o.steps < 1 || o.prompt_len < 1 || o.queued < 0 || o.queued_prompt_len < 1 || o.queued_max_tokens < 1) {
    throw std::invalid_argument("scheduler bench: --steps, --prompt-len, --queued-prompt-len and --queued-max-tokens must be >= 1");
  }
  DeploymentBenchOptions d;
  d.deployments = o.deployments;
  d.running = o.running;
  d.steps = o.steps;
  d.prompt_len = o.prompt_len;
  d.model_dir = o.model_dir;
  d.zinfer_exe = o.zinfer_exe;
  d.timeout_s = o.deployment_timeout_s;
  d.repeats = o.deployment_repeats;
  d.plans_in_flight = o.plans_in_flight;
  if (!d.deployments.empty()) check_deployment_options(d);  // before parts 1 and 2 take their time
  nlohmann::json report;
  report["running"] = nlohmann::json::array();
  for (int r : o.running) {
    if (r < 1) throw std::invalid_argument("scheduler bench: --running values must be >= 1, got " + std::to_string(r));
    report["running"].push_back(bench_running(r, o));
  }
  if (o.queued > 0) report["queued"] = bench_queued(o);
  if (!o.deployments.empty()) {
    report["deployments"] = bench_deployments(d);
  }
  if (o.json) {
    std::printf("%s\n", report.dump(2).c_str());
    return;
  }
  std::printf("control plane per step (us over %d decode steps, prompt %d tokens; phases are medians)\n", o.steps, o.prompt_len);
  std::printf("%8s %8s %8s %8s | %8s %8s %8s %8s %8s %8s %8s | %10s\n", "running", "mean", "p50", "p99", "sched",
              "enc_plan", "dec_plan", "enc_res", "dec_res", "post", "emit", "bytes/step");
  for (const auto& j : report["running"]) {
    std::printf("%8d %8.1f %8.1f %8.1f | %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f | %10.0f\n",
                j["running"].get<int>(),
                j["us_per_step_mean"].get<double>(), j["us_per_step_p50"].get<double>(),
                j["us_per_step_p99"].get<double>(), j["us_schedule"].get<double>(), j["us_encode_plan"].get<double>(),
                j["us_decode_plan"].get<double>(), j["us_encode_result"].get<double>(),
                j["us_decode_result"].get<double>(), j["us_postprocess"].get<double>(),
                j["us_emit_deltas"].get<double>(), j["wire_bytes_per_step"].get<double>());
  }
  if (report.contains("queued")) {
    const auto& q = report["queued"];
    std::printf("\n%d queued requests (prompt %d, max_tokens %d): %lld steps in %.3f s = %.0f steps/s "
                "(first 1000 steps: %.0f steps/s), %.0f requests/s, add_request %.2f us each\n",
                q["queued"].get<int>(), q["prompt_len"].get<int>(), q["max_tokens"].get<int>(),
                static_cast<long long>(q["steps"].get<int64_t>()), q["seconds"].get<double>(),
                q["steps_per_s"].get<double>(), q.value("steps_per_s_first_1000", 0.0),
                q["requests_per_s"].get<double>(), q["add_request_us_each"].get<double>());
  }
  if (report.contains("deployments")) print_deployments(report["deployments"]);
}

}  // namespace

void add_scheduler_command(CLI::App& app) {
  auto opts = std::make_shared<SchedulerBenchOptions>();
  auto* cmd = app.add_subcommand("scheduler", "control-plane cost per step: scheduler + KV manager + message codecs");
  cmd->add_option("--running", opts->running, "running sequence counts to time (comma separated)")->delimiter(',');
  cmd->add_option("--steps", opts->steps, "timed decode steps per count");
  cmd->add_option("--prompt-len", opts->prompt_len, "prompt tokens of each running sequence");
  cmd->add_option("--queued", opts->queued, "requests queued at once for the steps/s run (0: skip)");
  cmd->add_option("--queued-prompt-len", opts->queued_prompt_len, "prompt tokens of each queued request");
  cmd->add_option("--queued-max-tokens", opts->queued_max_tokens, "tokens generated by each queued request");
  cmd->add_flag("--json", opts->json, "print the results as JSON");
  cmd->add_option("--deployments", opts->deployments,
                  "also time the scheduler and executor actors deployed as threads and/or processes "
                  "(comma separated: threads, processes (one-sender links on shm://), processes-ipc (all ipc://))")
      ->delimiter(',');
  cmd->add_option("--model", opts->model_dir, "model folder for --deployments (only its config.json is read)");
  cmd->add_option("--zinfer", opts->zinfer_exe,
                  "the zinfer binary that --deployments processes runs (default: next to zinfer-bench)");
  cmd->add_option("--deployment-timeout", opts->deployment_timeout_s,
                  "seconds allowed per deployment and running count (start, admission, window)");
  cmd->add_option("--plans-in-flight", opts->plans_in_flight,
                  "[scheduler] max_plans_in_flight of the --deployments actors (1 to 8)");
  cmd->add_option("--deployment-repeats", opts->deployment_repeats,
                  "runs of each deployment per running count, taking turns (the difference uses the medians)");
  cmd->callback([opts] { run_scheduler_bench(*opts); });
}

}  // namespace zinfer::bench
