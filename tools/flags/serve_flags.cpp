#include "tools/flags/serve_flags.h"

namespace zinfer::cli {

void ServeFlags::add(CLI::App& cmd) {
  cmd.add_option("--config", config_path_, "TOML config (configs/default.toml documents every setting); "
                                           "without it every setting has its default");
  // The model folder: positional as in `vllm serve MODEL`, or --model as before.
  auto* positional = flags_.add(cmd, "model.path", "MODEL");
  auto* named = flags_.add(cmd, "model.path", "--model");
  positional->excludes(named);

  // vLLM's names.
  flags_.add(cmd, "server.host", "--host");
  flags_.add(cmd, "server.port", "--port");
  flags_.add_split(cmd, "--served-model-name", "server.served_model_name", "server.served_model_aliases");
  flags_.add(cmd, "server.max_logprobs", "--max-logprobs");
  flags_.add_switch(cmd, "server.log_requests", "--enable-log-requests", "--disable-log-requests");
  flags_.add_switch(cmd, "server.trust_request_chat_template", "--trust-request-chat-template",
                    "--no-trust-request-chat-template");
  flags_.add(cmd, "server.generation_config", "--generation-config");
  flags_.add(cmd, "server.reasoning_parser", "--reasoning-parser");
  flags_.add(cmd, "model.device", "--device");
  flags_.add(cmd, "model.dtype", "--dtype");
  flags_.add(cmd, "model.quantization", "--quantization");
  flags_.add(cmd, "model.max_model_len", "--max-model-len");
  flags_.add(cmd, "model.tensor_parallel_size", "--tensor-parallel-size");
  flags_.add(cmd, "scheduler.policy", "--scheduling-policy");
  flags_.add(cmd, "scheduler.preemption", "--preemption-mode");
  flags_.add(cmd, "scheduler.max_num_seqs", "--max-num-seqs");
  flags_.add(cmd, "scheduler.max_num_batched_tokens", "--max-num-batched-tokens");
  flags_.add(cmd, "scheduler.long_prefill_token_threshold", "--long-prefill-token-threshold");
  flags_.add(cmd, "scheduler.max_num_partial_prefills", "--max-num-partial-prefills");
  flags_.add(cmd, "scheduler.max_long_partial_prefills", "--max-long-partial-prefills");
  flags_.add(cmd, "cache.block_size", "--block-size");
  flags_.add(cmd, "cache.gpu_memory_utilization", "--gpu-memory-utilization");
  flags_.add(cmd, "cache.num_gpu_blocks", "--num-gpu-blocks-override");
  flags_.add(cmd, "cache.kv_cache_dtype", "--kv-cache-dtype");
  flags_.add_scaled(cmd, "cache.swap_space_mb", "--swap-space", 1024, "GiB");
  flags_.add_switch(cmd, "cache.enable_prefix_caching", "--enable-prefix-caching", "--no-enable-prefix-caching");
  flags_.add(cmd, "tokenizer.chat_template", "--chat-template");
  flags_.add(cmd, "scheduler.seed", "--seed");
  flags_.add(cmd, "server.api_keys", "--api-key");
  flags_.add(cmd, "server.tool_call_parser", "--tool-call-parser");
  flags_.add_switch(cmd, "server.enable_auto_tool_choice", "--enable-auto-tool-choice", "--no-enable-auto-tool-choice");  // ZINFER_API_KEY when neither the flag nor the file gives one

  // zinfer's own settings, after their keys.
  flags_.add(cmd, "server.zmq_endpoint", "--zmq-endpoint");
  flags_.add(cmd, "server.zmq_curve_secret_key_file", "--zmq-curve-secret-key-file");
  flags_.add(cmd, "server.zmq_curve_client_keys_file", "--zmq-curve-client-keys-file");
  flags_.add(cmd, "server.max_connections", "--max-connections");
  flags_.add(cmd, "server.max_inflight_per_tenant", "--max-inflight-per-tenant");
  flags_.add(cmd, "server.tenant_key", "--tenant-key");
  flags_.add(cmd, "server.io_threads", "--io-threads");
  flags_.add(cmd, "server.max_inflight", "--max-inflight");
  flags_.add(cmd, "server.max_body_bytes", "--max-body-bytes");
  flags_.add(cmd, "server.shutdown_grace_s", "--shutdown-grace-s");
  flags_.add(cmd, "model.tuning_cache", "--tuning-cache");
  flags_.add(cmd, "scheduler.max_plans_in_flight", "--max-plans-in-flight");
  flags_.add(cmd, "cache.num_cpu_blocks", "--num-cpu-blocks");
  flags_.add(cmd, "cache.cpu_kv_cache_mb", "--cpu-kv-cache-mb");
  flags_.add(cmd, "tokenizer.workers", "--tokenizer-workers");
  for (const char* actor : {"tokenizer", "scheduler", "executor", "detokenizer", "gateway"}) {
    flags_.add(cmd, std::string("endpoints.") + actor, std::string("--") + actor + "-endpoint");
  }
  flags_.add(cmd, "runtime.log_level", "--log-level");
  flags_.add(cmd, "runtime.actors", "--actors");
  flags_.add(cmd, "runtime.heartbeat_timeout_s", "--heartbeat-timeout-s");
}

actors::EngineConfig ServeFlags::load() const { return flags_.load(config_path_); }

}  // namespace zinfer::cli
