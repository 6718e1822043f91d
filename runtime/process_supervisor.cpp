#include "runtime/process_supervisor.h"

#include <algorithm>
#include <csignal>
#include <stdexcept>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/control_channel.h"
#include "runtime/logging.h"
#include "runtime/peer_notice.h"
#include "runtime/signals.h"

extern char** environ;

namespace zinfer::runtime {

namespace {

using Clock = std::chrono::steady_clock;

// The fd number a child finds its end of the control channel at.
constexpr int kChildControlFd = 3;

struct Child {
  std::string name;
  pid_t pid = -1;
  ControlChannel channel;
  bool ready = false;  // answered its first heartbeat
  Clock::time_point started;
  Clock::time_point last_beat;
  int generation = 0;  // restarts so far
};

class Launcher {
 public:
  explicit Launcher(const ProcessSupervisorOptions& o) : o_(o), log_(logger("launch")) {
    sigset_t empty;
    sigemptyset(&empty);
    posix_spawnattr_init(&attr_);
    // Children start with the default signal mask so SIGTERM ends them normally (they block it
    // themselves and wait for it).
    posix_spawnattr_setsigmask(&attr_, &empty);
    posix_spawnattr_setflags(&attr_, POSIX_SPAWN_SETSIGMASK);
  }
  ~Launcher() { posix_spawnattr_destroy(&attr_); }

  int run() {
    for (const auto& name : o_.actors) {
      children_.push_back(Child{});
      children_.back().name = name;
      try {
        start(children_.back());
      } catch (...) {
        children_.pop_back();
        stop_all();
        throw;
      }
    }
    for (;;) {
      wait_for_messages();
      if (int sig = wait_for_shutdown_signal(std::chrono::milliseconds(0)); sig != 0) {
        log_->info("signal {}: stopping actors", sig);
        stop_all();
        return 0;
      }
      read_heartbeats();
      if (!reap_and_restart() || !check_heartbeats()) {
        stop_all();
        return 1;
      }
    }
  }

 private:
  void start(Child& c) {
    auto [ours, theirs] = ControlChannel::make_pair();
    // dup2 onto fd 3 in the child clears close-on-exec there; the source must not be fd 3 itself
    // (a dup2 onto itself would leave the flag set).
    if (theirs.fd() == kChildControlFd) {
      int moved = ::fcntl(theirs.fd(), F_DUPFD_CLOEXEC, 10);
      if (moved < 0) throw std::runtime_error("cannot move a control channel's descriptor");
      theirs = ControlChannel(moved);
    }
    std::vector<std::string> args = {o_.exe,         "actor",
                                     c.name,         "--config",
                                     o_.config_path, "--control-fd",
                                     std::to_string(kChildControlFd), "--launcher-pid",
                                     std::to_string(::getpid()),      "--heartbeat-ms",
                                     std::to_string(o_.heartbeat_interval.count())};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, theirs.fd(), kChildControlFd);
    pid_t pid = 0;
    int rc = posix_spawn(&pid, o_.exe.c_str(), &actions, &attr_, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) throw std::runtime_error("cannot start actor process " + c.name);
    c.pid = pid;
    c.channel = std::move(ours);
    c.ready = false;
    c.started = Clock::now();
    log_->info("started actor {} as pid {}{}", c.name, pid,
               c.generation > 0 ? " (restart " + std::to_string(c.generation) + ")" : std::string());
  }

  void wait_for_messages() {
    std::vector<pollfd> fds;
    for (auto& c : children_) {
      if (!c.channel.closed()) fds.push_back(pollfd{c.channel.fd(), POLLIN, 0});
    }
    const int timeout_ms = static_cast<int>(std::clamp<int64_t>(o_.heartbeat_interval.count() / 2, 10, 100));
    if (fds.empty()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(timeout_ms));
    } else {
      ::poll(fds.data(), fds.size(), timeout_ms);
    }
  }

  void read_heartbeats() {
    for (auto& c : children_) {
      bool beat = false;
      while (auto m = c.channel.recv()) beat = true;
      if (!beat) continue;
      c.last_beat = Clock::now();
      if (!c.ready) became_ready(c);
    }
  }

  void became_ready(Child& c) {
    c.ready = true;
    const double took = std::chrono::duration<double>(Clock::now() - c.started).count();
    if (c.generation > 0) {
      log_->warn("actor {} (pid {}) is back after its restart, {:.2f} s after its start", c.name, c.pid, took);
    } else {
      log_->info("actor {} (pid {}) answers, {:.2f} s after its start", c.name, c.pid, took);
    }
    // It may have missed what happened while it started.
    for (auto& other : children_) {
      if (&other != &c && !other.ready) c.channel.send(PeerNotice{PeerNotice::Kind::kDown, other.name}.to_string());
    }
    // Those that answered before it heard "down" for it (above, when they answered).
    tell_others(c.name, PeerNotice{PeerNotice::Kind::kUp, c.name});
  }

  void tell_others(const std::string& about, const PeerNotice& notice) {
    const std::string text = notice.to_string();
    for (auto& other : children_) {
      if (other.name != about && other.ready) other.channel.send(text);
    }
  }

  Child* find(pid_t pid) {
    for (auto& c : children_) {
      if (c.pid == pid) return &c;
    }
    return nullptr;
  }

  // False when a child that never answered died (a start-up failure).
  bool reap_and_restart() {
    for (;;) {
      int status = 0;
      pid_t pid = ::waitpid(-1, &status, WNOHANG);
      if (pid <= 0) return true;
      Child* c = find(pid);
      if (c == nullptr) continue;  // one killed as part of a restart group, already replaced
      const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      c->pid = -1;
      if (!restart(*c, "exited with status " + std::to_string(code))) return false;
    }
  }

  // False when a child that never answered died (a start-up failure).
  bool check_heartbeats() {
    const auto now = Clock::now();
    for (auto& c : children_) {
      if (!c.ready || c.pid < 0 || now - c.last_beat <= o_.heartbeat_timeout) continue;
      const double silent = std::chrono::duration<double>(now - c.last_beat).count();
      log_->error("actor {} (pid {}) has not answered for {:.1f} s (heartbeat timeout {} ms): stalled; killing it",
                  c.name, c.pid, silent, o_.heartbeat_timeout.count());
      kill_now(c);
      if (!restart(c, "stalled")) return false;
    }
    return true;
  }

  void kill_now(Child& c) {
    if (c.pid < 0) return;
    ::kill(c.pid, SIGKILL);  // also ends a stopped (SIGSTOP) process
    int status = 0;
    ::waitpid(c.pid, &status, 0);
    c.pid = -1;
  }

  bool restart(Child& dead, const std::string& why) {
    if (!dead.ready) {
      log_->error("actor {} {} before it answered its first heartbeat (it failed to start); stopping the others",
                  dead.name, why);
      return false;
    }
    std::vector<std::string> group = {dead.name};
    if (auto it = o_.restarts_with.find(dead.name); it != o_.restarts_with.end()) {
      for (const auto& n : it->second) {
        if (std::find(o_.actors.begin(), o_.actors.end(), n) != o_.actors.end()) group.push_back(n);
      }
    }
    log_->error("actor {} {}; restarting {}", dead.name, why,
                group.size() == 1 ? std::string("it") : "it with " + std::to_string(group.size() - 1) + " actor(s) that hold its state");
    // Everyone else hears at once, of the dead one first: they fail what the group held
    // (docs/architecture.md, I38).
    for (const auto& name : group) {
      Child& c = *std::find_if(children_.begin(), children_.end(), [&](const Child& x) { return x.name == name; });
      c.ready = false;
      for (auto& other : children_) {
        if (std::find(group.begin(), group.end(), other.name) == group.end() && other.ready) {
          other.channel.send(PeerNotice{PeerNotice::Kind::kDown, c.name}.to_string());
        }
      }
    }
    for (auto& c : children_) {
      if (std::find(group.begin(), group.end(), c.name) == group.end()) continue;
      if (c.pid >= 0) log_->warn("stopping actor {} (pid {}): its state was {}'s", c.name, c.pid, dead.name);
      kill_now(c);
      c.channel = ControlChannel();
    }
    for (auto& c : children_) {  // in start order
      if (std::find(group.begin(), group.end(), c.name) == group.end()) continue;
      ++c.generation;
      start(c);
    }
    return true;
  }

  void stop_all() {
    for (auto it = children_.rbegin(); it != children_.rend(); ++it) {
      Child& c = *it;
      if (c.pid < 0) continue;
      ::kill(c.pid, SIGTERM);
      const auto deadline = Clock::now() + o_.stop_timeout;
      int status = 0;
      while (::waitpid(c.pid, &status, WNOHANG) == 0) {
        if (Clock::now() > deadline) {
          log_->warn("actor {} (pid {}) did not stop; killing it", c.name, c.pid);
          ::kill(c.pid, SIGKILL);
          ::waitpid(c.pid, &status, 0);
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      c.pid = -1;
    }
  }

  const ProcessSupervisorOptions& o_;
  std::shared_ptr<spdlog::logger> log_;
  posix_spawnattr_t attr_;
  std::vector<Child> children_;
};

}  // namespace

int run_processes(const ProcessSupervisorOptions& options) {
  Launcher launcher(options);
  return launcher.run();
}

}  // namespace zinfer::runtime
