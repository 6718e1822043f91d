// Starts the configured actors and watches them. Actors are registered by name with a factory
// that builds their body (from whatever configuration the registrant bound into it: the runtime
// knows no actor and no actor's settings by itself). Two modes:
//  - threads: every actor a thread of this process (`zinfer serve`), started in order, each start
//    blocking until that actor is ready; stopped in reverse order.
//  - processes: every actor its own process (`zinfer launch`): runtime/process_supervisor.h.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/actor.h"

namespace zinfer::runtime {

class Supervisor {
 public:
  using Factory = std::function<ActorBody()>;

  void register_actor(const std::string& name, Factory factory);
  bool knows(const std::string& name) const { return factories_.count(name) != 0; }
  std::vector<std::string> names() const;

  // Threads of this process. Throws (after stopping what started) when one fails to start.
  void start_threads(const std::vector<std::string>& names);
  void stop_threads();
  // True while every started actor thread is alive.
  bool all_alive() const;

  // The first actor thread that stopped, as "NAME: why" ("" while all are alive).
  std::string stopped_actor() const;
  // Liveness of the threads (Actor::heartbeat): true while every actor's loop answered the
  // previous call.
  bool heartbeat();
  // The actors whose thread stopped or that did not answer the last heartbeat().
  std::vector<std::string> unanswered_or_stopped() const;
  // Hands every running actor but `except` a notice (runtime/peer_notice.h).
  void notify_all(const std::string& notice, const std::string& except = "");

 private:
  std::map<std::string, Factory> factories_;
  std::vector<std::unique_ptr<Actor>> running_;
};

}  // namespace zinfer::runtime
