// Configuration errors name the key and the line; every shipped config file loads.
#include <filesystem>

#include <gtest/gtest.h>

#include "runtime/config.h"

namespace zinfer::runtime {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_config(text, "test.toml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(Config, DefaultsWithoutAFile) {
  Config c = parse_config("", "empty.toml");
  EXPECT_EQ(c.model.device, "cpu");
  EXPECT_EQ(c.scheduler.policy, "fcfs");
  EXPECT_EQ(c.cache.block_size, 16);
  EXPECT_TRUE(c.cache.enable_prefix_caching);
}

TEST(Config, ReadsValues) {
  Config c = parse_config("[scheduler]\npolicy = \"priority\"\nmax_num_seqs = 8\nmax_plans_in_flight = 4\n"
                          "[cache]\ngpu_memory_utilization = 0.5\nenable_prefix_caching = false\n"
                          "[endpoints]\nexecutor = \"ipc:///tmp/x\"\n",
                          "t.toml");
  EXPECT_EQ(c.scheduler.policy, "priority");
  EXPECT_EQ(c.scheduler.max_num_seqs, 8);
  EXPECT_EQ(c.scheduler.max_plans_in_flight, 4);
  EXPECT_DOUBLE_EQ(c.cache.gpu_memory_utilization, 0.5);
  EXPECT_FALSE(c.cache.enable_prefix_caching);
  EXPECT_EQ(c.endpoints.executor, "ipc:///tmp/x");
}

// Invariant 29 (docs/architecture.md): every key is honoured or refused with key, file and line.
TEST(Config, UnknownKeyNamesKeyAndLine) {
  std::string e = error_of("[server]\nport = 8000\n\n[scheduler]\nmax_num_seqs = 4\npolcy = \"fcfs\"\n");
  EXPECT_NE(e.find("scheduler.polcy"), std::string::npos) << e;
  EXPECT_NE(e.find("test.toml:6"), std::string::npos) << e;
}

TEST(Config, UnknownSectionNamesLine) {
  std::string e = error_of("\n[schedular]\nx = 1\n");
  EXPECT_NE(e.find("schedular"), std::string::npos) << e;
  EXPECT_NE(e.find("test.toml:"), std::string::npos) << e;
}

TEST(Config, WrongTypeNamesKeyAndLine) {
  std::string e = error_of("[server]\nhost = \"0.0.0.0\"\nport = \"eighty\"\n");
  EXPECT_NE(e.find("server.port"), std::string::npos) << e;
  EXPECT_NE(e.find("test.toml:3"), std::string::npos) << e;
  EXPECT_NE(e.find("integer"), std::string::npos) << e;
}

TEST(Config, OutOfRangeNamesKeyAndLine) {
  std::string e = error_of("[cache]\n\n\ngpu_memory_utilization = 1.5\n");
  EXPECT_NE(e.find("cache.gpu_memory_utilization"), std::string::npos) << e;
  EXPECT_NE(e.find("test.toml:4"), std::string::npos) << e;
  e = error_of("[scheduler]\npolicy = \"lottery\"\n");
  EXPECT_NE(e.find("scheduler.policy"), std::string::npos) << e;
  EXPECT_NE(e.find("fcfs"), std::string::npos) << e;
  e = error_of("[scheduler]\nmax_plans_in_flight = 9\n");
  EXPECT_NE(e.find("scheduler.max_plans_in_flight"), std::string::npos) << e;
  e = error_of("[endpoints]\nscheduler = \"http://x\"\n");
  EXPECT_NE(e.find("endpoints.scheduler"), std::string::npos) << e;
}

// Invariant 11 (docs/architecture.md): the same actor code runs over every transport.
TEST(Config, ShmEndpointsOnlyWhereOneActorSends) {
  runtime::Config c = runtime::parse_config(
      "[endpoints]\nexecutor = \"shm:///tmp/x.shm\"\ndetokenizer = \"shm:///tmp/d.shm\"\n", "test.toml");
  EXPECT_EQ(c.endpoints.executor, "shm:///tmp/x.shm");
  EXPECT_EQ(c.endpoints.detokenizer, "shm:///tmp/d.shm");
  std::string e = error_of("[endpoints]\n\nscheduler = \"shm:///tmp/s.shm\"\n");
  EXPECT_NE(e.find("endpoints.scheduler"), std::string::npos) << e;
  EXPECT_NE(e.find("test.toml:3"), std::string::npos) << e;
  EXPECT_NE(e.find("several actors send"), std::string::npos) << e;
  e = error_of("[endpoints]\nexecutor = \"shm://\"\n");
  EXPECT_NE(e.find("endpoints.executor"), std::string::npos) << e;
  EXPECT_NE(e.find("path"), std::string::npos) << e;
  e = error_of("[endpoints]\ndetokenizer = \"shmem:///tmp/x\"\n");
  EXPECT_NE(e.find("shm://"), std::string::npos) << e;
}

TEST(Config, SyntaxErrorNamesFile) {
  std::string e = error_of("[server\nport = 1\n");
  EXPECT_NE(e.find("test.toml"), std::string::npos) << e;
}

TEST(Config, ShippedConfigsLoad) {
  int n = 0;
  for (auto& entry : std::filesystem::directory_iterator(std::string(ZINFER_SOURCE_DIR) + "/configs")) {
    if (entry.path().extension() != ".toml") continue;
    EXPECT_NO_THROW(load_config(entry.path().string())) << entry.path();
    ++n;
  }
  EXPECT_GE(n, 3);
}

}  // namespace
}  // namespace zinfer::runtime
