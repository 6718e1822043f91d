// zinfer-client: sends one prompt to the gateway's ZeroMQ endpoint and prints the answer as it
// streams, or, with --json, one object {"token_ids": [...], "text": "..."} at the end.
//   zinfer-client --endpoint tcp://127.0.0.1:5555 --prompt TEXT --max-tokens N
//                 [--temperature T] [--seed S] [--json] [--api-key K]
// The API key defaults to the environment's ZINFER_API_KEY (docs/protocol.md, Access).
// Exit status: 0 when the request finished, 1 on an ErrorReply, 2 on bad usage, 3 on a timeout.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <zmq.hpp>

#include "protocol/envelope.h"

namespace {

struct Args {
  std::string endpoint = "tcp://127.0.0.1:5555";
  std::string prompt;
  std::string model;
  int max_tokens = 16;
  float temperature = 1.0f;
  int64_t seed = -1;
  bool ignore_eos = false;
  bool json = false;
  int timeout_ms = 120000;
  std::string api_key;
};

int run(const Args& args) {
  using namespace zinfer::protocol;
  zmq::context_t ctx(1);
  zmq::socket_t socket(ctx, zmq::socket_type::dealer);
  socket.set(zmq::sockopt::linger, 0);
  socket.connect(args.endpoint);

  // One request per connection, so any non-zero id is unique on it.
  GenerateRequest req;
  req.request_id = 1;
  req.model = args.model;
  req.prompt = args.prompt;
  req.sampling.max_tokens = args.max_tokens;
  req.sampling.temperature = args.temperature;
  req.sampling.seed = args.seed;
  req.sampling.ignore_eos = args.ignore_eos;
  req.api_key = args.api_key;
  socket.send(zmq::buffer(encode(req)), zmq::send_flags::none);

  std::vector<int32_t> token_ids;
  std::string text;
  for (;;) {
    zmq::pollitem_t item{socket.handle(), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, std::chrono::milliseconds(args.timeout_ms)) == 0) {
      std::cerr << "zinfer-client: no answer from " << args.endpoint << " within " << args.timeout_ms << " ms\n";
      return 3;
    }
    zmq::message_t msg;
    (void)socket.recv(msg, zmq::recv_flags::none);
    Frame frame = open(std::string_view(static_cast<const char*>(msg.data()), msg.size()));
    if (frame.type() == MessageType::kErrorReply) {
      auto err = frame.as<ErrorReply>();
      std::cerr << "zinfer-client: error " << err.code << " (" << err.kind << "): " << err.message << "\n";
      return 1;
    }
    auto delta = frame.as<TextDelta>();
    if (delta.request_id != req.request_id) continue;
    token_ids.insert(token_ids.end(), delta.token_ids.begin(), delta.token_ids.end());
    text += delta.text;
    if (!args.json) {
      std::cout << delta.text << std::flush;
    }
    if (!delta.finish_reason.empty()) break;
  }
  if (args.json) {
    nlohmann::json out = {{"token_ids", token_ids}, {"text", text}};
    std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    std::cout << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  CLI::App app{"zinfer-client: one prompt through the zinfer ZeroMQ endpoint"};
  app.add_option("--endpoint", args.endpoint, "the gateway's ZeroMQ address")->capture_default_str();
  app.add_option("--prompt", args.prompt, "the prompt text")->required();
  app.add_option("--max-tokens", args.max_tokens, "tokens to generate")->capture_default_str();
  app.add_option("--temperature", args.temperature, "sampling temperature, 0 = greedy")->capture_default_str();
  app.add_option("--seed", args.seed, "sampling seed, -1 = unseeded")->capture_default_str();
  app.add_option("--model", args.model, "model name (default: the served one)");
  if (const char* key = std::getenv("ZINFER_API_KEY")) args.api_key = key;
  app.add_option("--api-key", args.api_key, "the gateway's API key (default: $ZINFER_API_KEY)");
  app.add_flag("--ignore-eos", args.ignore_eos, "keep generating past the end-of-sequence token");
  app.add_flag("--json", args.json, "print one JSON object {token_ids, text} at the end");
  app.add_option("--timeout-ms", args.timeout_ms, "give up after this long without a message")->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    return run(args);
  } catch (const std::exception& e) {
    std::cerr << "zinfer-client: " << e.what() << "\n";
    return 1;
  }
}
