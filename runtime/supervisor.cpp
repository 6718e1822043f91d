#include "runtime/supervisor.h"

#include <chrono>
#include <stdexcept>
#include <thread>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/logging.h"
#include "runtime/signals.h"

extern char** environ;

namespace zinfer::runtime {

void Supervisor::register_actor(const std::string& name, Factory factory) { factories_[name] = std::move(factory); }

std::vector<std::string> Supervisor::names() const {
  std::vector<std::string> out;
  for (auto& [n, _] : factories_) out.push_back(n);
  return out;
}

void Supervisor::start_threads(const std::vector<std::string>& names) {
  for (const auto& name : names) {
    auto it = factories_.find(name);
    if (it == factories_.end()) {
      stop_threads();
      throw std::runtime_error("unknown actor '" + name + "'");
    }
    try {
      running_.push_back(std::make_unique<Actor>(name, it->second()));
      logger("supervisor")->debug("actor {} ready", name);
    } catch (...) {
      stop_threads();
      throw;
    }
  }
}

void Supervisor::stop_threads() {
  while (!running_.empty()) {
    logger("supervisor")->debug("stopping actor {}", running_.back()->name());
    running_.back()->term();
    running_.pop_back();
  }
}

bool Supervisor::all_alive() const {
  for (auto& a : running_) {
    if (!a->alive()) return false;
  }
  return true;
}

int Supervisor::run_processes(const std::string& exe, const std::string& config_path,
                              const std::vector<std::string>& names, std::chrono::milliseconds stop_timeout) {
  auto log = logger("launch");
  std::vector<std::pair<std::string, pid_t>> children;
  auto stop_all = [&] {
    for (auto it = children.rbegin(); it != children.rend(); ++it) {
      auto& [name, pid] = *it;
      kill(pid, SIGTERM);
      const auto deadline = std::chrono::steady_clock::now() + stop_timeout;
      int status = 0;
      while (waitpid(pid, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > deadline) {
          log->warn("actor {} (pid {}) did not stop; killing it", name, pid);
          kill(pid, SIGKILL);
          waitpid(pid, &status, 0);
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
  };
  // Children start with the default signal mask so SIGTERM ends them normally (they block it
  // themselves and wait for it).
  sigset_t empty;
  sigemptyset(&empty);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  for (const auto& name : names) {
    if (!knows(name)) {
      stop_all();
      throw std::runtime_error("unknown actor '" + name + "'");
    }
    std::vector<std::string> args = {exe, "actor", name, "--config", config_path};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    if (posix_spawn(&pid, exe.c_str(), nullptr, &attr, argv.data(), environ) != 0) {
      stop_all();
      throw std::runtime_error("cannot start actor process " + name);
    }
    log->info("started actor {} as pid {}", name, pid);
    children.emplace_back(name, pid);
  }
  posix_spawnattr_destroy(&attr);
  for (;;) {
    int sig = wait_for_shutdown_signal(std::chrono::milliseconds(100));
    if (sig != 0) {
      log->info("signal {}: stopping actors", sig);
      stop_all();
      return 0;
    }
    for (auto it = children.begin(); it != children.end(); ++it) {
      int status = 0;
      if (waitpid(it->second, &status, WNOHANG) == it->second) {
        log->error("actor {} (pid {}) exited with status {}; stopping the others", it->first, it->second,
                   WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
        children.erase(it);
        stop_all();
        return 1;
      }
    }
  }
}

}  // namespace zinfer::runtime
