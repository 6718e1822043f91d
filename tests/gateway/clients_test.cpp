// The two clients of the ZeroMQ endpoint, run as child processes against a FakeEngine:
// tools/client (zinfer-client, C++) and examples/python/client.py (Debian's python3).
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "zmq_fixture.h"

namespace zinfer::gateway::testing {
namespace {

struct ChildResult {
  int status = -1;
  std::string out;
};

ChildResult run_child(const std::string& command) {
  ChildResult r;
  FILE* p = popen((command + " 2>/dev/null").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

std::string expected_text(int tokens) {
  std::string s;
  for (int k = 0; k < tokens; ++k) s += FakeEngine::token_text(0, k);
  return s;
}

class ClientsTest : public ZmqEndpointTest {
 protected:
  // The command line of each client, with the common flags after it.
  std::vector<std::string> clients() {
    std::vector<std::string> out{ZINFER_CLIENT_BIN};
    if (run_child("/usr/bin/python3 -c 'import zmq, msgpack'").status == 0) {
      out.push_back("/usr/bin/python3 " + std::string(ZINFER_SOURCE_DIR) + "/examples/python/client.py");
    } else {
      ADD_FAILURE() << "/usr/bin/python3 lacks python3-zmq or python3-msgpack";
    }
    return out;
  }
};

TEST_F(ClientsTest, StreamsText) {
  for (const auto& client : clients()) {
    SCOPED_TRACE(client);
    ChildResult r = run_child(client + " --endpoint " + endpoint_->endpoint() + " --prompt 'hi there' --max-tokens 4");
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.out, expected_text(4) + "\n");
  }
}

// Invariant 31 (docs/architecture.md): the command line is a contract.
TEST_F(ClientsTest, JsonOutputAndSamplingFlags) {
  size_t before = 0;
  for (const auto& client : clients()) {
    SCOPED_TRACE(client);
    ChildResult r = run_child(client + " --endpoint " + endpoint_->endpoint() +
                " --prompt 'hi' --max-tokens 3 --temperature 0.5 --seed 1234 --json");
    ASSERT_EQ(r.status, 0) << r.out;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["text"], expected_text(3));
    EXPECT_EQ(j["token_ids"], nlohmann::json({1000, 1001, 1002}));
    auto sent = engine_->submitted();
    ASSERT_EQ(sent.size(), before + 1);
    const auto& g = sent.back();
    EXPECT_EQ(g.prompt, "hi");
    EXPECT_EQ(g.sampling.max_tokens, 3);
    EXPECT_FLOAT_EQ(g.sampling.temperature, 0.5f);
    EXPECT_EQ(g.sampling.seed, 1234);
    before = sent.size();
  }
}

TEST_F(ClientsTest, ErrorReplyGivesExitStatusOne) {
  for (const auto& client : clients()) {
    SCOPED_TRACE(client);
    EXPECT_EQ(run_child(client + " --endpoint " + endpoint_->endpoint() + " --prompt x --max-tokens 0").status, 1);
    EXPECT_EQ(run_child(client + " --endpoint " + endpoint_->endpoint() + " --prompt TOO_LONG --max-tokens 2").status, 1);
  }
}

// Invariant 35 (docs/architecture.md): with keys configured, the reference clients pass theirs,
// from --api-key or the environment's ZINFER_API_KEY, and fail (status 1) without one.
TEST_F(ClientsTest, ApiKeyFromTheFlagOrTheEnvironment) {
  endpoint_.reset();
  ZmqEndpointOptions o;
  o.bind = "tcp://127.0.0.1:*";
  o.served_model_name = "test-model";
  o.max_model_len = 4096;
  o.api_keys = {"sk-client"};
  endpoint_ = std::make_unique<ZmqEndpoint>(*engine_, o);
  endpoint_->start();
  for (const auto& client : clients()) {
    SCOPED_TRACE(client);
    const std::string args = " --endpoint " + endpoint_->endpoint() + " --prompt hi --max-tokens 2";
    EXPECT_EQ(run_child("env -u ZINFER_API_KEY " + client + args).status, 1);
    EXPECT_EQ(run_child("env -u ZINFER_API_KEY " + client + args + " --api-key sk-wrong").status, 1);
    ChildResult r = run_child("env -u ZINFER_API_KEY " + client + args + " --api-key sk-client");
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.out, expected_text(2) + "\n");
    EXPECT_EQ(run_child("env ZINFER_API_KEY=sk-client " + client + args).status, 0);
  }
}

}  // namespace
}  // namespace zinfer::gateway::testing
