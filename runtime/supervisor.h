// Starts the configured actors and watches them. Actors are registered by name with a factory
// that builds their body (from whatever configuration the registrant bound into it: the runtime
// knows no actor and no actor's settings by itself). Two modes:
//  - threads: every actor a thread of this process (`zinfer serve`), started in order, each start
//    blocking until that actor is ready; stopped in reverse order.
//  - processes: every actor its own process (`zinfer launch`), running `EXE actor NAME --config F`;
//    if one exits, the others are stopped and launch returns non-zero.
#pragma once

#include <chrono>
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

  // Processes: starts them, then waits for SIGINT/SIGTERM or for a child to exit; stops all, one
  // at a time in reverse start order (as threads are), each given `stop_timeout` to exit before it
  // is killed (the gateway, started last, drains its requests while the others still serve).
  // Returns the exit status for the launcher (0 after a signal, 1 when a child died).
  int run_processes(const std::string& exe, const std::string& config_path, const std::vector<std::string>& names,
                    std::chrono::milliseconds stop_timeout = std::chrono::seconds(10));

 private:
  std::map<std::string, Factory> factories_;
  std::vector<std::unique_ptr<Actor>> running_;
};

}  // namespace zinfer::runtime
