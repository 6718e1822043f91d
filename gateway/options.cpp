#include "gateway/options.h"

#include "gateway/api_keys.h"
#include "gateway/tool_parsers/tool_parser.h"
#include "gateway/reasoning/reasoning_parser.h"

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

// "" (none) and the registry's names (gateway/tool_parsers/registry.cpp).
std::vector<std::string> tool_parser_choices() {
  std::vector<std::string> names{""};
  for (auto& n : tools::tool_parser_names()) names.push_back(std::move(n));
  return names;
}

// "" (none) and the parsers' names: a name the gateway does not know stops start-up (as a choice,
// so that the config round-trip test finds another legal value).
std::vector<std::string> reasoning_parser_choices() {
  std::vector<std::string> names = {""};
  for (const auto& p : reasoning::reasoning_parsers()) names.emplace_back(p.name);
  return names;
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
      settings::text<O>("server", "reasoning_parser", [](O& o) -> auto& { return o.http.reasoning_parser; },
                        reasoning_parser_choices(),
                        "chat outputs split into reasoning_content and content: \"\" (none), qwen3 or deepseek_r1"),
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
      settings::integer<O>("server", "max_connections", [](O& o) -> auto& { return o.http.max_connections; }, 0,
                           int64_t(1) << 30,
                           "open HTTP connections at most, more get 503 (0 = the descriptor limit less a tenth)"),
      settings::integer<O>("server", "max_inflight_per_tenant",
                           [](O& o) -> auto& { return o.http.max_in_flight_per_tenant; }, 0, 1 << 20,
                           "requests in flight per tenant at most, more get 429 (0 = no per-tenant cap)"),
      settings::text<O>("server", "tenant_key", [](O& o) -> auto& { return o.http.tenant_key; }, {"user", "api_key"},
                        "who a tenant is for max_inflight_per_tenant: the `user` field or the API key"),
      settings::text<O>("server", "zmq_curve_secret_key_file", [](O& o) -> auto& { return o.zmq.curve_secret_key_file; },
                        {}, "CURVE: a file (mode 600) with the ZeroMQ endpoint's secret key (Z85); with "
                            "zmq_curve_client_keys_file, clients must use CURVE and a listed key"),
      settings::text<O>("server", "zmq_curve_client_keys_file",
                        [](O& o) -> auto& { return o.zmq.curve_client_keys_file; }, {},
                        "CURVE: a file with the public keys (Z85, one per line) of the clients admitted"),
      settings::integer<O>("server", "shutdown_grace_s", &O::shutdown_grace_s, 0, 3600,
                           "on SIGTERM: seconds requests in flight may take to finish before they end with an error"),
      settings::text<O>("server", "tool_call_parser", [](O& o) -> auto& { return o.http.tool_call_parser; },
                        tool_parser_choices(),
                        "the parser of tool calls for tool_choice \"auto\": hermes | llama3_json | mistral; \"\" = none"),
      settings::flag<O>("server", "enable_auto_tool_choice", [](O& o) -> auto& { return o.http.enable_auto_tool_choice; },
                        "serve tool_choice \"auto\" (needs tool_call_parser)"),
  };
  return s;
}

}  // namespace zinfer::gateway
