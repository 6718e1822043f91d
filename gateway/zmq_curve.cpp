#include "gateway/zmq_curve.h"

#include <sys/stat.h>

#include <fstream>
#include <stdexcept>
#include <vector>

namespace zinfer::gateway {

namespace {

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

bool decodes(const std::string& z85) {
  if (z85.size() != 40) return false;
  uint8_t raw[32];
  return zmq_z85_decode(raw, z85.c_str()) != nullptr;
}

}  // namespace

std::vector<std::string> read_z85_keys(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read the CURVE key file " + path);
  std::vector<std::string> keys;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    line = trim(line);
    // A comment is a whole line: '#' is one of Z85's characters, so it cannot end a key.
    if (line.empty() || line.front() == '#') continue;
    if (auto open = line.find('"'); open != std::string::npos) {
      const auto close = line.find('"', open + 1);
      if (close == std::string::npos) throw std::runtime_error(path + ":" + std::to_string(number) + ": unclosed quote");
      line = line.substr(open + 1, close - open - 1);
    }
    if (!decodes(line)) {
      // The line itself stays out of the message: it may be a secret.
      throw std::runtime_error(path + ":" + std::to_string(number) +
                               ": not a Z85 CURVE key (40 characters of ZeroMQ's Z85 alphabet)");
    }
    keys.push_back(line);
  }
  return keys;
}

CurveKeys load_curve_keys(const std::string& secret_key_file, const std::string& client_keys_file) {
  if (!zmq_has("curve")) throw std::runtime_error("this libzmq was built without CURVE security");
  struct stat st {};
  if (::stat(secret_key_file.c_str(), &st) != 0) {
    throw std::runtime_error("cannot read the CURVE secret key file " + secret_key_file);
  }
  if ((st.st_mode & 077) != 0) {
    throw std::runtime_error("the CURVE secret key file " + secret_key_file +
                             " may be read by others: chmod 600 it");
  }
  CurveKeys k;
  const auto secret = read_z85_keys(secret_key_file);
  if (secret.size() != 1) {
    throw std::runtime_error("the CURVE secret key file " + secret_key_file + " must hold one key, it holds " +
                             std::to_string(secret.size()));
  }
  k.server_secret = secret[0];
  char pub[41];
  if (zmq_curve_public(pub, k.server_secret.c_str()) != 0) {
    throw std::runtime_error("cannot derive the public key of " + secret_key_file);
  }
  k.server_public = pub;
  for (auto& key : read_z85_keys(client_keys_file)) k.client_publics.insert(std::move(key));
  if (k.client_publics.empty()) {
    throw std::runtime_error("the CURVE client keys file " + client_keys_file + " lists no key: no client could connect");
  }
  return k;
}

std::pair<std::string, std::string> make_curve_keypair() {
  char pub[41], sec[41];
  if (zmq_curve_keypair(pub, sec) != 0) throw std::runtime_error("this libzmq cannot make CURVE keys");
  return {pub, sec};
}

ZapHandler::ZapHandler(zmq::context_t& context, std::set<std::string> allowed_z85)
    : socket_(context, zmq::socket_type::rep) {
  for (const auto& z : allowed_z85) {
    uint8_t raw[32];
    if (!zmq_z85_decode(raw, z.c_str())) throw std::runtime_error("ZAP: a malformed client key");
    allowed_.insert(std::string(reinterpret_cast<const char*>(raw), 32));
  }
  socket_.set(zmq::sockopt::linger, 0);
  try {
    socket_.bind("inproc://zeromq.zap.01");
  } catch (const zmq::error_t& e) {
    throw std::runtime_error(std::string("ZAP: another authentication handler holds this context: ") + e.what());
  }
}

void ZapHandler::handle() {
  while (true) {
    std::vector<zmq::message_t> frames;
    zmq::message_t part;
    if (!socket_.recv(part, zmq::recv_flags::dontwait)) return;
    frames.push_back(std::move(part));
    while (frames.back().more()) {
      zmq::message_t next;
      (void)socket_.recv(next, zmq::recv_flags::none);
      frames.push_back(std::move(next));
    }
    // ZAP 1.0 (rfc.zeromq.org/spec/27): version, request id, domain, address, identity,
    // mechanism, credentials...; CURVE's one credential is the client's 32-byte public key.
    const std::string version = frames.size() > 0 ? frames[0].to_string() : "";
    const std::string request_id = frames.size() > 1 ? frames[1].to_string() : "";
    const std::string mechanism = frames.size() > 5 ? frames[5].to_string() : "";
    bool ok = version == "1.0" && mechanism == "CURVE" && frames.size() > 6 && allowed_.count(frames[6].to_string()) > 0;
    if (!ok) ++refused_;
    const std::string status = ok ? "200" : "400";
    const std::string text = ok ? "OK" : "client key not allowed";
    socket_.send(zmq::buffer(std::string("1.0")), zmq::send_flags::sndmore);
    socket_.send(zmq::buffer(request_id), zmq::send_flags::sndmore);
    socket_.send(zmq::buffer(status), zmq::send_flags::sndmore);
    socket_.send(zmq::buffer(text), zmq::send_flags::sndmore);
    socket_.send(zmq::buffer(std::string()), zmq::send_flags::sndmore);  // user id
    socket_.send(zmq::buffer(std::string()), zmq::send_flags::none);     // metadata
  }
}

}  // namespace zinfer::gateway
