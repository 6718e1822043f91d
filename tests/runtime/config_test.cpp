// The generic config reader (runtime/config.h) over settings described with settings/setting.h:
// errors name the key, the file and the line; the runtime's own sections read and check their
// values. The pipeline's composed config is tested in tests/pipeline/.
#include <gtest/gtest.h>

#include "runtime/config.h"
#include "runtime/runtime_config.h"

namespace zinfer::runtime {
namespace {

enum class Mode { kA, kB };

// A struct of every kind of member, described as a library describes its own.
struct Toy {
  int32_t count = 4;
  int64_t bytes = 2 << 20;
  uint16_t port = 80;
  double ratio = 0.5;
  bool on = true;
  std::string name = "x";
  std::string color = "red";
  Mode mode = Mode::kA;
  std::vector<std::string> list = {"a"};
  struct {
    int depth = 1;
  } inner;
};

const settings::Settings<Toy>& toy_settings() {
  static const settings::Settings<Toy> s = {
      settings::integer<Toy>("toy", "count", &Toy::count, 1, 10, "a count"),
      settings::integer<Toy>("toy", "bytes_mb", &Toy::bytes, 0, 64, "MiB held in bytes", int64_t(1) << 20),
      settings::integer<Toy>("toy", "port", &Toy::port, 0, 65535, "a port"),
      settings::number<Toy>("toy", "ratio", &Toy::ratio, 0.1, 0.9, "a ratio"),
      settings::flag<Toy>("toy", "on", &Toy::on, "a switch"),
      settings::text<Toy>("toy", "name", &Toy::name, {}, "any text",
                          [](const settings::Value& v) -> std::string {
                            return std::get<std::string>(v).find(' ') == std::string::npos ? "" : "must have no space";
                          }),
      settings::text<Toy>("toy", "color", &Toy::color, {"red", "green"}, "a choice"),
      settings::enumerated<Toy>("other", "mode", &Toy::mode,
                                std::vector<std::pair<std::string, Mode>>{{"a", Mode::kA}, {"b", Mode::kB}}, "an enum"),
      settings::text_list<Toy>("other", "list", &Toy::list, {"a", "b", "c"}, "a list"),
      settings::integer<Toy>("other", "depth", [](Toy& t) -> auto& { return t.inner.depth; }, 0, 9, "a nested member"),
  };
  return s;
}

Toy read(const std::string& text) {
  Toy t;
  ConfigReader r;
  r.bind(t, toy_settings());
  r.read_text(text, "test.toml");
  return t;
}

std::string error_of(const std::string& text) {
  try {
    read(text);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(ConfigReader, KeysLeftOutKeepTheirDefaults) {
  Toy t = read("");
  EXPECT_EQ(t.count, 4);
  EXPECT_EQ(t.bytes, 2 << 20);
  EXPECT_EQ(t.mode, Mode::kA);
  // get() reads the default back in the setting's unit.
  EXPECT_EQ(std::get<int64_t>(toy_settings()[1].get(Toy{})), 2);
}

TEST(ConfigReader, ReadsEveryKind) {
  Toy t = read("[toy]\ncount = 7\nbytes_mb = 3\nport = 8080\nratio = 0.25\non = false\nname = \"y\"\ncolor = \"green\"\n"
               "[other]\nmode = \"b\"\nlist = [\"b\", \"c\"]\ndepth = 5\n");
  EXPECT_EQ(t.count, 7);
  EXPECT_EQ(t.bytes, 3 << 20);
  EXPECT_EQ(t.port, 8080);
  EXPECT_DOUBLE_EQ(t.ratio, 0.25);
  EXPECT_FALSE(t.on);
  EXPECT_EQ(t.name, "y");
  EXPECT_EQ(t.color, "green");
  EXPECT_EQ(t.mode, Mode::kB);
  EXPECT_EQ(t.list, (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(t.inner.depth, 5);
}

TEST(ConfigReader, AnIntegerIsANumber) {
  EXPECT_NE(error_of("[toy]\nratio = 1\n").find("must be in [0.1, 0.9], got 1"), std::string::npos);
}

TEST(ConfigReader, UnknownKeyNamesKeyAndLine) {
  std::string e = error_of("[toy]\ncount = 4\n\n[other]\nmode = \"a\"\nmood = \"b\"\n");
  EXPECT_NE(e.find("unknown key 'other.mood'"), std::string::npos) << e;
  EXPECT_NE(e.find("test.toml:6"), std::string::npos) << e;
}

TEST(ConfigReader, UnknownSectionNamesLineAndTheKnownOnes) {
  std::string e = error_of("\n[tay]\nx = 1\n");
  EXPECT_NE(e.find("unknown section 'tay'"), std::string::npos) << e;
  EXPECT_NE(e.find("test.toml:"), std::string::npos) << e;
  EXPECT_NE(e.find("known: other, toy"), std::string::npos) << e;
  e = error_of("toy = 3\n");
  EXPECT_NE(e.find("'toy' must be a table"), std::string::npos) << e;
}

TEST(ConfigReader, WrongTypeNamesKeyAndLine) {
  struct Case {
    std::string text, key, rule;
  };
  for (const Case& c : std::vector<Case>{{"[toy]\n\ncount = \"four\"\n", "toy.count", "must be an integer"},
                                         {"[toy]\n\nratio = \"half\"\n", "toy.ratio", "must be a number"},
                                         {"[toy]\n\non = 1\n", "toy.on", "must be true or false"},
                                         {"[toy]\n\nname = 3\n", "toy.name", "must be a string"},
                                         {"[other]\n\nlist = [\"a\", 2]\n", "other.list", "must be an array of strings"},
                                         {"[other]\n\nlist = \"a\"\n", "other.list", "must be an array of strings"}}) {
    std::string e = error_of(c.text);
    EXPECT_NE(e.find("test.toml:3: key '" + c.key + "' " + c.rule), std::string::npos) << e;
  }
}

TEST(ConfigReader, IllegalValueNamesKeyLineAndRule) {
  struct Case {
    std::string text, expected;
  };
  for (const Case& c : std::vector<Case>{
           {"[toy]\ncount = 11\n", "test.toml:2: key 'toy.count' must be in [1, 10], got 11"},
           {"[toy]\nbytes_mb = 65\n", "key 'toy.bytes_mb' must be in [0, 64], got 65"},
           {"[toy]\nratio = 0.95\n", "key 'toy.ratio' must be in [0.1, 0.9], got 0.95"},
           {"[toy]\ncolor = \"blue\"\n", "key 'toy.color' must be one of red, green, got 'blue'"},
           {"[toy]\nname = \"a b\"\n", "key 'toy.name' must have no space"},
           {"[other]\nmode = \"c\"\n", "key 'other.mode' must be one of a, b, got 'c'"},
           {"[other]\nlist = [\"a\", \"d\"]\n", "key 'other.list' has unknown entry 'd'"},
           {"[other]\n\n\ndepth = -1\n", "test.toml:4: key 'other.depth' must be in [0, 9], got -1"}}) {
    std::string e = error_of(c.text);
    EXPECT_NE(e.find(c.expected), std::string::npos) << e;
  }
}

TEST(ConfigReader, SyntaxErrorNamesFile) {
  std::string e = error_of("[toy\ncount = 1\n");
  EXPECT_NE(e.find("syntax error in test.toml"), std::string::npos) << e;
}

TEST(ConfigReader, AKeyBoundTwiceIsABug) {
  Toy a, b;
  ConfigReader r;
  r.bind(a, toy_settings());
  EXPECT_THROW(r.bind(b, toy_settings()), std::logic_error);
}

TEST(ConfigReader, AppliesAValueFromElsewhereByTheSameRules) {
  Toy t;
  ConfigReader r;
  r.bind(t, toy_settings());
  const BoundSetting* count = r.find("toy", "count");
  ASSERT_NE(count, nullptr);
  r.apply(*count, parse_value(settings::Type::kInteger, "9", "--count"), "--count");
  EXPECT_EQ(t.count, 9);
  try {
    r.apply(*count, parse_value(settings::Type::kInteger, "12", "--count"), "--count");
    FAIL() << "12 is out of range";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--count: key 'toy.count' must be in [1, 10], got 12"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_value(settings::Type::kInteger, "9x", "--count"), ConfigError);
  EXPECT_THROW(parse_value(settings::Type::kNumber, "half", "--ratio"), ConfigError);
  EXPECT_THROW(parse_value(settings::Type::kBoolean, "yes", "--on"), ConfigError);
  EXPECT_EQ(std::get<std::vector<std::string>>(parse_value(settings::Type::kStringList, "a,b", "--list")),
            (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(r.find("toy", "nothing"), nullptr);
}

TEST(ConfigReader, DescribesLegalValuesForHelp) {
  const auto& s = toy_settings();
  EXPECT_EQ(s[0].range(), "1..10");
  EXPECT_EQ(s[6].range(), "red | green");
  EXPECT_EQ(settings::to_string(s[8].get(Toy{})), "[\"a\"]");
  EXPECT_EQ(settings::to_string(s[3].get(Toy{})), "0.5");
}

// The runtime's own sections.
struct RuntimeSections {
  EndpointsConfig endpoints;
  RuntimeConfig runtime;
};

RuntimeSections read_runtime(const std::string& text) {
  RuntimeSections s;
  ConfigReader r;
  r.bind(s.endpoints, endpoint_settings());
  r.bind(s.runtime, runtime_settings());
  r.read_text(text, "test.toml");
  return s;
}

std::string runtime_error_of(const std::string& text) {
  try {
    read_runtime(text);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(RuntimeConfig, ReadsItsSections) {
  RuntimeSections s = read_runtime("[endpoints]\nexecutor = \"ipc:///tmp/x\"\n[runtime]\nlog_level = \"debug\"\n"
                                   "actors = [\"executor\", \"scheduler\"]\n");
  EXPECT_EQ(s.endpoints.executor, "ipc:///tmp/x");
  EXPECT_EQ(s.runtime.log_level, "debug");
  EXPECT_EQ(s.runtime.actors, (std::vector<std::string>{"executor", "scheduler"}));
  std::string e = runtime_error_of("[runtime]\nactors = [\"executor\", \"planner\"]\n");
  EXPECT_NE(e.find("runtime.actors' has unknown entry 'planner'"), std::string::npos) << e;
  e = runtime_error_of("[endpoints]\nscheduler = \"http://x\"\n");
  EXPECT_NE(e.find("endpoints.scheduler"), std::string::npos) << e;
}

TEST(RuntimeConfig, ShmEndpointsOnlyWhereOneActorSends) {
  RuntimeSections s = read_runtime("[endpoints]\nexecutor = \"shm:///tmp/x.shm\"\ndetokenizer = \"shm:///tmp/d.shm\"\n");
  EXPECT_EQ(s.endpoints.executor, "shm:///tmp/x.shm");
  EXPECT_EQ(s.endpoints.detokenizer, "shm:///tmp/d.shm");
  std::string e = runtime_error_of("[endpoints]\n\nscheduler = \"shm:///tmp/s.shm\"\n");
  EXPECT_NE(e.find("endpoints.scheduler"), std::string::npos) << e;
  EXPECT_NE(e.find("test.toml:3"), std::string::npos) << e;
  EXPECT_NE(e.find("several actors send"), std::string::npos) << e;
  e = runtime_error_of("[endpoints]\nexecutor = \"shm://\"\n");
  EXPECT_NE(e.find("endpoints.executor"), std::string::npos) << e;
  EXPECT_NE(e.find("path"), std::string::npos) << e;
  e = runtime_error_of("[endpoints]\ndetokenizer = \"shmem:///tmp/x\"\n");
  EXPECT_NE(e.find("shm://"), std::string::npos) << e;
}

}  // namespace
}  // namespace zinfer::runtime
