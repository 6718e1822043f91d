// The runtime's own settings: [runtime] (log level, the actors a process starts) and [endpoints]
// (where each actor listens). Described here, next to their structs (settings/setting.h).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "settings/setting.h"

namespace zinfer::runtime {

// Where each actor listens. inproc:// when the actors are threads of one process, ipc:// when
// they are processes of one host; the same actor code runs on either. The executor's and the
// detokenizer's endpoints (one sender each: the scheduler) may also be shm://<path>, a
// shared-memory ring between processes (runtime/shm_link.h); the others may not. An ipc:// or
// shm:// path may start with {runtime_dir}: the deployment's private directory (private_dir.h).
struct EndpointsConfig {
  std::string tokenizer = "inproc://zinfer-tokenizer";
  std::string scheduler = "inproc://zinfer-scheduler";
  std::string executor = "inproc://zinfer-executor";
  std::string detokenizer = "inproc://zinfer-detokenizer";
  std::string gateway = "inproc://zinfer-gateway";
};

struct RuntimeConfig {
  std::string log_level = "info";
  // The actors `zinfer serve` starts as threads, or `zinfer launch` as processes, in start order.
  std::vector<std::string> actors = {"executor", "detokenizer", "scheduler", "tokenizer", "gateway"};
  // `zinfer launch`: an actor process whose loop has not answered for this long is stalled, and
  // is killed and restarted (docs/architecture.md, I38). Model loading does not count: the clock
  // starts at an actor's first answer.
  double heartbeat_timeout_s = 10.0;
};

// How often an actor process heartbeats: a quarter of the timeout, between 50 ms and 1 s, so
// that a timeout is four or more missed beats.
std::chrono::milliseconds heartbeat_interval(const RuntimeConfig& config);
std::chrono::milliseconds heartbeat_timeout(const RuntimeConfig& config);

const settings::Settings<EndpointsConfig>& endpoint_settings();  // [endpoints]
const settings::Settings<RuntimeConfig>& runtime_settings();      // [runtime]

}  // namespace zinfer::runtime
