// The scheduler and executor actors of `zinfer-bench scheduler --deployments`, started the two ways
// zinfer deploys them: as threads of this process (what `zinfer serve` does; the endpoints must be
// inproc://) or as child processes `zinfer actor executor|scheduler --config FILE` (what `zinfer
// launch` does; ipc:// and shm:// endpoints). The caller binds the detokenizer's and the gateway's endpoints
// (it plays those actors) before starting a deployment. Destroying a deployment stops its actors;
// child processes also die with this process (PR_SET_PDEATHSIG), so an error, an exception or
// Ctrl-C never leaves one behind.
#pragma once

#include <memory>
#include <string>

#include "runtime/actor.h"
#include "actors/pipeline/engine_config.h"

namespace zinfer::bench {

class ActorDeployment {
 public:
  virtual ~ActorDeployment() = default;
  // Throws std::runtime_error naming the actor that has stopped (processes: with its exit status).
  virtual void check_alive() = 0;
};

// Starts the executor, then the scheduler; returns once both are ready (the scheduler has its
// ExecutorInfo). Throws what an actor reported as its start-up failure.
std::unique_ptr<ActorDeployment> start_threads(const actors::EngineConfig& config);

// Spawns `zinfer_exe actor executor|scheduler --config config_path`. Returns at once: the processes
// are ready when the scheduler's first Stats reaches the gateway endpoint. Throws when zinfer_exe
// is not an executable file.
std::unique_ptr<ActorDeployment> start_processes(const std::string& zinfer_exe, const std::string& config_path);

// The `zinfer` binary next to the running executable (/proc/self/exe's folder).
std::string zinfer_next_to_this_executable();

}  // namespace zinfer::bench
