// `zinfer serve [MODEL] [--config FILE] [flags]` (tools/flags/serve_flags.h): every setting is a
// flag, vLLM's names reach the settings they name, a flag beats the file and the file the default,
// and what the flags set is what the scheduler and the cache are started with.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include "actors/pipeline/engine_config.h"
#include "actors/pipeline/generation_defaults.h"
#include "tools/flags/serve_flags.h"

namespace zinfer::cli {
namespace {

// Parses `args` as `zinfer serve` would; throws what load() throws.
actors::EngineConfig serve(std::vector<std::string> args) {
  CLI::App app;
  ServeFlags flags;
  flags.add(app);
  std::reverse(args.begin(), args.end());  // CLI11 takes them last first
  app.parse(args);
  return flags.load();
}

std::string help() {
  CLI::App app("zinfer serve");
  ServeFlags flags;
  flags.add(app);
  return app.help();
}

// Invariant 30 (docs/architecture.md): the flags are made from the settings' descriptions.
TEST(ServeFlags, EverySettingIsAFlag) {
  CLI::App app;
  ServeFlags flags;
  flags.add(app);
  const auto names = flags.settings();
  const std::set<std::string> flagged(names.begin(), names.end());
  for (const auto& s : engine_defaults().settings()) {
    EXPECT_TRUE(flagged.count(s.descriptor.name())) << s.descriptor.name() << " has no flag in zinfer serve";
  }
}

TEST(ServeFlags, HelpListsVllmsFlags) {
  const std::string text = help();
  for (const char* flag :
       {"--max-model-len", "--max-num-seqs", "--max-num-batched-tokens", "--gpu-memory-utilization",
        "--served-model-name", "--dtype", "--block-size", "--enable-prefix-caching", "--no-enable-prefix-caching",
        "--swap-space", "--num-gpu-blocks-override", "--scheduling-policy", "--preemption-mode", "--seed",
        "--max-logprobs", "--chat-template", "--generation-config", "--host", "--port", "--disable-log-requests",
        "--tensor-parallel-size", "--quantization", "--kv-cache-dtype",
        "--config", "MODEL"}) {
    EXPECT_NE(text.find(flag), std::string::npos) << flag << " is not in --help:\n" << text;
  }
  // Each line says the setting it sets and its default.
  EXPECT_NE(text.find("scheduler.max_num_seqs"), std::string::npos);
  EXPECT_NE(text.find("default 256"), std::string::npos);
}

TEST(ServeFlags, NoConfigFileIsTheDefaultsAndThePositionalModel) {
  const actors::EngineConfig c = serve({"models/somewhere"});
  EXPECT_EQ(c.backend.model_dir, "models/somewhere");
  const actors::EngineConfig d;
  EXPECT_EQ(c.scheduler.max_num_seqs, d.scheduler.max_num_seqs);
  EXPECT_EQ(c.backend.block_size, d.backend.block_size);
  EXPECT_EQ(serve({"--model", "m2"}).backend.model_dir, "m2");  // as before
  EXPECT_THROW(serve({"m1", "--model", "m2"}), CLI::ParseError);
}

// What the scheduler and the KV cache start with (engine_config.h's scheduler_options and
// backend_options), from vLLM's flags.
TEST(ServeFlags, FlagsReachTheSchedulerAndTheCache) {
  const actors::EngineConfig c =
      serve({"models/x", "--max-model-len", "512", "--max-num-seqs", "8", "--max-num-batched-tokens", "96",
             "--block-size", "32", "--gpu-memory-utilization", "0.5", "--num-gpu-blocks-override", "77",
             "--swap-space", "1.5", "--no-enable-prefix-caching", "--scheduling-policy", "priority",
             "--preemption-mode", "swap", "--seed", "42", "--long-prefill-token-threshold", "64", "--max-num-partial-prefills", "3",
             "--max-long-partial-prefills", "2", "--dtype",
             "bfloat16", "--device", "synthetic", "--tensor-parallel-size", "2"});
  protocol::ExecutorInfo executor;
  executor.block_size = 32;
  executor.num_gpu_blocks = 77;
  executor.max_model_len = 512;
  const scheduler::SchedulerConfig s = actors::scheduler_options(c, executor);
  EXPECT_EQ(s.max_num_seqs, 8);
  EXPECT_EQ(s.max_num_batched_tokens, 96);
  EXPECT_FALSE(s.enable_prefix_caching);
  EXPECT_EQ(s.policy, "priority");
  EXPECT_EQ(s.preemption, scheduler::PreemptionMode::kSwap);
  EXPECT_EQ(s.seed, 42);
  EXPECT_EQ(s.long_prefill_token_threshold, 64);
  EXPECT_EQ(s.max_num_partial_prefills, 3);
  EXPECT_EQ(s.max_long_partial_prefills, 2);
  const gpu::BackendOptions b = actors::backend_options(c);
  EXPECT_EQ(b.max_model_len, 512);
  EXPECT_EQ(b.block_size, 32);
  EXPECT_DOUBLE_EQ(b.gpu_memory_utilization, 0.5);
  EXPECT_EQ(b.num_gpu_blocks, 77);
  EXPECT_EQ(b.swap_space_bytes, int64_t(1536) << 20);  // GiB on the command line, as vLLM's
  EXPECT_EQ(b.max_num_seqs, 8);
  EXPECT_EQ(b.max_num_batched_tokens, 96);
  EXPECT_EQ(b.dtype, "bfloat16");
  EXPECT_EQ(b.device, "synthetic");
  EXPECT_EQ(b.tensor_parallel_size, 2);
  EXPECT_TRUE(serve({"--enable-prefix-caching"}).scheduler.enable_prefix_caching);
  // vLLM's --quantization: online FP8 of a dense checkpoint, or what config.json says.
  EXPECT_EQ(actors::backend_options(serve({"m", "--quantization", "fp8"})).quantization, "fp8");
  EXPECT_EQ(actors::backend_options(serve({"m", "--quantization", "none"})).quantization, "none");
  EXPECT_EQ(actors::backend_options(serve({"m"})).quantization, "auto");
  try {
    serve({"m", "--quantization", "gptq"});
    ADD_FAILURE() << "--quantization gptq accepted";
  } catch (const runtime::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--quantization"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("model.quantization"), std::string::npos) << e.what();
  }
  EXPECT_THROW(serve({"--enable-prefix-caching", "--no-enable-prefix-caching"}), CLI::ParseError);
}

// vLLM's --kv-cache-dtype: auto, fp8 and its other spelling fp8_e4m3; e5m2 (and anything else) is
// refused, the error naming the flag, the setting and the value.
TEST(ServeFlags, KvCacheDtypeTakesVllmsSpellings) {
  EXPECT_EQ(actors::backend_options(serve({"m"})).kv_cache_dtype, gpu::KvCacheDtype::kAuto);
  EXPECT_EQ(actors::backend_options(serve({"m", "--kv-cache-dtype", "auto"})).kv_cache_dtype, gpu::KvCacheDtype::kAuto);
  EXPECT_EQ(actors::backend_options(serve({"m", "--kv-cache-dtype", "fp8"})).kv_cache_dtype, gpu::KvCacheDtype::kFp8);
  EXPECT_EQ(actors::backend_options(serve({"m", "--kv-cache-dtype", "fp8_e4m3"})).kv_cache_dtype,
            gpu::KvCacheDtype::kFp8);
  for (const char* bad : {"fp8_e5m2", "fp8_inc", "bfloat16", "int8"}) {
    try {
      serve({"m", "--kv-cache-dtype", bad});
      ADD_FAILURE() << "--kv-cache-dtype " << bad << " accepted";
    } catch (const runtime::ConfigError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("--kv-cache-dtype"), std::string::npos) << what;
      EXPECT_NE(what.find("cache.kv_cache_dtype"), std::string::npos) << what;
      EXPECT_NE(what.find(bad), std::string::npos) << what;
    }
  }
}

TEST(ServeFlags, GatewayFlags) {
  const actors::EngineConfig c =
      serve({"models/x", "--served-model-name", "main", "alias1", "alias2", "--host", "0.0.0.0", "--port", "9001",
             "--max-logprobs", "5", "--generation-config", "vllm", "--enable-log-requests", "--chat-template",
             "{{ messages }}"});
  const gateway::GatewayOptions g = actors::gateway_options(c, 100);
  EXPECT_EQ(g.http.served_model_name, "main");
  EXPECT_EQ(g.http.served_model_aliases, (std::vector<std::string>{"alias1", "alias2"}));
  EXPECT_EQ(g.http.host, "0.0.0.0");
  EXPECT_EQ(g.http.port, 9001);
  EXPECT_EQ(g.http.max_logprobs, 5);
  EXPECT_EQ(g.http.generation_config, "vllm");
  EXPECT_TRUE(g.http.log_requests);
  EXPECT_EQ(c.tokenizer.chat_template, "{{ messages }}");
  EXPECT_FALSE(serve({"--disable-log-requests"}).server.http.log_requests);
  EXPECT_EQ(serve({"--served-model-name", "solo"}).server.http.served_model_aliases, std::vector<std::string>{});
}

TEST(ServeFlags, AFlagBeatsTheFileAndTheFileTheDefault) {
  const auto dir = std::filesystem::temp_directory_path() / ("zinfer-serve-flags-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "c.toml").string();
  std::ofstream(path) << "[scheduler]\nmax_num_seqs = 8\nmax_num_batched_tokens = 100\n[cache]\nswap_space_mb = 10\n";
  actors::EngineConfig c = serve({"--config", path, "--max-num-seqs", "16"});
  EXPECT_EQ(c.scheduler.max_num_seqs, 16);             // the flag's
  EXPECT_EQ(c.scheduler.max_num_batched_tokens, 100);  // the file's
  EXPECT_EQ(c.backend.swap_space_bytes, int64_t(10) << 20);
  EXPECT_EQ(c.backend.block_size, actors::EngineConfig{}.backend.block_size);  // the default
  // The flag's value is checked by the setting's rules, naming the flag and the key.
  try {
    serve({"--config", path, "--max-num-seqs", "0"});
    ADD_FAILURE() << "max_num_seqs 0 accepted";
  } catch (const runtime::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--max-num-seqs"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("scheduler.max_num_seqs"), std::string::npos) << e.what();
  }
  try {
    serve({"--swap-space", "-1"});
    ADD_FAILURE() << "a negative swap space accepted";
  } catch (const runtime::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("cache.swap_space_mb"), std::string::npos) << e.what();
  }
  // The rule between settings holds for flags too.
  EXPECT_THROW(serve({"--config", path, "--max-num-seqs", "200"}), runtime::ConfigError);
  std::filesystem::remove_all(dir);
}

// --generation-config: the model's sampling defaults (Qwen3's: temperature 0.6, top_k 20, top_p 0.95).
TEST(GenerationDefaults, ReadFromTheModelFolderOrAnotherOrNone) {
  const auto dir = std::filesystem::temp_directory_path() / ("zinfer-genconfig-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "other");
  std::ofstream((dir / "generation_config.json").string())
      << R"({"bos_token_id": 1, "eos_token_id": [2, 3], "do_sample": true, "temperature": 0.6, "top_k": 20,
             "top_p": 0.95, "repetition_penalty": 1.0})";
  std::ofstream((dir / "other" / "generation_config.json").string()) << R"({"temperature": 0.3})";
  const gateway::SamplingDefaults a = actors::load_sampling_defaults("auto", dir.string());
  EXPECT_DOUBLE_EQ(a.temperature.value(), 0.6);
  EXPECT_EQ(a.top_k.value(), 20);
  EXPECT_DOUBLE_EQ(a.top_p.value(), 0.95);
  EXPECT_DOUBLE_EQ(a.repetition_penalty.value(), 1.0);
  EXPECT_FALSE(a.min_p.has_value());
  const gateway::SamplingDefaults v = actors::load_sampling_defaults("vllm", dir.string());
  EXPECT_FALSE(v.temperature || v.top_p || v.top_k || v.min_p || v.repetition_penalty);
  const gateway::SamplingDefaults o = actors::load_sampling_defaults((dir / "other").string(), dir.string());
  EXPECT_DOUBLE_EQ(o.temperature.value(), 0.3);
  EXPECT_FALSE(o.top_k.has_value());
  // auto without a file: no defaults; a named folder without one: an error naming it.
  EXPECT_FALSE(actors::load_sampling_defaults("auto", (dir / "other" / "none").string()).temperature);
  EXPECT_THROW(actors::load_sampling_defaults((dir / "missing").string(), dir.string()), runtime::ConfigError);
  EXPECT_THROW(actors::parse_sampling_defaults(R"({"top_k": "20"})", "g.json"), runtime::ConfigError);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace zinfer::cli
