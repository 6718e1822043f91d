#include "runtime/config.h"

#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include <toml.hpp>

namespace zinfer::runtime {

namespace {

// One setting: how to read it into the Config, and its checks.
struct Setting {
  std::function<void(Config&, const toml::value&, const std::function<void(const std::string&)>&)> read;
};

std::string where(const std::string& origin, const toml::value& v) {
  return origin + ":" + std::to_string(v.location().line());
}

Setting int_setting(std::nullptr_t, int64_t min, int64_t max, std::function<int64_t&(Config&)> field) {
  return Setting{[=](Config& c, const toml::value& v, const std::function<void(const std::string&)>& fail) {
    if (!v.is_integer()) fail("must be an integer");
    int64_t x = v.as_integer();
    if (x < min || x > max) fail("must be in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " + std::to_string(x));
    field(c) = x;
  }};
}

Setting float_setting(double min, double max, std::function<double&(Config&)> field) {
  return Setting{[=](Config& c, const toml::value& v, const std::function<void(const std::string&)>& fail) {
    double x = 0;
    if (v.is_floating()) x = v.as_floating();
    else if (v.is_integer()) x = static_cast<double>(v.as_integer());
    else fail("must be a number");
    if (!(x >= min && x <= max)) {
      std::ostringstream os;
      os << "must be in [" << min << ", " << max << "], got " << x;
      fail(os.str());
    }
    field(c) = x;
  }};
}

Setting bool_setting(std::function<bool&(Config&)> field) {
  return Setting{[=](Config& c, const toml::value& v, const std::function<void(const std::string&)>& fail) {
    if (!v.is_boolean()) fail("must be true or false");
    field(c) = v.as_boolean();
  }};
}

Setting string_setting(std::vector<std::string> allowed, std::function<std::string&(Config&)> field) {
  return Setting{[=](Config& c, const toml::value& v, const std::function<void(const std::string&)>& fail) {
    if (!v.is_string()) fail("must be a string");
    std::string s = v.as_string();
    if (!allowed.empty()) {
      bool ok = false;
      std::string list;
      for (auto& a : allowed) {
        ok = ok || a == s;
        list += (list.empty() ? "" : ", ") + a;
      }
      if (!ok) fail("must be one of " + list + ", got '" + s + "'");
    }
    field(c) = s;
  }};
}

// shm:// (runtime/shm_link.h) only where the pipeline gives an endpoint exactly one sender:
// `one_to_one`. The others (the scheduler's, the gateway's, the tokenizer's inbound endpoints)
// take messages from several actors.
Setting endpoint_setting(std::function<std::string&(Config&)> field, bool one_to_one = false) {
  return Setting{[=](Config& c, const toml::value& v, const std::function<void(const std::string&)>& fail) {
    if (!v.is_string()) fail("must be a string");
    std::string s = v.as_string();
    const bool zmq_scheme = s.rfind("inproc://", 0) == 0 || s.rfind("ipc://", 0) == 0 || s.rfind("tcp://", 0) == 0;
    const bool shm_scheme = s.rfind("shm://", 0) == 0;
    if (!s.empty() && !zmq_scheme && !(one_to_one && shm_scheme)) {
      if (shm_scheme) fail("cannot be shm:// (several actors send to it); use inproc://, ipc:// or tcp://");
      fail(std::string("must be an inproc://, ipc://") + (one_to_one ? ", shm://" : "") + " or tcp:// endpoint, got '" + s + "'");
    }
    if (shm_scheme && s.size() == 6) fail("needs a file path after shm://, got '" + s + "'");
    field(c) = s;
  }};
}

Setting string_list_setting(std::vector<std::string> allowed, std::function<std::vector<std::string>&(Config&)> field) {
  return Setting{[=](Config& c, const toml::value& v, const std::function<void(const std::string&)>& fail) {
    if (!v.is_array()) fail("must be an array of strings");
    std::vector<std::string> out;
    for (const auto& e : v.as_array()) {
      if (!e.is_string()) fail("must be an array of strings");
      std::string s = e.as_string();
      bool ok = allowed.empty();
      for (auto& a : allowed) ok = ok || a == s;
      if (!ok) fail("has unknown entry '" + s + "'");
      out.push_back(s);
    }
    field(c) = out;
  }};
}

const std::map<std::string, std::map<std::string, Setting>>& schema() {
  static const std::map<std::string, std::map<std::string, Setting>> s = {
      {"server",
       {{"host", string_setting({}, [](Config& c) -> std::string& { return c.server.host; })},
        {"port", int_setting(nullptr, 0, 65535, [](Config& c) -> int64_t& { return c.server.port; })},
        {"zmq_endpoint", endpoint_setting([](Config& c) -> std::string& { return c.server.zmq_endpoint; })},
        {"served_model_name", string_setting({}, [](Config& c) -> std::string& { return c.server.served_model_name; })},
        {"io_threads", int_setting(nullptr, 1, 64, [](Config& c) -> int64_t& { return c.server.io_threads; })},
        {"max_inflight", int_setting(nullptr, 1, 1 << 20, [](Config& c) -> int64_t& { return c.server.max_inflight; })},
        {"max_body_bytes", int_setting(nullptr, 1024, int64_t(1) << 32, [](Config& c) -> int64_t& { return c.server.max_body_bytes; })}}},
      {"model",
       {{"path", string_setting({}, [](Config& c) -> std::string& { return c.model.path; })},
        {"device", string_setting({"cpu", "cuda", "synthetic"}, [](Config& c) -> std::string& { return c.model.device; })},
        {"dtype", string_setting({"auto", "float32", "bfloat16", "float16"}, [](Config& c) -> std::string& { return c.model.dtype; })},
        {"max_model_len", int_setting(nullptr, 0, int64_t(1) << 24, [](Config& c) -> int64_t& { return c.model.max_model_len; })}}},
      {"scheduler",
       {{"policy", string_setting({"fcfs", "priority", "sjf", "fair"}, [](Config& c) -> std::string& { return c.scheduler.policy; })},
        {"preemption", string_setting({"recompute", "swap"}, [](Config& c) -> std::string& { return c.scheduler.preemption; })},
        {"max_num_seqs", int_setting(nullptr, 1, 4096, [](Config& c) -> int64_t& { return c.scheduler.max_num_seqs; })},
        {"max_num_batched_tokens", int_setting(nullptr, 16, 1 << 20, [](Config& c) -> int64_t& { return c.scheduler.max_num_batched_tokens; })},
        {"max_plans_in_flight", int_setting(nullptr, 1, 8, [](Config& c) -> int64_t& { return c.scheduler.max_plans_in_flight; })}}},
      {"cache",
       {{"block_size", int_setting(nullptr, 1, 256, [](Config& c) -> int64_t& { return c.cache.block_size; })},
        {"gpu_memory_utilization", float_setting(0.05, 0.99, [](Config& c) -> double& { return c.cache.gpu_memory_utilization; })},
        {"num_gpu_blocks", int_setting(nullptr, 0, int64_t(1) << 24, [](Config& c) -> int64_t& { return c.cache.num_gpu_blocks; })},
        {"num_cpu_blocks", int_setting(nullptr, 0, int64_t(1) << 24, [](Config& c) -> int64_t& { return c.cache.num_cpu_blocks; })},
        {"swap_space_mb", int_setting(nullptr, 0, int64_t(1) << 22, [](Config& c) -> int64_t& { return c.cache.swap_space_mb; })},
        {"cpu_kv_cache_mb", int_setting(nullptr, 1, int64_t(1) << 22, [](Config& c) -> int64_t& { return c.cache.cpu_kv_cache_mb; })},
        {"enable_prefix_caching", bool_setting([](Config& c) -> bool& { return c.cache.enable_prefix_caching; })}}},
      {"tokenizer",
       {{"workers", int_setting(nullptr, 1, 64, [](Config& c) -> int64_t& { return c.tokenizer.workers; })}}},
      {"endpoints",
       {{"tokenizer", endpoint_setting([](Config& c) -> std::string& { return c.endpoints.tokenizer; })},
        {"scheduler", endpoint_setting([](Config& c) -> std::string& { return c.endpoints.scheduler; })},
        {"executor", endpoint_setting([](Config& c) -> std::string& { return c.endpoints.executor; }, true)},
        {"detokenizer", endpoint_setting([](Config& c) -> std::string& { return c.endpoints.detokenizer; }, true)},
        {"gateway", endpoint_setting([](Config& c) -> std::string& { return c.endpoints.gateway; })}}},
      {"runtime",
       {{"log_level", string_setting({"trace", "debug", "info", "warn", "error", "off"}, [](Config& c) -> std::string& { return c.runtime.log_level; })},
        {"actors", string_list_setting({"tokenizer", "scheduler", "executor", "detokenizer", "gateway"},
                                       [](Config& c) -> std::vector<std::string>& { return c.runtime.actors; })}}},
  };
  return s;
}

Config from_toml(const toml::value& root, const std::string& origin) {
  Config c;
  c.source = origin;
  if (!root.is_table()) throw ConfigError(origin + ": the file is not a TOML table");
  for (const auto& [section, table] : root.as_table()) {
    auto sit = schema().find(section);
    if (sit == schema().end()) {
      std::string known;
      for (auto& [name, _] : schema()) known += (known.empty() ? "" : ", ") + name;
      throw ConfigError(where(origin, table) + ": unknown section '" + section + "' (known: " + known + ")");
    }
    if (!table.is_table()) throw ConfigError(where(origin, table) + ": '" + section + "' must be a table ([" + section + "])");
    for (const auto& [key, value] : table.as_table()) {
      auto kit = sit->second.find(key);
      if (kit == sit->second.end()) {
        throw ConfigError(where(origin, value) + ": unknown key '" + section + "." + key + "'");
      }
      kit->second.read(c, value, [&](const std::string& why) {
        throw ConfigError(where(origin, value) + ": key '" + section + "." + key + "' " + why);
      });
    }
  }
  if (c.scheduler.max_num_batched_tokens < c.scheduler.max_num_seqs) {
    throw ConfigError(origin + ": scheduler.max_num_batched_tokens (" + std::to_string(c.scheduler.max_num_batched_tokens) +
                      ") must be at least scheduler.max_num_seqs (" + std::to_string(c.scheduler.max_num_seqs) + ")");
  }
  return c;
}

}  // namespace

Config parse_config(const std::string& toml_text, const std::string& origin) {
  std::istringstream in(toml_text);
  toml::value root;
  try {
    root = toml::parse(in, origin);
  } catch (const toml::syntax_error& e) {
    throw ConfigError(std::string("syntax error in ") + origin + ":\n" + e.what());
  }
  return from_toml(root, origin);
}

Config load_config(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw ConfigError("cannot open config file '" + path + "'");
  std::stringstream ss;
  ss << f.rdbuf();
  return parse_config(ss.str(), path);
}

}  // namespace zinfer::runtime
