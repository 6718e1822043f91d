#include "actors/pipeline/engine_config.h"

#include <filesystem>

#include "gateway/api_keys.h"
#include "gateway/tool_request.h"
#include "gpu/backend_settings.h"

namespace zinfer::actors {

void bind_settings(runtime::ConfigReader& reader, EngineConfig& c) {
  reader.bind(c.server, gateway::server_settings());
  reader.bind(c.backend, gpu::backend_settings());
  reader.bind(c.scheduler, scheduler::scheduler_settings());
  reader.bind(c.tokenizer, tokenizer_settings());
  reader.bind(c.endpoints, runtime::endpoint_settings());
  reader.bind(c.runtime, runtime::runtime_settings());
}

void check_settings(const EngineConfig& config, const std::string& origin) {
  const std::string why = scheduler::check_settings(config.scheduler);
  if (!why.empty()) throw runtime::ConfigError(origin + ": " + why);
  // The tool settings depend on each other (vLLM refuses --enable-auto-tool-choice alone).
  if (std::string tools = gateway::check_tool_settings(config.server.http); !tools.empty()) {
    throw runtime::ConfigError(origin + ": [server] " + tools);
  }
}

EngineConfig parse_engine_config(const std::string& toml_text, const std::string& origin) {
  EngineConfig c;
  c.source = origin;
  runtime::ConfigReader reader;
  bind_settings(reader, c);
  reader.read_text(toml_text, origin);
  check_settings(c, origin);
  return c;
}

EngineConfig load_engine_config(const std::string& path) {
  EngineConfig c;
  c.source = path;
  runtime::ConfigReader reader;
  bind_settings(reader, c);
  reader.read_file(path);
  check_settings(c, path);
  return c;
}

gpu::BackendOptions backend_options(const EngineConfig& config) {
  gpu::BackendOptions o = config.backend;
  o.max_num_seqs = config.scheduler.max_num_seqs;
  o.max_num_batched_tokens = config.scheduler.max_num_batched_tokens;
  return o;
}

scheduler::SchedulerConfig scheduler_options(const EngineConfig& config, const protocol::ExecutorInfo& executor) {
  scheduler::SchedulerConfig sc = config.scheduler;
  sc.max_model_len = executor.max_model_len;
  sc.block_size = executor.block_size;
  sc.num_device_blocks = executor.num_gpu_blocks;
  sc.num_host_blocks = executor.num_cpu_blocks;
  sc.eos_token_ids = executor.eos_token_ids;
  sc.block_table_deltas = true;
  return sc;
}

gateway::GatewayOptions gateway_options(const EngineConfig& config, int max_model_len) {
  gateway::GatewayOptions o = config.server;
  o.http.served_model_name = served_model_name(config);
  o.http.max_model_len = max_model_len;
  o.zmq.served_model_name = o.http.served_model_name;
  o.zmq.max_in_flight = o.http.max_in_flight;
  o.zmq.max_model_len = max_model_len;
  o.zmq.max_message_bytes = static_cast<int64_t>(o.http.max_body_bytes);
  o.http.api_keys = gateway::api_keys_with_environment(o.http.api_keys);
  o.zmq.api_keys = o.http.api_keys;
  return o;
}

std::string served_model_name(const EngineConfig& config) {
  if (!config.server.http.served_model_name.empty()) return config.server.http.served_model_name;
  std::filesystem::path p(config.backend.model_dir);
  std::string name = p.filename().string();
  if (name.empty()) name = p.parent_path().filename().string();
  return name.empty() ? "default" : name;
}

}  // namespace zinfer::actors
