// CURVE on the ZeroMQ client endpoint: a client with a listed key and the API key is served, with
// a wrong API key it gets 401; a client with an unlisted CURVE key or none at all is never heard;
// an endpoint beyond loopback requiring API keys refuses to start without CURVE keys; key files
// that are wrong are named in the error.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "gateway/zmq_curve.h"
#include "zmq_fixture.h"

namespace zinfer::gateway::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

struct KeyFolder {
  KeyFolder() {
    std::string pattern = (fs::temp_directory_path() / "zinfer-curve-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp");
    dir = pattern;
  }
  ~KeyFolder() { fs::remove_all(dir); }
  std::string write(const std::string& name, const std::string& text, mode_t mode = 0600) const {
    const std::string path = (fs::path(dir) / name).string();
    std::ofstream(path) << text;
    ::chmod(path.c_str(), mode);
    return path;
  }
  std::string dir;
};

class CurveEndpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto [server_public, server_secret] = make_curve_keypair();
    client_ = make_curve_keypair();
    stranger_ = make_curve_keypair();
    secret_file_ = keys_.write("server.key", "# the server's secret key\n" + server_secret + "\n");
    clients_file_ = keys_.write("clients.pub", "# admitted clients\npublic-key = \"" + client_.first + "\"\n", 0644);
    engine_ = std::make_unique<FakeEngine>();
    ZmqEndpointOptions o;
    o.bind = "tcp://0.0.0.0:*";  // beyond loopback: allowed because CURVE is on
    o.served_model_name = "test-model";
    o.max_in_flight = 8;
    o.api_keys = {"sk-curve"};
    o.curve_secret_key_file = secret_file_;
    o.curve_client_keys_file = clients_file_;
    endpoint_ = std::make_unique<ZmqEndpoint>(*engine_, o);
    endpoint_->start();
    EXPECT_EQ(endpoint_->curve_public_key(), server_public);
    port_ = endpoint_->endpoint().substr(endpoint_->endpoint().rfind(':') + 1);
  }
  void TearDown() override {
    endpoint_.reset();
    engine_.reset();
  }

  // A DEALER to the endpoint with the given client key pair (none: plain, no CURVE).
  std::unique_ptr<ZmqClient> client(const std::pair<std::string, std::string>* pair) {
    return std::make_unique<ZmqClient>(ctx_, "tcp://127.0.0.1:" + port_, [&](zmq::socket_t& s) {
      if (!pair) return;
      s.set(zmq::sockopt::curve_serverkey, endpoint_->curve_public_key());
      s.set(zmq::sockopt::curve_publickey, pair->first);
      s.set(zmq::sockopt::curve_secretkey, pair->second);
    });
  }

  static protocol::GenerateRequest request(uint64_t id, const std::string& key) {
    protocol::GenerateRequest r;
    r.request_id = id;
    r.prompt = "hello";
    r.sampling.max_tokens = 2;
    r.api_key = key;
    return r;
  }

  KeyFolder keys_;
  std::string secret_file_, clients_file_, port_;
  std::pair<std::string, std::string> client_, stranger_;
  zmq::context_t ctx_{1};
  std::unique_ptr<FakeEngine> engine_;
  std::unique_ptr<ZmqEndpoint> endpoint_;
};

TEST_F(CurveEndpointTest, ListedClientWithTheApiKeyIsServedWrongKeyGets401) {
  auto c = client(&client_);
  c->send(request(1, "sk-curve"));
  auto first = c->receive();
  ASSERT_TRUE(first);
  EXPECT_NE(first->type(), protocol::MessageType::kErrorReply);
  c->send(request(2, "sk-wrong"));
  for (int i = 0; i < 20; ++i) {
    auto f = c->receive();
    ASSERT_TRUE(f);
    if (f->type() != protocol::MessageType::kErrorReply) continue;  // the first request's deltas
    auto e = f->as<protocol::ErrorReply>();
    EXPECT_EQ(e.request_id, 2u);
    EXPECT_EQ(e.code, 401);
    return;
  }
  FAIL() << "no 401 for the wrong API key";
}

TEST_F(CurveEndpointTest, UnlistedOrPlainClientsAreNeverHeard) {
  auto stranger = client(&stranger_);
  stranger->send(request(1, "sk-curve"));
  auto plain = client(nullptr);
  plain->send(request(2, "sk-curve"));
  EXPECT_FALSE(stranger->receive(1500ms));
  EXPECT_FALSE(plain->receive(500ms));
  EXPECT_TRUE(engine_->submitted().empty());
}

int run_child(const std::string& command, std::string* out = nullptr) {
  FILE* p = popen((command + " 2>/dev/null").c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) {
    if (out) out->append(buf, n);
  }
  const int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// Both reference clients over CURVE: keys made by `zinfer-client --curve-keygen`, the server's
// public key from its file; without the CURVE flags the same client hears nothing (exit 3).
TEST(CurveClients, ReferenceClientsConnectWithTheirKeys) {
  KeyFolder keys;
  const std::string server = keys.dir + "/server";
  const std::string client_key = keys.dir + "/client";
  ASSERT_EQ(run_child(std::string(ZINFER_CLIENT_BIN) + " --curve-keygen " + server), 0);
  ASSERT_EQ(run_child(std::string(ZINFER_CLIENT_BIN) + " --curve-keygen " + client_key), 0);
  struct stat st {};
  ASSERT_EQ(::stat((server + ".key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  FakeEngine engine;
  ZmqEndpointOptions o;
  o.bind = "tcp://127.0.0.1:*";
  o.served_model_name = "test-model";
  o.api_keys = {"sk-c"};
  o.curve_secret_key_file = server + ".key";
  o.curve_client_keys_file = client_key + ".pub";
  ZmqEndpoint endpoint(engine, o);
  endpoint.start();
  std::vector<std::string> clients{ZINFER_CLIENT_BIN};
  if (run_child("/usr/bin/python3 -c 'import zmq, msgpack'") == 0) {
    clients.push_back("/usr/bin/python3 " + std::string(ZINFER_SOURCE_DIR) + "/examples/python/client.py");
  }
  for (const auto& c : clients) {
    SCOPED_TRACE(c);
    const std::string base = c + " --endpoint " + endpoint.endpoint() + " --prompt hi --max-tokens 3 --api-key sk-c";
    std::string out;
    EXPECT_EQ(run_child(base + " --curve-server-key " + server + ".pub --curve-secret-key-file " + client_key + ".key",
                        &out),
              0);
    EXPECT_FALSE(out.empty());
    EXPECT_EQ(run_child(base + " --timeout-ms 1500"), 3);  // no CURVE: never heard
  }
}

TEST(CurveConfig, ApiKeysBeyondLoopbackWithoutCurveRefuseToStart) {
  FakeEngine engine;
  ZmqEndpointOptions o;
  o.bind = "tcp://0.0.0.0:*";
  o.api_keys = {"sk-x"};
  ZmqEndpoint endpoint(engine, o);
  try {
    endpoint.start();
    FAIL() << "started";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("zmq_curve_secret_key_file"), std::string::npos) << e.what();
  }
  // On loopback the same keys are fine (they never leave the host).
  o.bind = "tcp://127.0.0.1:*";
  ZmqEndpoint local(engine, o);
  EXPECT_NO_THROW(local.start());
}

TEST(CurveConfig, BadKeyFilesAreNamed) {
  KeyFolder keys;
  auto [pub, sec] = make_curve_keypair();
  const std::string clients = keys.write("clients", pub + "\n", 0644);
  const auto error_of = [&](const std::string& secret_file, const std::string& clients_file) {
    try {
      load_curve_keys(secret_file, clients_file);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string open_secret = keys.write("open.key", sec + "\n", 0644);
  EXPECT_NE(error_of(open_secret, clients).find("chmod 600"), std::string::npos);
  const std::string bad = keys.write("bad.key", "not a key\n");
  EXPECT_NE(error_of(bad, clients).find("bad.key:1"), std::string::npos);
  EXPECT_EQ(error_of(bad, clients).find("not a key"), std::string::npos);  // a secret stays out of messages
  const std::string good = keys.write("good.key", sec + "\n");
  EXPECT_NE(error_of(good, keys.dir + "/missing").find("missing"), std::string::npos);
  EXPECT_NE(error_of(good, keys.write("empty", "# none\n", 0644)).find("lists no key"), std::string::npos);
  EXPECT_EQ(error_of(good, clients), "");
  // Only one of the two files configured: refused at start.
  FakeEngine engine;
  ZmqEndpointOptions o;
  o.bind = "tcp://127.0.0.1:*";
  o.curve_secret_key_file = good;
  ZmqEndpoint endpoint(engine, o);
  EXPECT_THROW(endpoint.start(), std::runtime_error);
}

}  // namespace
}  // namespace zinfer::gateway::testing
