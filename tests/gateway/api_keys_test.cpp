// API keys: which requests pass, over HTTP (Authorization: Bearer) and ZeroMQ (api_key), the 401s
// in OpenAI's shape and as ErrorReply, the open paths, and the start-up warnings.
#include <cstdlib>

#include <gtest/gtest.h>

#include "gateway/api_keys.h"
#include "gateway/zmq_endpoint.h"
#include "server_fixture.h"
#include "zmq_fixture.h"

namespace zinfer::gateway::testing {
namespace {

namespace http = boost::beast::http;

TEST(ApiKeys, ConstantTimeComparisonIsEquality) {
  EXPECT_TRUE(equal_in_constant_time("", ""));
  EXPECT_TRUE(equal_in_constant_time("sk-abc", "sk-abc"));
  EXPECT_FALSE(equal_in_constant_time("sk-abd", "sk-abc"));
  EXPECT_FALSE(equal_in_constant_time("sk-ab", "sk-abc"));    // a prefix
  EXPECT_FALSE(equal_in_constant_time("sk-abcd", "sk-abc"));  // longer
  EXPECT_FALSE(equal_in_constant_time("", "sk-abc"));
  EXPECT_FALSE(equal_in_constant_time(std::string_view("sk-abc\0", 7), "sk-abc"));
}

TEST(ApiKeys, NoKeysAdmitEveryone) {
  ApiKeys keys;
  EXPECT_FALSE(keys.required());
  EXPECT_TRUE(keys.accepts(""));
  EXPECT_TRUE(keys.admits_http("/v1/completions", ""));
}

TEST(ApiKeys, AnyConfiguredKeyIsAccepted) {
  ApiKeys keys({"first", "second"});
  EXPECT_TRUE(keys.required());
  EXPECT_TRUE(keys.accepts("first"));
  EXPECT_TRUE(keys.accepts("second"));
  EXPECT_FALSE(keys.accepts(""));
  EXPECT_FALSE(keys.accepts("third"));
  EXPECT_FALSE(keys.accepts("firstsecond"));
}

TEST(ApiKeys, HttpNeedsBearerOnAllButTheOpenPaths) {
  ApiKeys keys({"k1"});
  EXPECT_TRUE(keys.admits_http("/v1/completions", "Bearer k1"));
  EXPECT_TRUE(keys.admits_http("/v1/chat/completions", "bearer k1"));  // the scheme is case-insensitive
  EXPECT_TRUE(keys.admits_http("/v1/models", "BEARER  k1"));
  EXPECT_FALSE(keys.admits_http("/v1/completions", ""));
  EXPECT_FALSE(keys.admits_http("/v1/completions", "k1"));
  EXPECT_FALSE(keys.admits_http("/v1/completions", "Bearer"));
  EXPECT_FALSE(keys.admits_http("/v1/completions", "Bearer "));
  EXPECT_FALSE(keys.admits_http("/v1/completions", "Bearerk1"));
  EXPECT_FALSE(keys.admits_http("/v1/completions", "Basic k1"));
  EXPECT_FALSE(keys.admits_http("/v1/completions", "Bearer k2"));
  EXPECT_FALSE(keys.admits_http("/v1/completions", "Bearer k1 "));
  // Paths other than /v1/* are closed too (/tokenize, an unknown path), except the operator's.
  EXPECT_FALSE(keys.admits_http("/tokenize", ""));
  EXPECT_FALSE(keys.admits_http("/nothing-here", ""));
  for (const char* open : {"/health", "/ping", "/metrics"}) EXPECT_TRUE(keys.admits_http(open, "")) << open;
}

TEST(ApiKeys, KeysAHeaderCannotCarryAreRefused) {
  EXPECT_EQ(api_key_problem("sk-123_ABC.def"), "");
  EXPECT_NE(api_key_problem(""), "");
  EXPECT_NE(api_key_problem("two words"), "");
  EXPECT_NE(api_key_problem("tab\there"), "");
  EXPECT_NE(api_key_problem("nl\n"), "");
}

TEST(ApiKeys, TheEnvironmentGivesTheKeyWhenTheConfigurationGivesNone) {
  ::unsetenv(kApiKeyEnvironmentVariable);
  EXPECT_TRUE(api_keys_with_environment({}).empty());
  ::setenv(kApiKeyEnvironmentVariable, "from-env", 1);
  EXPECT_EQ(api_keys_with_environment({}), std::vector<std::string>{"from-env"});
  EXPECT_EQ(api_keys_with_environment({"from-file"}), std::vector<std::string>{"from-file"});
  ::setenv(kApiKeyEnvironmentVariable, "has space", 1);
  EXPECT_THROW(api_keys_with_environment({}), std::runtime_error);
  ::setenv(kApiKeyEnvironmentVariable, "", 1);
  EXPECT_TRUE(api_keys_with_environment({}).empty());
  ::unsetenv(kApiKeyEnvironmentVariable);
}

TEST(ApiKeys, LoopbackIsTellingApartFromTheWorld) {
  for (const char* h : {"127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"}) EXPECT_TRUE(is_loopback_host(h)) << h;
  for (const char* h : {"0.0.0.0", "::", "10.0.0.5", "192.168.1.1", "*", "eth0", ""}) {
    EXPECT_FALSE(is_loopback_host(h)) << h;
  }
  for (const char* e : {"tcp://127.0.0.1:5555", "tcp://127.0.0.1:*", "tcp://[::1]:5555", "ipc:///tmp/x", "inproc://x",
                        "tcp://localhost:5555"}) {
    EXPECT_TRUE(is_local_zmq_endpoint(e)) << e;
  }
  for (const char* e : {"tcp://*:5555", "tcp://0.0.0.0:5555", "tcp://eth0:5555", "tcp://10.1.1.1:5555"}) {
    EXPECT_FALSE(is_local_zmq_endpoint(e)) << e;
  }
}

TEST(ApiKeys, BindingBeyondLoopbackWithoutAKeyIsWarnedAbout) {
  GatewayOptions o;  // the defaults: loopback only
  EXPECT_TRUE(exposure_warnings(o).empty());
  o.http.host = "0.0.0.0";
  o.zmq.bind = "tcp://*:5555";
  auto w = exposure_warnings(o);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_NE(w[0].find("0.0.0.0"), std::string::npos) << w[0];
  EXPECT_NE(w[1].find("tcp://*:5555"), std::string::npos) << w[1];
  o.enable_zmq = false;
  EXPECT_EQ(exposure_warnings(o).size(), 1u);
  o.http.api_keys = {"k"};
  EXPECT_TRUE(exposure_warnings(o).empty());
  o.enable_zmq = true;
  o.zmq.api_keys = {"k"};
  EXPECT_TRUE(exposure_warnings(o).empty());
}

// ---- HTTP ---------------------------------------------------------------------------------------

HttpReply request_with(uint16_t port, http::verb method, const std::string& target, const std::string& authorization,
                       const std::string& body = {}) {
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket socket(io);
  socket.connect({boost::asio::ip::make_address("127.0.0.1"), port});
  http::request<http::string_body> req{method, target, 11};
  req.set(http::field::host, "127.0.0.1");
  if (!authorization.empty()) req.set(http::field::authorization, authorization);
  if (!body.empty()) req.set(http::field::content_type, "application/json");
  req.body() = body;
  req.prepare_payload();
  http::write(socket, req);
  boost::beast::flat_buffer buffer;
  http::response<http::string_body> res;
  http::read(socket, buffer, res);
  HttpReply r;
  r.status = static_cast<int>(res.result_int());
  r.content_type = std::string(res[http::field::content_type]);
  r.body = res.body();
  if (r.status == 401) EXPECT_EQ(res[http::field::www_authenticate], "Bearer");
  return r;
}

// Invariant 35 (docs/architecture.md): access needs a key, but for the operator's paths.
class HttpApiKeyTest : public GatewayServerTest {
 protected:
  void SetUp() override {
    HttpOptions o = test_options();
    o.api_keys = {"sk-one", "sk-two"};
    start(o);
  }
};

TEST_F(HttpApiKeyTest, GenerationWithoutAValidKeyGets401InOpenAisShape) {
  const std::string body = R"({"model": "test-model", "prompt": "hi", "max_tokens": 2})";
  for (const std::string auth : {"", "Bearer sk-three", "sk-one", "Basic sk-one"}) {
    auto r = request_with(port_, http::verb::post, "/v1/completions", auth, body);
    EXPECT_EQ(r.status, 401) << auth;
    auto j = r.json();
    EXPECT_EQ(j["error"]["type"], "authentication_error");
    EXPECT_EQ(j["error"]["code"], 401);
    EXPECT_TRUE(j["error"].contains("param"));
    EXPECT_NE(j["error"]["message"].get<std::string>().find("Bearer"), std::string::npos);
  }
  EXPECT_TRUE(engine_->submitted().empty());  // nothing reached the engine
  EXPECT_EQ(request_with(port_, http::verb::get, "/v1/models", "").status, 401);
  EXPECT_EQ(request_with(port_, http::verb::post, "/tokenize", "", "{}").status, 401);
}

TEST_F(HttpApiKeyTest, EitherKeyServes) {
  const std::string body = R"({"model": "test-model", "prompt": "hi", "max_tokens": 2})";
  EXPECT_EQ(request_with(port_, http::verb::post, "/v1/completions", "Bearer sk-one", body).status, 200);
  EXPECT_EQ(request_with(port_, http::verb::post, "/v1/completions", "Bearer sk-two", body).status, 200);
  EXPECT_EQ(request_with(port_, http::verb::get, "/v1/models", "Bearer sk-two").status, 200);
  EXPECT_EQ(engine_->submitted().size(), 2u);
}

TEST_F(HttpApiKeyTest, HealthAndMetricsStayOpen) {
  EXPECT_EQ(request_with(port_, http::verb::get, "/health", "").status, 200);
  EXPECT_EQ(request_with(port_, http::verb::get, "/metrics", "").status, 200);
}

// ---- ZeroMQ -------------------------------------------------------------------------------------

class ZmqApiKeyTest : public ZmqEndpointTest {
 protected:
  void SetUp() override {
    engine_ = std::make_unique<FakeEngine>();
    ZmqEndpointOptions o;
    o.bind = "tcp://127.0.0.1:*";
    o.served_model_name = "test-model";
    o.max_model_len = 4096;
    o.api_keys = {"sk-zmq"};
    endpoint_ = std::make_unique<ZmqEndpoint>(*engine_, o);
    endpoint_->start();
  }
};

TEST_F(ZmqApiKeyTest, GenerateRequestWithoutTheKeyGets401) {
  ZmqClient c(ctx_, endpoint_->endpoint());
  for (const std::string key : {"", "sk-other", "sk-zm"}) {
    auto r = request(3, "hello", 2);
    r.api_key = key;
    c.send(r);
    auto f = c.receive();
    ASSERT_TRUE(f) << key;
    ASSERT_EQ(f->type(), protocol::MessageType::kErrorReply) << key;
    auto e = f->as<protocol::ErrorReply>();
    EXPECT_EQ(e.request_id, 3u);
    EXPECT_EQ(e.code, 401);
    EXPECT_EQ(e.kind, "unauthorized");
  }
  EXPECT_TRUE(engine_->submitted().empty());
}

TEST_F(ZmqApiKeyTest, TheKeyServesAndStaysAtTheGateway) {
  ZmqClient c(ctx_, endpoint_->endpoint());
  auto r = request(4, "hello", 2);
  r.api_key = "sk-zmq";
  c.send(r);
  for (int i = 0; i < 2; ++i) {
    auto f = c.receive();
    ASSERT_TRUE(f);
    ASSERT_EQ(f->type(), protocol::MessageType::kTextDelta);
  }
  auto sent = engine_->submitted();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].api_key, "");  // the pipeline never sees a key
}

}  // namespace
}  // namespace zinfer::gateway::testing
