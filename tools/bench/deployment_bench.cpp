#include "tools/bench/deployment_bench.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <stdexcept>

#include <unistd.h>

#include <zmq.hpp>

#include "protocol/envelope.h"
#include "runtime/context.h"
#include "runtime/link.h"
#include "runtime/logging.h"
#include "runtime/loop.h"
#include "runtime/messaging.h"
#include "tools/bench/actor_deployment.h"
#include "tools/bench/lib/step_window.h"
#include "tools/bench/synthetic_request.h"

namespace zinfer::bench {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kBlockSize = 16;

// A folder of this run (the ipc sockets and the config file), removed at the end.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "zinfer-bench-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("cannot create a folder under " + pattern);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Ctrl-C (or SIGTERM) ends the measurement through an exception, so that the destructors stop the
// actors and remove the temporary folder.
std::atomic<bool> g_interrupted{false};

class InterruptGuard {
 public:
  InterruptGuard() {
    g_interrupted = false;
    struct sigaction sa {};
    sa.sa_handler = [](int) { g_interrupted = true; };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~InterruptGuard() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  static void check() {
    if (g_interrupted) throw std::runtime_error("interrupted");
  }

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

std::string toml_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

struct Sizing {
  int max_tokens = 0;
  int num_gpu_blocks = 0;
};

// Requests must outlive the measurement (a request that finishes ends the run), whatever the step
// rate: up to 65,536 generated tokens each, and at most 2^22 tokens of KV cache in all.
Sizing size_for(int running, int prompt_len, int steps) {
  Sizing s;
  s.max_tokens = std::min(65536, (1 << 22) / running) - prompt_len;
  if (s.max_tokens < 4 * steps) {
    throw std::invalid_argument("scheduler bench: --prompt-len " + std::to_string(prompt_len) + " at " +
                                std::to_string(running) + " running sequences leaves too few tokens to time " +
                                std::to_string(steps) + " steps");
  }
  const int blocks_per_seq = (prompt_len + s.max_tokens + kBlockSize - 1) / kBlockSize;
  s.num_gpu_blocks = running * blocks_per_seq + 16;
  return s;
}

std::string config_text(const std::string& deployment, const std::string& endpoint_prefix, int running,
                        const DeploymentBenchOptions& o, const Sizing& sizing) {
  // processes: the links with one sender per direction (scheduler <-> executor, scheduler ->
  // detokenizer) on shm:// rings, as configs/multiproc.toml; processes-ipc: all of them ipc://.
  auto endpoint = [&](const std::string& actor) {
    if (deployment == "threads") return "inproc://" + endpoint_prefix + "-" + actor;
    if (deployment == "processes" && (actor == "executor" || actor == "detokenizer")) {
      return "shm://" + endpoint_prefix + "/" + actor + ".shm";
    }
    return "ipc://" + endpoint_prefix + "/" + actor + ".ipc";
  };
  std::string t;
  t += "[model]\npath = " + toml_string(std::filesystem::absolute(o.model_dir).string()) + "\n";
  t += "device = \"synthetic\"\n";
  t += "max_model_len = " + std::to_string(o.prompt_len + sizing.max_tokens) + "\n";
  t += "[scheduler]\nmax_num_seqs = " + std::to_string(running) + "\n";
  t += "max_num_batched_tokens = " + std::to_string(std::max(2048, running)) + "\n";
  t += "max_plans_in_flight = " + std::to_string(o.plans_in_flight) + "\n";
  t += "[cache]\nblock_size = " + std::to_string(kBlockSize) + "\n";
  t += "num_gpu_blocks = " + std::to_string(sizing.num_gpu_blocks) + "\nnum_cpu_blocks = 64\n";
  t += "[endpoints]\n";
  for (const char* actor : {"tokenizer", "scheduler", "executor", "detokenizer", "gateway"}) {
    t += std::string(actor) + " = " + toml_string(endpoint(actor)) + "\n";
  }
  t += "[runtime]\nlog_level = \"warn\"\nactors = [\"executor\", \"scheduler\"]\n";
  return t;
}

std::string zinfer_exe(const DeploymentBenchOptions& o) {
  return o.zinfer_exe.empty() ? zinfer_next_to_this_executable() : o.zinfer_exe;
}

// One deployment at one count R: start the actors, admit R requests, time a window of steps.
nlohmann::json run_one(const std::string& deployment, int running, const DeploymentBenchOptions& o) {
  const std::string what = deployment + " deployment, " + std::to_string(running) + " running";
  const Sizing sizing = size_for(running, o.prompt_len, o.steps);
  TempDir dir;
  static std::atomic<int> run_counter{0};
  const std::string prefix = deployment == "threads"
                                 ? "zinfer-bench-" + std::to_string(getpid()) + "-" + std::to_string(++run_counter)
                                 : dir.path().string();
  const std::string text = config_text(deployment, prefix, running, o, sizing);
  const actors::EngineConfig config = actors::parse_engine_config(text, "zinfer-bench scheduler (" + what + ")");
  const std::string config_path = (dir.path() / "zinfer.toml").string();
  {
    std::ofstream f(config_path);
    f << text;
    if (!f) throw std::runtime_error("cannot write " + config_path);
  }

  // This process plays the detokenizer and the gateway (bound before the scheduler connects) and
  // the tokenizer. The detokenizer's endpoint is read as the detokenizer actor reads it
  // (runtime/link.h: a ZeroMQ PULL, or the binder's end of a shm:// ring).
  auto detok = runtime::open_link(runtime::Link::Role::kPull, config.endpoints.detokenizer);
  zmq::socket_t gateway(runtime::zmq_context(), zmq::socket_type::pull);
  runtime::configure_pipeline_socket(gateway);
  gateway.bind(config.endpoints.gateway);
  zmq::socket_t to_scheduler(runtime::zmq_context(), zmq::socket_type::push);
  runtime::configure_pipeline_socket(to_scheduler);
  to_scheduler.connect(config.endpoints.scheduler);

  std::unique_ptr<ActorDeployment> actors;
  try {
    // Actor threads log through this process's loggers: as quiet as the child processes.
    if (deployment == "threads") runtime::set_log_level(config.runtime.log_level);
    actors = deployment == "threads"
                 ? start_threads(config)
                 : start_processes(zinfer_exe(o), config_path);
  } catch (const std::exception& e) {
    throw std::runtime_error(what + ": the actors did not start: " + e.what());
  }

  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.timeout_s));
  bool admitted = false;
  int64_t detok_messages = 0, detok_bytes = 0;
  std::optional<protocol::Stats> last;
  StepWindow window(running, o.steps, o.plans_in_flight);
  std::optional<nlohmann::json> row;
  // A reactor of this thread, as the actors have: sockets and shm rings alike. It never spins:
  // this process stands in for actors that would otherwise compete for the cores being measured.
  runtime::Loop loop;
  loop.set_spin(std::chrono::microseconds(0));
  // Stats first (the loop calls socket handlers before ring handlers), stamped as soon as read:
  // their arrival times are the window's clock.
  loop.on(gateway, [&](zmq::socket_t& sock) {
    while (auto frame = runtime::recv_frame(sock, true)) {
      if (row) return;
      const auto now = Clock::now();
      protocol::Frame f = protocol::open(*frame);
      if (f.type() == protocol::MessageType::kErrorReply) {
        throw std::runtime_error(what + ": the scheduler refused a request: " + f.as<protocol::ErrorReply>().message);
      }
      if (f.type() != protocol::MessageType::kStats) continue;
      last = f.as<protocol::Stats>();
      if (!admitted) {
        // The first Stats says the scheduler is up and has its ExecutorInfo.
        for (int i = 0; i < running; ++i) {
          runtime::send_message(to_scheduler, synthetic_request(static_cast<uint64_t>(i + 1), o.prompt_len, sizing.max_tokens));
        }
        admitted = true;
        continue;
      }
      std::optional<StepWindowResult> w;
      try {
        w = window.add(StatsSample{now, *last, detok_messages, detok_bytes});
      } catch (const std::runtime_error& e) {
        throw std::runtime_error(what + ": " + e.what());
      }
      if (!w) continue;
      nlohmann::json r;
      r["deployment"] = deployment;
      r["running"] = running;
      r["prompt_len"] = o.prompt_len;
      r["steps"] = w->steps;
      r["seconds"] = w->seconds;
      r["us_per_step"] = w->seconds * 1e6 / static_cast<double>(w->steps);
      r["steps_per_s"] = static_cast<double>(w->steps) / w->seconds;
      r["tokens_per_s"] = static_cast<double>(w->tokens) / w->seconds;
      r["detok_messages_per_step"] = static_cast<double>(w->detok_messages) / static_cast<double>(w->steps);
      r["detok_bytes_per_step"] = static_cast<double>(w->detok_bytes) / static_cast<double>(w->steps);
      r["context_tokens_at_end"] = o.prompt_len + w->generation_tokens_at_end / running;
      r["windows_dropped"] = window.windows_dropped();
      row = std::move(r);
      return;
    }
  });
  // What the scheduler sends the detokenizer is drained (the scheduler must never block on it)
  // and counted, not decoded: its format is the scheduler's business.
  detok->watch(loop, [&](runtime::Link& link) {
    for (int i = 0; i < 256; ++i) {
      auto frame = link.recv();
      if (!frame) break;
      ++detok_messages;
      detok_bytes += static_cast<int64_t>(frame->size());
    }
  });
  for (;;) {
    InterruptGuard::check();
    try {
      actors->check_alive();
    } catch (const std::exception& e) {
      throw std::runtime_error(what + ": " + e.what());
    }
    if (Clock::now() > deadline) {
      std::string state = last ? " (last Stats: running " + std::to_string(last->running) + ", waiting " +
                                     std::to_string(last->waiting) + ", steps " + std::to_string(last->steps) + ")"
                               : " (no Stats from the scheduler)";
      throw std::runtime_error(what + ": no measurement within " + std::to_string(o.timeout_s) + " s" + state);
    }
    loop.run_once(std::chrono::milliseconds(100));
    if (row) return *row;
  }
}

}  // namespace

void check_deployment_options(const DeploymentBenchOptions& o) {
  for (const auto& d : o.deployments) {
    if (d != "threads" && d != "processes" && d != "processes-ipc") {
      throw std::invalid_argument("scheduler bench: unknown deployment '" + d +
                                  "' (expected threads, processes or processes-ipc)");
    }
  }
  if (!std::filesystem::is_regular_file(std::filesystem::path(o.model_dir) / "config.json")) {
    throw std::invalid_argument("scheduler bench: no config.json in the model folder '" + o.model_dir +
                                "' (pass --model DIR; the synthetic backend reads nothing else)");
  }
  for (int r : o.running) {
    if (r < 1) throw std::invalid_argument("scheduler bench: --running values must be >= 1, got " + std::to_string(r));
    size_for(r, o.prompt_len, o.steps);
  }
  if (o.repeats < 1) throw std::invalid_argument("scheduler bench: --deployment-repeats must be >= 1");
  if (o.plans_in_flight < 1 || o.plans_in_flight > 8) {
    throw std::invalid_argument("scheduler bench: --plans-in-flight must be 1 to 8");
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

nlohmann::json bench_deployments(const DeploymentBenchOptions& o) {
  check_deployment_options(o);
  InterruptGuard interrupts;
  nlohmann::json report;
  report["rows"] = nlohmann::json::array();
  report["differences"] = nlohmann::json::array();
  report["plans_in_flight"] = o.plans_in_flight;
  for (const auto& d : o.deployments) {
    if (d != "threads") report["zinfer"] = zinfer_exe(o);
  }
  for (int r : o.running) {
    // The deployments take turns, so that a change of load on a shared machine falls on both.
    std::map<std::string, std::vector<double>> us;
    for (int repeat = 0; repeat < o.repeats; ++repeat) {
      for (const auto& d : o.deployments) {
        nlohmann::json row = run_one(d, r, o);
        row["repeat"] = repeat;
        us[d].push_back(row["us_per_step"].get<double>());
        report["rows"].push_back(std::move(row));
      }
    }
    if (!us.count("threads")) continue;
    const double threads_us = median(us["threads"]);
    for (const char* d : {"processes", "processes-ipc"}) {
      if (!us.count(d)) continue;
      const double processes_us = median(us[d]);
      report["differences"].push_back({{"running", r},
                                       {"deployment", d},
                                       {"repeats", o.repeats},
                                       {"threads_us_per_step", threads_us},
                                       {"processes_us_per_step", processes_us},
                                       {"processes_vs_threads_percent", (processes_us - threads_us) / threads_us * 100.0}});
    }
  }
  return report;
}

void print_deployments(const nlohmann::json& report) {
  std::printf("\ncontrol plane through the actors (scheduler + executor actors, synthetic backend):\n");
  // The processes run this binary's actor code only if both were built from the same tree.
  if (report.contains("zinfer")) std::printf("processes run %s\n", report["zinfer"].get<std::string>().c_str());
  std::printf("%-10s %8s %8s %10s %10s %10s %12s %12s %10s\n", "deployment", "running", "steps", "window s", "us/step",
              "steps/s", "detok msg/st", "detok B/st", "context");
  for (const auto& j : report["rows"]) {
    std::printf("%-10s %8d %8lld %10.3f %10.1f %10.0f %12.1f %12.0f %10lld\n", j["deployment"].get<std::string>().c_str(),
                j["running"].get<int>(), static_cast<long long>(j["steps"].get<int64_t>()), j["seconds"].get<double>(),
                j["us_per_step"].get<double>(), j["steps_per_s"].get<double>(), j["detok_messages_per_step"].get<double>(),
                j["detok_bytes_per_step"].get<double>(), static_cast<long long>(j["context_tokens_at_end"].get<int64_t>()));
  }
  if (report["differences"].empty()) return;
  const int repeats = report["differences"][0]["repeats"].get<int>();
  std::printf("\n%8s %-14s %12s %12s %14s%s\n", "running", "deployment", "threads us", "processes us", "vs threads",
              repeats > 1 ? ("   (medians of " + std::to_string(repeats) + " runs each)").c_str() : "");
  for (const auto& j : report["differences"]) {
    std::printf("%8d %-14s %12.1f %12.1f %+13.1f%%\n", j["running"].get<int>(), j["deployment"].get<std::string>().c_str(),
                j["threads_us_per_step"].get<double>(), j["processes_us_per_step"].get<double>(),
                j["processes_vs_threads_percent"].get<double>());
  }
}

}  // namespace zinfer::bench
