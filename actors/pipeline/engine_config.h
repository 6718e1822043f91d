// The configuration of the whole pipeline: the options structs of the libraries it starts,
// composed. Each library owns its struct, its defaults and the description of its settings
// (settings/setting.h): the scheduler its SchedulerConfig ([scheduler], cache.enable_prefix_caching),
// gpu/ its BackendOptions ([model], the rest of [cache]), the gateway its options ([server]), the
// tokenizer actor its worker count ([tokenizer]), the runtime its endpoints and log level
// ([endpoints], [runtime]). The file is read by runtime::ConfigReader into these structs; no value
// is copied by hand between them. Values that derive from others at start-up (the scheduler's
// cache geometry from the executor, the backend's batch limits from the scheduler, the served
// model name from the folder) are derived below, in the functions that build each library's
// options.
#pragma once

#include <string>

#include "actors/pipeline/tokenizer_options.h"
#include "actors/scheduler/scheduler_config.h"
#include "gateway/options.h"
#include "gpu/backend.h"
#include "protocol/messages.h"
#include "runtime/config.h"
#include "runtime/runtime_config.h"

namespace zinfer::actors {

struct EngineConfig {
  std::string source;                   // the file it came from ("" for defaults)
  gateway::GatewayOptions server;       // [server]
  gpu::BackendOptions backend;          // [model], [cache] (but enable_prefix_caching)
  scheduler::SchedulerConfig scheduler; // [scheduler], [cache] enable_prefix_caching
  TokenizerOptions tokenizer;           // [tokenizer]
  runtime::EndpointsConfig endpoints;   // [endpoints]
  runtime::RuntimeConfig runtime;       // [runtime]
};

// Binds every setting of every section to `config` (which must outlive the reader): what
// load_engine_config reads into, and what command-line flags find settings in.
void bind_settings(runtime::ConfigReader& reader, EngineConfig& config);

// Checks the rules between settings (scheduler::check_settings); throws runtime::ConfigError
// naming `origin` and the keys.
void check_settings(const EngineConfig& config, const std::string& origin);

// Defaults for every key the file leaves out; throw runtime::ConfigError naming the key, the file
// and the line.
EngineConfig load_engine_config(const std::string& path);
EngineConfig parse_engine_config(const std::string& toml_text, const std::string& origin);

// The options each library is started with.
// The backend's: [model]/[cache] as read, sized for the scheduler's step limits.
gpu::BackendOptions backend_options(const EngineConfig& config);
// The scheduler's: as read, over the cache geometry, context length and eos ids the executor
// reports; block-table deltas on (the executor actor keeps a BlockTableMirror).
scheduler::SchedulerConfig scheduler_options(const EngineConfig& config, const protocol::ExecutorInfo& executor);
// The gateway's: as read, with the served model name filled in and the context length the
// engine will enforce; the ZeroMQ endpoint shares the HTTP server's name and in-flight limit.
gateway::GatewayOptions gateway_options(const EngineConfig& config, int max_model_len);

// [server] served_model_name, or the model folder's name when it is "".
std::string served_model_name(const EngineConfig& config);

}  // namespace zinfer::actors
