// zinfer-client: sends one prompt to the gateway's ZeroMQ endpoint and prints the answer as it
// streams, or, with --json, one object {"token_ids": [...], "text": "..."} at the end.
//   zinfer-client --endpoint tcp://127.0.0.1:5555 --prompt TEXT --max-tokens N
//                 [--temperature T] [--seed S] [--json] [--api-key K]
//                 [--curve-server-key FILE --curve-secret-key-file FILE]
//   zinfer-client --curve-keygen PREFIX     writes PREFIX.key (secret, mode 600) and PREFIX.pub
// The API key defaults to the environment's ZINFER_API_KEY (docs/protocol.md, Access). With the
// CURVE options the connection is encrypted and authenticated (the server's [server]
// zmq_curve_* settings): the server's public key, and this client's secret key, whose public key
// the server lists.
// Exit status: 0 when the request finished, 1 on an ErrorReply, 2 on bad usage, 3 on a timeout.
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <stdexcept>
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
  std::string curve_server_key_file;  // the server's public key
  std::string curve_secret_key_file;  // this client's secret key
};

// The first key of a key file (Z85, 40 characters; '#' comment lines, an optional pair of quotes), as
// the server reads them (gateway/zmq_curve.h).
std::string read_key(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read the key file " + path);
  std::string line;
  while (std::getline(in, line)) {
    if (auto open = line.find('"'); open != std::string::npos) {
      line = line.substr(open + 1, line.find('"', open + 1) - open - 1);
    }
    const auto b = line.find_first_not_of(" \t\r");
    if (b == std::string::npos || line[b] == '#') continue;  // a comment is a whole line ('#' is Z85)
    line = line.substr(b, line.find_last_not_of(" \t\r") - b + 1);
    uint8_t raw[32];
    if (line.size() != 40 || !zmq_z85_decode(raw, line.c_str())) throw std::runtime_error(path + ": not a Z85 CURVE key");
    return line;
  }
  throw std::runtime_error(path + " holds no key");
}

int keygen(const std::string& prefix) {
  char pub[41], sec[41];
  if (zmq_curve_keypair(pub, sec) != 0) throw std::runtime_error("this libzmq cannot make CURVE keys");
  const std::string secret_path = prefix + ".key";
  {
    const mode_t old = ::umask(077);
    std::ofstream out(secret_path);
    ::umask(old);
    if (!out) throw std::runtime_error("cannot write " + secret_path);
    out << "# zinfer CURVE secret key: keep it private\n" << sec << "\n";
  }
  std::ofstream pub_out(prefix + ".pub");
  if (!pub_out) throw std::runtime_error("cannot write " + prefix + ".pub");
  pub_out << pub << "\n";
  std::cout << pub << "\n";
  return 0;
}

int run(const Args& args) {
  using namespace zinfer::protocol;
  zmq::context_t ctx(1);
  zmq::socket_t socket(ctx, zmq::socket_type::dealer);
  socket.set(zmq::sockopt::linger, 0);
  if (!args.curve_server_key_file.empty() || !args.curve_secret_key_file.empty()) {
    if (args.curve_server_key_file.empty() || args.curve_secret_key_file.empty()) {
      throw std::runtime_error("--curve-server-key and --curve-secret-key-file go together");
    }
    const std::string secret = read_key(args.curve_secret_key_file);
    char pub[41];
    if (zmq_curve_public(pub, secret.c_str()) != 0) throw std::runtime_error("cannot derive the client's public key");
    socket.set(zmq::sockopt::curve_serverkey, read_key(args.curve_server_key_file));
    socket.set(zmq::sockopt::curve_publickey, std::string(pub));
    socket.set(zmq::sockopt::curve_secretkey, secret);
  }
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
  auto* prompt = app.add_option("--prompt", args.prompt, "the prompt text");
  std::string keygen_prefix;
  auto* keygen_opt = app.add_option("--curve-keygen", keygen_prefix,
                                    "write a new CURVE key pair to PREFIX.key (secret) and PREFIX.pub, then exit");
  keygen_opt->excludes(prompt);
  app.add_option("--curve-server-key", args.curve_server_key_file, "CURVE: a file with the server's public key");
  app.add_option("--curve-secret-key-file", args.curve_secret_key_file,
                 "CURVE: a file with this client's secret key (its public key must be listed by the server)");
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
  if (keygen_prefix.empty() && prompt->count() == 0) {
    std::cerr << "zinfer-client: --prompt is required\n";
    return 2;
  }
  try {
    if (!keygen_prefix.empty()) return keygen(keygen_prefix);
    return run(args);
  } catch (const std::exception& e) {
    std::cerr << "zinfer-client: " << e.what() << "\n";
    return 1;
  }
}
