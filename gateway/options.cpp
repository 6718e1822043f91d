#include "gateway/options.h"

#include "gateway/api_keys.h"

namespace zinfer::gateway {

namespace {

std::string zmq_endpoint_rule(const settings::Value& v) {
  const std::string& s = std::get<std::string>(v);
  if (s.empty() || s.rfind("tcp://", 0) == 0 || s.rfind("ipc://", 0) == 0 || s.rfind("inproc://", 0) == 0) return "";
  return "must be an inproc://, ipc:// or tcp:// endpoint, got '" + s + "'";
}

std::string api_keys_rule(const settings::Value& v) {
  const auto& keys = std::get<std::vector<std::string>>(v);
  for (size_t i = 0; i < keys.size(); ++i) {
    // The key itself stays out of the message: it is a secret, and errors reach logs.
    if (auto problem = api_key_problem(keys[i]); !problem.empty()) return "entry " + std::to_string(i + 1) + " " + problem;
  }
  return "";
}

}  // namespace

const settings::Settings<GatewayOptions>& server_settings() {
  using O = GatewayOptions;
  static const settings::Settings<O> s = {
      settings::text<O>("server", "host", [](O& o) -> auto& { return o.http.host; }, {}, "HTTP listen address (OpenAI API)"),
      settings::integer<O>("server", "port", [](O& o) -> auto& { return o.http.port; }, 0, 65535,
                           "HTTP port (0 = any free port)"),
      // One setting, two members: the endpoint's address, and whether there is one.
      [] {
        auto z = settings::text<O>("server", "zmq_endpoint", [](O& o) -> auto& { return o.zmq.bind; }, {},
                                   "native ZeroMQ client endpoint (ROUTER); \"\" turns it off", zmq_endpoint_rule);
        z.set = [](O& o, const settings::Value& v) {
          o.zmq.bind = std::get<std::string>(v);
          o.enable_zmq = !o.zmq.bind.empty();
        };
        z.get = [](const O& o) -> settings::Value { return o.enable_zmq ? o.zmq.bind : std::string(); };
        return z;
      }(),
      settings::text<O>("server", "served_model_name", [](O& o) -> auto& { return o.http.served_model_name; }, {},
                        "the `model` clients name; \"\" = the model folder's name"),
      settings::text_list<O>("server", "served_model_aliases", [](O& o) -> auto& { return o.http.served_model_aliases; },
                             {}, "more names clients may give as `model` (served_model_name is the one answered)"),
      settings::integer<O>("server", "max_logprobs", [](O& o) -> auto& { return o.http.max_logprobs; }, 0, 20,
                           "most logprobs (completions) or top_logprobs (chat) a request may ask for (the executors give 20 at most)"),
      settings::flag<O>("server", "log_requests", [](O& o) -> auto& { return o.http.log_requests; },
                        "log each request's parameters at info level"),
      settings::flag<O>("server", "trust_request_chat_template",
                        [](O& o) -> auto& { return o.http.trust_request_chat_template; },
                        "accept a chat_template in chat requests (else they are answered 400)"),
      settings::text<O>("server", "generation_config", [](O& o) -> auto& { return o.http.generation_config; }, {},
                        "sampling defaults for fields a request leaves out: auto (the model's "
                        "generation_config.json), vllm (none) or a folder holding a generation_config.json"),
      settings::integer<O>("server", "io_threads", [](O& o) -> auto& { return o.http.io_threads; }, 1, 64,
                           "HTTP I/O threads (connections are async: not one thread each)"),
      settings::integer<O>("server", "max_inflight", [](O& o) -> auto& { return o.http.max_in_flight; }, 1, 1 << 20,
                           "more requests in flight than this are answered 429"),
      settings::integer<O>("server", "max_body_bytes", [](O& o) -> auto& { return o.http.max_body_bytes; }, 1024,
                           int64_t(1) << 32, "request bodies over this are answered 413"),
      [] {
        auto k = settings::text_list<O>("server", "api_keys", [](O& o) -> auto& { return o.http.api_keys; }, {},
                                        "API keys clients must present (HTTP: Authorization: Bearer; ZeroMQ: api_key); "
                                        "[] = none required, or ZINFER_API_KEY's");
        k.check = api_keys_rule;
        return k;
      }(),
      settings::integer<O>("server", "shutdown_grace_s", &O::shutdown_grace_s, 0, 3600,
                           "on SIGTERM: seconds requests in flight may take to finish before they end with an error"),
  };
  return s;
}

}  // namespace zinfer::gateway
