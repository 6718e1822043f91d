#include "runtime/supervisor.h"

#include <stdexcept>

#include "runtime/logging.h"

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

std::string Supervisor::stopped_actor() const {
  for (auto& a : running_) {
    if (!a->alive()) {
      std::string why = a->failure();
      return a->name() + ": " + (why.empty() ? std::string("its thread ended") : why);
    }
  }
  return "";
}

bool Supervisor::heartbeat() {
  bool all = true;
  for (auto& a : running_) all = a->heartbeat() && all;
  return all;
}

std::vector<std::string> Supervisor::unanswered_or_stopped() const {
  std::vector<std::string> out;
  for (auto& a : running_) {
    if (!a->alive() || !a->answered()) out.push_back(a->name());
  }
  return out;
}

void Supervisor::notify_all(const std::string& notice, const std::string& except) {
  for (auto& a : running_) {
    if (a->name() != except) a->notify(notice);
  }
}

}  // namespace zinfer::runtime
