// zinfer's configuration: one TOML file (configs/*.toml) read into typed sections. Every setting
// has a default (so an empty file is a valid CPU configuration); an unknown section or key, a
// wrong type or an out-of-range value is a ConfigError naming the key, the file and the line.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace zinfer::runtime {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ServerConfig {
  std::string host = "127.0.0.1";
  int64_t port = 8000;
  std::string zmq_endpoint = "tcp://127.0.0.1:5555";  // native client endpoint ("" = off)
  std::string served_model_name;                      // "" = the model folder's name
  int64_t io_threads = 2;
  int64_t max_inflight = 4096;                        // more in-flight requests -> 429
  int64_t max_body_bytes = 8 << 20;                   // larger bodies -> 413
};

struct ModelConfigSection {
  std::string path = "models/default";
  std::string device = "cpu";     // cpu | cuda | synthetic (control-plane benchmarks)
  std::string dtype = "auto";     // auto | float32 | bfloat16 | float16
  int64_t max_model_len = 0;      // 0 = the model's max_position_embeddings
};

struct SchedulerConfig {
  std::string policy = "fcfs";          // fcfs | priority
  std::string preemption = "recompute"; // recompute | swap
  int64_t max_num_seqs = 64;
  int64_t max_num_batched_tokens = 2048;
  int64_t max_plans_in_flight = 2;      // steps planned ahead of the executor's results
};

struct CacheConfig {
  int64_t block_size = 16;
  double gpu_memory_utilization = 0.9;
  int64_t num_gpu_blocks = 0;          // 0 = from memory (cuda) / cpu_kv_cache_mb (cpu)
  int64_t num_cpu_blocks = 0;          // host swap pool; 0 = from swap_space_mb
  int64_t swap_space_mb = 1024;
  int64_t cpu_kv_cache_mb = 256;       // CPU backend's device pool when num_gpu_blocks = 0
  bool enable_prefix_caching = true;
};

struct TokenizerConfig {
  int64_t workers = 2;
};

// Where each actor listens. inproc:// when the actors are threads of one process, ipc:// when
// they are processes of one host; the same actor code runs on either. The executor's and the
// detokenizer's endpoints (one sender each: the scheduler) may also be shm://<path>, a
// shared-memory ring between processes (runtime/shm_link.h); the others may not.
struct EndpointsConfig {
  std::string tokenizer = "inproc://zinfer-tokenizer";
  std::string scheduler = "inproc://zinfer-scheduler";
  std::string executor = "inproc://zinfer-executor";
  std::string detokenizer = "inproc://zinfer-detokenizer";
  std::string gateway = "inproc://zinfer-gateway";
};

struct RuntimeConfig {
  std::string log_level = "info";
  // For `zinfer launch`: the actors started as processes, in start order.
  std::vector<std::string> actors = {"executor", "detokenizer", "scheduler", "tokenizer", "gateway"};
};

struct Config {
  std::string source;  // file it came from ("" for defaults)
  ServerConfig server;
  ModelConfigSection model;
  SchedulerConfig scheduler;
  CacheConfig cache;
  TokenizerConfig tokenizer;
  EndpointsConfig endpoints;
  RuntimeConfig runtime;
};

Config load_config(const std::string& path);                          // throws ConfigError
Config parse_config(const std::string& toml_text, const std::string& origin);  // throws ConfigError

}  // namespace zinfer::runtime
