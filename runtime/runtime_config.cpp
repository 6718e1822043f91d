#include "runtime/runtime_config.h"

#include <algorithm>
#include "runtime/private_dir.h"

namespace zinfer::runtime {

namespace {

// shm:// (runtime/shm_link.h) only where the pipeline gives an endpoint exactly one sender:
// `one_to_one`. The others (the scheduler's, the gateway's, the tokenizer's inbound endpoints)
// take messages from several actors.
std::function<std::string(const settings::Value&)> endpoint_rule(bool one_to_one) {
  return [one_to_one](const settings::Value& v) -> std::string {
    const std::string& s = std::get<std::string>(v);
    const bool zmq_scheme = s.rfind("inproc://", 0) == 0 || s.rfind("ipc://", 0) == 0 || s.rfind("tcp://", 0) == 0;
    const bool shm_scheme = s.rfind("shm://", 0) == 0;
    if (!s.empty() && !zmq_scheme && !(one_to_one && shm_scheme)) {
      if (shm_scheme) return "cannot be shm:// (several actors send to it); use inproc://, ipc:// or tcp://";
      return std::string("must be an inproc://, ipc://") + (one_to_one ? ", shm://" : "") + " or tcp:// endpoint, got '" + s + "'";
    }
    if (shm_scheme && s.size() == 6) return "needs a file path after shm://, got '" + s + "'";
    return "";
  };
}

// {runtime_dir} in an endpoint becomes the deployment's private directory (runtime/private_dir.h)
// as the setting is read, so that every user of the endpoint sees the real path.
settings::Setting<EndpointsConfig> in_runtime_dir(settings::Setting<EndpointsConfig> s) {
  s.set = [set = std::move(s.set)](EndpointsConfig& e, const settings::Value& v) {
    set(e, settings::Value(expand_runtime_dir(std::get<std::string>(v))));
  };
  return s;
}

}  // namespace

const settings::Settings<EndpointsConfig>& endpoint_settings() {
  using E = EndpointsConfig;
  static const settings::Settings<E> s = {
      in_runtime_dir(settings::text<E>("endpoints", "tokenizer", &E::tokenizer, {}, "the tokenizer actor's endpoint",
                                       endpoint_rule(false))),
      in_runtime_dir(settings::text<E>("endpoints", "scheduler", &E::scheduler, {}, "the scheduler actor's endpoint",
                                       endpoint_rule(false))),
      in_runtime_dir(settings::text<E>("endpoints", "executor", &E::executor, {},
                                       "the executor actor's endpoint (shm:// allowed)", endpoint_rule(true))),
      in_runtime_dir(settings::text<E>("endpoints", "detokenizer", &E::detokenizer, {},
                                       "the detokenizer actor's endpoint (shm:// allowed)", endpoint_rule(true))),
      in_runtime_dir(settings::text<E>("endpoints", "gateway", &E::gateway, {}, "the gateway actor's endpoint",
                                       endpoint_rule(false))),
  };
  return s;
}

const settings::Settings<RuntimeConfig>& runtime_settings() {
  using R = RuntimeConfig;
  static const settings::Settings<R> s = {
      settings::text<R>("runtime", "log_level", &R::log_level, {"trace", "debug", "info", "warn", "error", "off"},
                        "log level"),
      settings::text_list<R>("runtime", "actors", &R::actors, {"tokenizer", "scheduler", "executor", "detokenizer", "gateway"},
                             "the actors this process (serve) or launch starts, in order"),
      settings::number<R>("runtime", "heartbeat_timeout_s", &R::heartbeat_timeout_s, 0.2, 3600.0,
                          "launch: seconds an actor process may go without answering its heartbeat before it is "
                          "killed and restarted"),
  };
  return s;
}

std::chrono::milliseconds heartbeat_timeout(const RuntimeConfig& config) {
  return std::chrono::milliseconds(static_cast<int64_t>(config.heartbeat_timeout_s * 1000.0));
}

std::chrono::milliseconds heartbeat_interval(const RuntimeConfig& config) {
  return std::clamp(heartbeat_timeout(config) / 4, std::chrono::milliseconds(50), std::chrono::milliseconds(1000));
}

}  // namespace zinfer::runtime
