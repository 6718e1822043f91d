// Settings of the gateway. The ones a config file sets ([server]) are described in
// server_settings() (settings/setting.h) and their defaults below are the only ones; the others
// are filled by whoever starts the gateway from what it learns at start-up (the model's context
// length and name) or are for tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "settings/setting.h"

namespace zinfer::gateway {

// Sampling defaults a request that leaves the field out gets (the model's generation_config.json,
// as vLLM applies it: [server] generation_config); unset = OpenAI's default.
struct SamplingDefaults {
  std::optional<double> temperature, top_p, min_p, repetition_penalty;
  std::optional<int64_t> top_k;
};

struct HttpOptions {
  std::string host = "127.0.0.1";    // [server]
  uint16_t port = 8000;              // [server] 0 = pick a free port (HttpServer::port() tells which)
  // [server] the `model` clients name. "" in the file means the model folder's name, which the
  // pipeline fills in before the gateway starts (actors/pipeline/engine_config.h).
  std::string served_model_name;
  // [server] more names clients may give as `model` (vLLM's --served-model-name A B ...: the
  // first is served_model_name, the one responses carry).
  std::vector<std::string> served_model_aliases;
  int max_logprobs = 20;             // [server] most logprobs / top_logprobs a request may ask for
  bool log_requests = false;         // [server] log each request's parameters at info level
  // [server] accept a chat template in a chat request (vLLM's --trust-request-chat-template): a
  // template runs code of the client's choosing in the tokenizer, so it is off by default.
  bool trust_request_chat_template = false;
  // [server] generation_config: where the sampling defaults come from: "auto" (the model folder's
  // generation_config.json), "vllm" (none: OpenAI's defaults) or a folder holding one.
  std::string generation_config = "auto";
  SamplingDefaults sampling_defaults;  // read from generation_config by whoever starts the gateway
  // [server] reasoning_parser: "" (none), "qwen3" or "deepseek_r1" (gateway/reasoning/): chat
  // outputs split into reasoning_content and content; structured output applies after the reasoning.
  std::string reasoning_parser;
  int io_threads = 2;                // [server] all connections share these threads
  std::size_t max_body_bytes = 8 << 20;  // [server] larger request bodies get 413
  int max_in_flight = 4096;          // [server] max_inflight: requests accepted but unfinished; more get 429
  int max_model_len = 0;             // context length; 0 = unknown (the engine checks it)
  int idle_timeout_ms = 60000;       // a connection with no complete request is closed after this
  int write_timeout_ms = 60000;      // a client that stops reading its stream is dropped after this
  // [server] api_keys: when not empty, every path but /health, /ping and /metrics needs
  // `Authorization: Bearer <one of them>` (gateway/api_keys.h).
  std::vector<std::string> api_keys;
  // [server] tool_call_parser: the parser (gateway/tool_parsers/) that reads the calls of
  // tool_choice "auto" out of the output, vLLM's --tool-call-parser; "" = none.
  // enable_auto_tool_choice: serve tool_choice "auto" (vLLM's --enable-auto-tool-choice; it needs
  // a parser). Without them a request with tools must say "none", "required" or name a function.
  std::string tool_call_parser;
  bool enable_auto_tool_choice = false;
  // [server] open connections at most; past it a new connection gets a 503 and is closed. 0 = the
  // descriptor limit (raised to its hard limit at start) less headroom (connection_limit.h).
  int64_t max_connections = 0;
  // [server] requests in flight per tenant at most; more get 429 (0 = no cap but max_inflight).
  int max_in_flight_per_tenant = 0;
  // [server] tenant_key: who a tenant is, "user" (the OpenAI `user` field) or "api_key" (the key
  // in `Authorization: Bearer`); requests without one are the tenant "".
  std::string tenant_key = "user";
};

// Its served_model_name, max_in_flight, api_keys and max_message_bytes (max_body_bytes) are the
// HTTP server's (one [server] setting each), given by whoever starts the gateway.
struct ZmqEndpointOptions {
  std::string bind = "tcp://127.0.0.1:5555";  // [server] zmq_endpoint; "tcp://127.0.0.1:*" picks a free port
  std::string served_model_name;               // a request naming another model gets 404
  int max_model_len = 0;                       // 0 = unknown (the engine checks it)
  int max_in_flight = 4096;          // per endpoint; more get ErrorReply 429
  int send_high_water_mark = 100000; // frames queued towards slow clients
  // A frame larger than this closes the sender's connection unread (ZMQ_MAXMSGSIZE), so that no
  // client can make the gateway buffer more than HTTP's body cap (max_body_bytes) per message.
  int64_t max_message_bytes = 8 << 20;
  std::vector<std::string> api_keys;  // when not empty, a GenerateRequest needs one in its api_key
  // [server] zmq_curve_secret_key_file, zmq_curve_client_keys_file: CURVE (gateway/zmq_curve.h)
  // when both are set; "" = none, refused beyond loopback when api_keys are required.
  std::string curve_secret_key_file;
  std::string curve_client_keys_file;
};

struct GatewayOptions {
  HttpOptions http;
  bool enable_http = true;
  ZmqEndpointOptions zmq;
  bool enable_zmq = true;            // [server] zmq_endpoint = "" turns it off
  // [server] on SIGTERM, requests in flight get this long to finish before they are ended with an
  // error (new ones get 503 meanwhile); 0 ends them at once.
  int shutdown_grace_s = 30;
};

// [server]: host, port, zmq_endpoint, served_model_name, served_model_aliases, io_threads,
// max_inflight, max_body_bytes, max_logprobs, log_requests, trust_request_chat_template,
// generation_config, reasoning_parser, api_keys, shutdown_grace_s, tool_call_parser,
// enable_auto_tool_choice, max_connections, max_inflight_per_tenant, tenant_key,
// zmq_curve_secret_key_file, zmq_curve_client_keys_file.
const settings::Settings<GatewayOptions>& server_settings();

}  // namespace zinfer::gateway
