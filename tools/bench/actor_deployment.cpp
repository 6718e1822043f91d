#include "tools/bench/actor_deployment.h"

#include <chrono>
#include <csignal>
#include <filesystem>
#include <stdexcept>
#include <thread>
#include <utility>

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "actors/executor/executor_actor.h"
#include "actors/pipeline/scheduler_actor.h"

namespace zinfer::bench {

namespace {

class ThreadDeployment final : public ActorDeployment {
 public:
  explicit ThreadDeployment(const actors::EngineConfig& config) {
    executor_ = std::make_unique<runtime::Actor>("executor",
                                                 actors::executor_actor(actors::backend_options(config), config.endpoints));
    scheduler_ = std::make_unique<runtime::Actor>("scheduler", actors::scheduler_actor(config));
  }
  ~ThreadDeployment() override {
    // The scheduler first: it is the one sending plans to the executor.
    scheduler_.reset();
    executor_.reset();
  }
  void check_alive() override {
    if (!executor_->alive()) throw std::runtime_error("the executor actor thread stopped");
    if (!scheduler_->alive()) throw std::runtime_error("the scheduler actor thread stopped");
  }

 private:
  std::unique_ptr<runtime::Actor> executor_;
  std::unique_ptr<runtime::Actor> scheduler_;
};

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "signal " + std::to_string(WTERMSIG(status));
  return "status " + std::to_string(status);
}

class ProcessDeployment final : public ActorDeployment {
 public:
  ProcessDeployment(const std::string& exe, const std::string& config_path) {
    try {
      // Start order as `zinfer launch`: the executor, then the scheduler that connects to it.
      for (const char* name : {"executor", "scheduler"}) children_.push_back({name, spawn(exe, name, config_path)});
    } catch (...) {
      stop_all();
      throw;
    }
  }
  ~ProcessDeployment() override { stop_all(); }

  void check_alive() override {
    for (auto& c : children_) {
      if (c.pid <= 0) continue;
      int status = 0;
      if (waitpid(c.pid, &status, WNOHANG) == c.pid) {
        c.pid = -1;
        throw std::runtime_error("the " + c.name + " process exited (" + describe_status(status) +
                                 "); its log above says why");
      }
    }
  }

 private:
  struct Child {
    std::string name;
    pid_t pid = -1;
  };

  static pid_t spawn(const std::string& exe, const std::string& name, const std::string& config_path) {
    // Everything the child needs is built before fork(): between fork and exec only
    // async-signal-safe calls are allowed (this process has ZeroMQ threads).
    std::vector<std::string> args = {exe, "actor", name, "--config", config_path};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("cannot fork to start the " + name + " process");
    if (pid == 0) {
      // Die with the benchmark, whatever ends it (an error, Ctrl-C, SIGKILL).
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(127);
      sigset_t none;
      sigemptyset(&none);
      sigprocmask(SIG_SETMASK, &none, nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    return pid;
  }

  void stop_all() {
    for (auto it = children_.rbegin(); it != children_.rend(); ++it) {
      if (it->pid > 0) kill(it->pid, SIGTERM);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    for (auto& c : children_) {
      if (c.pid <= 0) continue;
      int status = 0;
      while (waitpid(c.pid, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > deadline) {
          kill(c.pid, SIGKILL);
          waitpid(c.pid, &status, 0);
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      c.pid = -1;
    }
  }

  std::vector<Child> children_;
};

}  // namespace

std::unique_ptr<ActorDeployment> start_threads(const actors::EngineConfig& config) {
  return std::make_unique<ThreadDeployment>(config);
}

std::unique_ptr<ActorDeployment> start_processes(const std::string& zinfer_exe, const std::string& config_path) {
  if (access(zinfer_exe.c_str(), X_OK) != 0 || std::filesystem::is_directory(zinfer_exe)) {
    throw std::runtime_error("the processes deployment needs the `zinfer` binary, not found at '" + zinfer_exe +
                             "' (build the zinfer target, or pass --zinfer PATH)");
  }
  return std::make_unique<ProcessDeployment>(zinfer_exe, config_path);
}

std::string zinfer_next_to_this_executable() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "zinfer";
  return (self.parent_path() / "zinfer").string();
}

}  // namespace zinfer::bench
