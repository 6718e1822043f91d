// `zinfer launch`'s supervisor: every actor its own process (`EXE actor NAME --config F
// --control-fd 3 --launcher-pid P --heartbeat-ms H`), watched through a control channel per
// child (runtime/control_channel.h) and restarted when it dies or stalls (docs/architecture.md,
// I38):
//  - a child heartbeats every `heartbeat_interval` while its actor's loop turns; one that misses
//    them for `heartbeat_timeout` after it first answered is stalled: it is killed (SIGKILL);
//  - a child that exits or is killed after it first answered is restarted, together with the
//    actors whose state is its own (`restarts_with`: the scheduler's sequences live on in the
//    executor's block tables and the detokenizer's decoders). Every other actor that answers
//    hears "down NAME" at once and "up NAME" once the replacement answers its first heartbeat;
//    a child that answers for the first time hears "down X" for every actor not answering yet;
//  - a child that exits before its first heartbeat (it failed to start: a bad model, a port in
//    use) stops the deployment: launch returns 1, as it would from a restart loop otherwise;
//  - SIGINT/SIGTERM stops the children one at a time in reverse start order, each given
//    `stop_timeout` before SIGKILL (the gateway, started last, drains first, I36); returns 0.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace zinfer::runtime {

struct ProcessSupervisorOptions {
  std::string exe;          // this program
  std::string config_path;  // passed to every child
  std::vector<std::string> actors;  // start order
  std::chrono::milliseconds stop_timeout{10'000};
  std::chrono::milliseconds heartbeat_timeout{10'000};
  std::chrono::milliseconds heartbeat_interval{1'000};
  // When the key restarts, so do the actors listed (those of `actors`), in start order.
  std::map<std::string, std::vector<std::string>> restarts_with;
};

// Runs the deployment until a signal (returns 0) or a start-up failure (returns 1).
int run_processes(const ProcessSupervisorOptions& options);

}  // namespace zinfer::runtime
