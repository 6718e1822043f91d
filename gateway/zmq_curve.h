// CURVE security for the ZeroMQ client endpoint (libzmq's CurveZMQ): the server's secret key and
// the public keys of the clients it admits come from files ([server] zmq_curve_secret_key_file,
// zmq_curve_client_keys_file). Every connection is then encrypted and authenticated: a client
// whose public key is not listed is refused during the handshake (by a ZAP handler, the
// mechanism libzmq asks), before any frame of it is read. The API key then travels encrypted.
//
// Key files hold Z85 keys (40 characters), one per line; a line starting with '#' is a comment
// ('#' is also a Z85 character, so a comment is a whole line), and a key may be quoted (the `public-key = "..."` lines of zmq's certificate files read as well). The secret
// key file must be readable by its owner only.
#pragma once

#include <set>
#include <string>

#include <zmq.hpp>

namespace zinfer::gateway {

struct CurveKeys {
  std::string server_secret;           // Z85
  std::string server_public;           // Z85, derived from the secret
  std::set<std::string> client_publics;  // Z85
};

// Reads both files; throws std::runtime_error naming the file (and line) that is wrong: missing,
// no key, a malformed key, a secret key file that others may read.
CurveKeys load_curve_keys(const std::string& secret_key_file, const std::string& client_keys_file);

// The Z85 keys of a key file, in order.
std::vector<std::string> read_z85_keys(const std::string& path);

// A new key pair {public, secret} in Z85 (zmq_curve_keypair).
std::pair<std::string, std::string> make_curve_keypair();

// The ZAP handler of one ZeroMQ context (inproc://zeromq.zap.01): answers libzmq's
// authentication requests, admitting CURVE clients whose public key is listed and nothing else.
// Its socket is polled by the endpoint's thread (handle() when readable).
class ZapHandler {
 public:
  ZapHandler(zmq::context_t& context, std::set<std::string> allowed_z85);
  zmq::socket_t& socket() { return socket_; }
  // Answers every request waiting on the socket.
  void handle();
  // Clients refused so far.
  int64_t refused() const { return refused_; }

 private:
  zmq::socket_t socket_;
  std::set<std::string> allowed_;  // 32-byte binary keys
  int64_t refused_ = 0;
};

}  // namespace zinfer::gateway
