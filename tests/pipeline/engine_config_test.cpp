// The pipeline's config: every setting, described by the library that owns it, reaches the options
// that library is started with; every default is written once; errors name key, file and line.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <toml.hpp>

#include "actors/kv/kv_types.h"
#include "actors/pipeline/engine_config.h"
#include "gpu/backend_settings.h"
#include "tools/flags/setting_flags.h"

namespace zinfer::actors {
namespace {

using settings::Value;

std::string error_of(const std::string& text) {
  try {
    parse_engine_config(text, "test.toml");
  } catch (const runtime::ConfigError& e) {
    return e.what();
  }
  return "";
}

// A legal value other than `current`.
template <class S>
Value other_legal_value(const settings::Setting<S>& s, const Value& current) {
  std::vector<Value> candidates;
  switch (s.type) {
    case settings::Type::kInteger: {
      const int64_t x = std::get<int64_t>(current);
      candidates = {x + 1, x - 1, s.int_min, s.int_max};
      break;
    }
    case settings::Type::kNumber:
      candidates = {s.num_min, s.num_max};  // short decimals: the file's spelling reads back exactly
      break;
    case settings::Type::kBoolean:
      candidates = {!std::get<bool>(current)};
      break;
    case settings::Type::kString:
      for (const auto& c : s.choices) candidates.push_back(c);
      if (s.choices.empty()) candidates = {std::get<std::string>(current) + "-x", std::string("inproc://zinfer-x")};
      break;
    case settings::Type::kStringList: {
      auto l = std::get<std::vector<std::string>>(current);
      if (!l.empty()) {
        l.pop_back();
      } else {
        l.push_back(s.choices.empty() ? "entry-x" : s.choices.front());  // an empty default: one entry
      }
      candidates = {l};
      break;
    }
  }
  for (const auto& v : candidates) {
    if (v != current && s.why_not(v).empty()) return v;
  }
  ADD_FAILURE() << s.name() << ": no other legal value";
  return current;
}

// Sets each setting of `table` alone, in a file, to a legal value other than its default, and
// checks that the options its library is started with (`started`) have it. A setting described
// but not composed into EngineConfig fails here (unknown key), and so does one composed but lost
// on the way to its library.
template <class S, class Started>
int round_trip(const settings::Settings<S>& table, Started started) {
  int n = 0;
  for (const auto& s : table) {
    SCOPED_TRACE(s.name());
    const Value v = other_legal_value(s, s.get(S{}));
    std::string text = "[" + s.section + "]\n" + s.key + " = " + settings::to_string(v) + "\n";
    // A setting that needs another: vLLM refuses --enable-auto-tool-choice without a parser.
    if (s.name() == "server.enable_auto_tool_choice") text += "tool_call_parser = \"hermes\"\n";
    ++n;
    EngineConfig c;
    try {
      c = parse_engine_config(text, "roundtrip.toml");
    } catch (const std::exception& e) {
      ADD_FAILURE() << text << e.what();
      continue;
    }
    EXPECT_EQ(s.get(started(c)), v) << text;
  }
  return n;
}

protocol::ExecutorInfo executor_info() {
  protocol::ExecutorInfo info;
  info.block_size = 32;
  info.num_gpu_blocks = 100;
  info.num_cpu_blocks = 7;
  info.max_model_len = 512;
  info.eos_token_ids = {2, 3};
  return info;
}

// Invariant 30 (docs/architecture.md): each library owns its settings; a described setting that
// does not reach the options its library starts with fails here.
TEST(EngineConfig, EverySettingReachesTheLibraryThatOwnsIt) {
  int n = 0;
  n += round_trip(gateway::server_settings(), [](const EngineConfig& c) { return gateway_options(c, 100); });
  n += round_trip(gpu::backend_settings(), [](const EngineConfig& c) { return backend_options(c); });
  n += round_trip(scheduler::scheduler_settings(),
                  [](const EngineConfig& c) { return scheduler_options(c, executor_info()); });
  n += round_trip(tokenizer_settings(), [](const EngineConfig& c) { return c.tokenizer; });
  n += round_trip(runtime::endpoint_settings(), [](const EngineConfig& c) { return c.endpoints; });
  n += round_trip(runtime::runtime_settings(), [](const EngineConfig& c) { return c.runtime; });
  // Every setting the reader knows was walked above: none is composed without an owner's table.
  EngineConfig c;
  runtime::ConfigReader reader;
  bind_settings(reader, c);
  EXPECT_EQ(static_cast<size_t>(n), reader.settings().size());
  EXPECT_GE(n, 31);  // the settings of issue 17; more may come, none may go
}

TEST(EngineConfig, DefaultTomlDocumentsEverySettingWithItsDefault) {
  const std::string path = std::string(ZINFER_SOURCE_DIR) + "/configs/default.toml";
  const toml::value file = toml::parse(path);
  EngineConfig read = load_engine_config(path);
  EngineConfig defaults;
  runtime::ConfigReader from_file, from_code;
  bind_settings(from_file, read);
  bind_settings(from_code, defaults);
  for (const auto& s : from_code.settings()) {
    const auto& d = s.descriptor;
    EXPECT_TRUE(file.contains(d.section) && file.at(d.section).contains(d.key)) << d.name() << " is not in " << path;
    EXPECT_EQ(from_file.find(d.section, d.key)->get(), s.get()) << d.name() << ": default.toml and the code disagree";
  }
}

TEST(EngineConfig, DefaultsAreWrittenOnce) {
  // The backend's batch limits are the scheduler's, for callers that build either alone too.
  EXPECT_EQ(gpu::BackendOptions{}.max_num_seqs, scheduler::SchedulerConfig{}.max_num_seqs);
  EXPECT_EQ(gpu::BackendOptions{}.max_num_batched_tokens, scheduler::SchedulerConfig{}.max_num_batched_tokens);
  EXPECT_EQ(gpu::BackendOptions{}.block_size, scheduler::SchedulerConfig{}.block_size);
  EXPECT_EQ(kv::KvConfig{}.block_size, scheduler::SchedulerConfig{}.block_size);
  EXPECT_EQ(kv::KvConfig{}.enable_prefix_caching, scheduler::SchedulerConfig{}.enable_prefix_caching);
  EXPECT_EQ(gateway::ZmqEndpointOptions{}.max_in_flight, gateway::HttpOptions{}.max_in_flight);
  // What the backend is started with follows the scheduler's settings.
  const EngineConfig c = parse_engine_config("[scheduler]\nmax_num_seqs = 12\nmax_num_batched_tokens = 300\n", "t.toml");
  EXPECT_EQ(backend_options(c).max_num_seqs, 12);
  EXPECT_EQ(backend_options(c).max_num_batched_tokens, 300);
}

TEST(EngineConfig, GenerateAndServeStartFromTheSameDefaults) {
  // `zinfer generate` with no config and no flags but --model: every other setting as the
  // defaults `zinfer serve` reads from an empty file.
  CLI::App app;
  cli::SettingFlags flags;
  flags.add(app, "model.path", "--model")->required();
  flags.add(app, "model.device");
  flags.add(app, "model.max_model_len");
  flags.add(app, "cache.num_gpu_blocks");
  std::vector<std::string> args = {"--model", "models/default"};
  std::reverse(args.begin(), args.end());
  app.parse(args);
  EngineConfig generate = flags.load("");
  EngineConfig serve = parse_engine_config("", "empty.toml");
  runtime::ConfigReader g, s;
  bind_settings(g, generate);
  bind_settings(s, serve);
  for (const auto& setting : s.settings()) {
    EXPECT_EQ(g.find(setting.descriptor.section, setting.descriptor.key)->get(), setting.get()) << setting.descriptor.name();
  }
}

TEST(EngineConfig, FlagsOverrideTheFileByTheSameRules) {
  const auto dir = std::filesystem::temp_directory_path() / ("zinfer-flags-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "c.toml").string();
  std::ofstream(path) << "[model]\ndevice = \"synthetic\"\nmax_model_len = 64\n[scheduler]\nmax_num_seqs = 8\n";
  auto parsed = [&](std::vector<std::string> args) {
    CLI::App app;
    cli::SettingFlags flags;
    flags.add(app, "model.device");
    flags.add(app, "scheduler.max_num_seqs");
    flags.add(app, "scheduler.max_num_batched_tokens");
    std::reverse(args.begin(), args.end());
    app.parse(args);
    return flags.load(path);
  };
  EngineConfig c = parsed({"--max-num-seqs", "16"});
  EXPECT_EQ(c.scheduler.max_num_seqs, 16);
  EXPECT_EQ(c.backend.device, "synthetic");  // not given: the file's
  EXPECT_EQ(c.backend.max_model_len, 64);
  try {
    parsed({"--device", "tpu"});
    ADD_FAILURE() << "tpu is not a device";
  } catch (const runtime::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--device: key 'model.device' must be one of cpu, cuda, synthetic"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(parsed({"--max-num-seqs", "many"}), runtime::ConfigError);
  try {
    parsed({"--max-num-batched-tokens", "16", "--max-num-seqs", "32"});
    ADD_FAILURE() << "a step smaller than its sequences";
  } catch (const runtime::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("the command line: scheduler.max_num_batched_tokens (16) must be at least"),
              std::string::npos)
        << e.what();
  }
  std::filesystem::remove_all(dir);
}

TEST(EngineConfig, FlagHelpComesFromTheDescription) {
  CLI::App app;
  cli::SettingFlags flags;
  CLI::Option* o = flags.add(app, "scheduler.max_num_seqs");
  EXPECT_EQ(o->get_name(), "--max-num-seqs");
  EXPECT_NE(o->get_description().find("sequences in one step at most"), std::string::npos) << o->get_description();
  EXPECT_NE(o->get_description().find("1..4096; default 256; scheduler.max_num_seqs"), std::string::npos)
      << o->get_description();
  EXPECT_THROW(flags.add(app, "scheduler.nothing"), std::logic_error);
}

// Invariant 29 (docs/architecture.md): every key is honoured or refused, naming key, file and line.
TEST(EngineConfig, ErrorsNameKeyFileAndLine) {
  std::string e = error_of("[server]\nport = 8000\n\n[scheduler]\nmax_num_seqs = 4\npolcy = \"fcfs\"\n");
  EXPECT_NE(e.find("test.toml:6: unknown key 'scheduler.polcy'"), std::string::npos) << e;
  e = error_of("\n[schedular]\nx = 1\n");
  EXPECT_NE(e.find("unknown section 'schedular'"), std::string::npos) << e;
  EXPECT_NE(e.find("test.toml:"), std::string::npos) << e;
  e = error_of("[server]\nhost = \"0.0.0.0\"\nport = \"eighty\"\n");
  EXPECT_NE(e.find("test.toml:3: key 'server.port' must be an integer"), std::string::npos) << e;
  e = error_of("[cache]\n\n\ngpu_memory_utilization = 1.5\n");
  EXPECT_NE(e.find("test.toml:4: key 'cache.gpu_memory_utilization' must be in [0.05, 0.99], got 1.5"), std::string::npos) << e;
  e = error_of("[scheduler]\npolicy = \"lottery\"\n");
  EXPECT_NE(e.find("key 'scheduler.policy' must be one of fair, fcfs, priority, sjf"), std::string::npos) << e;
  e = error_of("[scheduler]\npreemption = \"pause\"\n");
  EXPECT_NE(e.find("key 'scheduler.preemption' must be one of recompute, swap, got 'pause'"), std::string::npos) << e;
  e = error_of("[scheduler]\nmax_plans_in_flight = 9\n");
  EXPECT_NE(e.find("key 'scheduler.max_plans_in_flight' must be in [1, 8]"), std::string::npos) << e;
  e = error_of("[server]\nzmq_endpoint = \"shm:///tmp/x\"\n");
  EXPECT_NE(e.find("key 'server.zmq_endpoint' must be an inproc://"), std::string::npos) << e;
  e = error_of("[tokenizer]\nworkers = 0\n");
  EXPECT_NE(e.find("key 'tokenizer.workers' must be in [1, 64], got 0"), std::string::npos) << e;
  e = error_of("[cache]\nswap_space_mb = -1\n");
  EXPECT_NE(e.find("key 'cache.swap_space_mb' must be in [0, 4194304], got -1"), std::string::npos) << e;
  e = error_of("[server\nport = 1\n");
  EXPECT_NE(e.find("syntax error in test.toml"), std::string::npos) << e;
}

TEST(EngineConfig, TheStepBudgetHoldsEverySequence) {
  std::string e = error_of("[scheduler]\nmax_num_seqs = 32\nmax_num_batched_tokens = 16\n");
  EXPECT_NE(e.find("test.toml: scheduler.max_num_batched_tokens (16) must be at least scheduler.max_num_seqs (32)"),
            std::string::npos)
      << e;
  EXPECT_NO_THROW(parse_engine_config("[scheduler]\nmax_num_seqs = 32\nmax_num_batched_tokens = 32\n", "t.toml"));
}

TEST(EngineConfig, ApiKeysThatAHeaderCannotCarryAreRefused) {
  for (const char* keys : {"[\"\"]", "[\"a b\"]", "[\"ok\", \"tab\\there\"]"}) {
    try {
      parse_engine_config(std::string("[server]\napi_keys = ") + keys + "\n", "t.toml");
      ADD_FAILURE() << keys << " was accepted";
    } catch (const runtime::ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("t.toml:2: key 'server.api_keys'"), std::string::npos) << e.what();
    }
  }
}

TEST(EngineConfig, ValuesInMiBAreBytesInTheBackend) {
  const EngineConfig c = parse_engine_config("[cache]\nswap_space_mb = 3\ncpu_kv_cache_mb = 5\n", "t.toml");
  EXPECT_EQ(c.backend.swap_space_bytes, 3 << 20);
  EXPECT_EQ(c.backend.cpu_kv_cache_bytes, 5 << 20);
}

TEST(EngineConfig, KvCacheDtypeIsACacheKey) {
  EXPECT_EQ(parse_engine_config("[cache]\nkv_cache_dtype = \"fp8\"\n", "t.toml").backend.kv_cache_dtype,
            gpu::KvCacheDtype::kFp8);
  EXPECT_EQ(parse_engine_config("[cache]\nkv_cache_dtype = \"fp8_e4m3\"\n", "t.toml").backend.kv_cache_dtype,
            gpu::KvCacheDtype::kFp8);
  EXPECT_EQ(parse_engine_config("", "t.toml").backend.kv_cache_dtype, gpu::KvCacheDtype::kAuto);
  try {
    parse_engine_config("[cache]\nkv_cache_dtype = \"fp8_e5m2\"\n", "t.toml");
    ADD_FAILURE() << "fp8_e5m2 accepted";
  } catch (const runtime::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("t.toml:2: key 'cache.kv_cache_dtype'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("fp8_e5m2"), std::string::npos) << e.what();
  }
}

TEST(EngineConfig, DerivedValuesComeFromWhatTheyDeriveFrom) {
  EngineConfig c = parse_engine_config("[model]\npath = \"/models/Llama-3-8B/\"\n[server]\nmax_inflight = 9\n"
                                       "max_body_bytes = 4096\napi_keys = [\"k1\", \"k2\"]\n"
                                       "[scheduler]\npreemption = \"swap\"\n[cache]\nenable_prefix_caching = false\n",
                                       "t.toml");
  const gateway::GatewayOptions g = gateway_options(c, 777);
  EXPECT_EQ(g.http.served_model_name, "Llama-3-8B");
  EXPECT_EQ(g.zmq.served_model_name, "Llama-3-8B");
  EXPECT_EQ(g.zmq.max_in_flight, 9);
  EXPECT_EQ(g.http.max_model_len, 777);
  EXPECT_EQ(g.zmq.max_model_len, 777);
  EXPECT_EQ(g.zmq.max_message_bytes, 4096);  // the ZeroMQ frame cap is HTTP's body cap
  EXPECT_EQ(g.http.api_keys, (std::vector<std::string>{"k1", "k2"}));
  EXPECT_EQ(g.zmq.api_keys, g.http.api_keys);
  EXPECT_TRUE(g.enable_zmq);
  EXPECT_FALSE(gateway_options(parse_engine_config("[server]\nzmq_endpoint = \"\"\n", "t.toml"), 1).enable_zmq);

  const scheduler::SchedulerConfig sc = scheduler_options(c, executor_info());
  EXPECT_EQ(sc.block_size, 32);
  EXPECT_EQ(sc.num_device_blocks, 100);
  EXPECT_EQ(sc.num_host_blocks, 7);
  EXPECT_EQ(sc.max_model_len, 512);
  EXPECT_EQ(sc.eos_token_ids, (std::vector<int32_t>{2, 3}));
  EXPECT_TRUE(sc.block_table_deltas);
  EXPECT_EQ(sc.preemption, scheduler::PreemptionMode::kSwap);
  EXPECT_FALSE(sc.enable_prefix_caching);
  EXPECT_NO_THROW(sc.validate());
}

TEST(EngineConfig, ShippedConfigsLoad) {
  int n = 0;
  for (auto& entry : std::filesystem::directory_iterator(std::string(ZINFER_SOURCE_DIR) + "/configs")) {
    if (entry.path().extension() != ".toml") continue;
    EXPECT_NO_THROW(load_engine_config(entry.path().string())) << entry.path();
    ++n;
  }
  EXPECT_GE(n, 3);
}

}  // namespace
}  // namespace zinfer::actors
