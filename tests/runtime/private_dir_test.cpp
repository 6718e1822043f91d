// The deployment's private directory for ipc:// and shm:// files (runtime/private_dir.h): made by
// mkdtemp with mode 0700 under $XDG_RUNTIME_DIR, passed on in $ZINFER_RUNTIME_DIR, and refused when
// the variable names a link, another mode or something not a directory.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <filesystem>

#include <gtest/gtest.h>

#include "runtime/config.h"
#include "runtime/private_dir.h"
#include "runtime/runtime_config.h"
#include "shm_test_util.h"

namespace zinfer::runtime {
namespace {

namespace fs = std::filesystem;

// Restores both variables after each test.
class PrivateDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    save(kRuntimeDirVariable, zinfer_);
    save("XDG_RUNTIME_DIR", xdg_);
    ::unsetenv(kRuntimeDirVariable);
    ::setenv("XDG_RUNTIME_DIR", base_dir().c_str(), 1);
  }
  void TearDown() override {
    restore(kRuntimeDirVariable, zinfer_);
    restore("XDG_RUNTIME_DIR", xdg_);
  }
  static void save(const char* name, std::optional<std::string>& into) {
    if (const char* v = std::getenv(name)) into = v;
  }
  static void restore(const char* name, const std::optional<std::string>& value) {
    if (value) {
      ::setenv(name, value->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
  std::string base_dir() const { return fs::path(base_.file("x")).parent_path().string(); }
  std::string error_with(const std::string& dir) {
    ::setenv(kRuntimeDirVariable, dir.c_str(), 1);
    try {
      private_runtime_dir();
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "";
  }

  test::TempFolder base_;
  std::optional<std::string> zinfer_, xdg_;
};

TEST_F(PrivateDirTest, MadeUnderXdgRuntimeDirWithMode0700AndPassedOn) {
  const std::string dir = private_runtime_dir();
  EXPECT_EQ(fs::path(dir).parent_path(), fs::path(base_dir()));
  struct stat st {};
  ASSERT_EQ(::lstat(dir.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_EQ(st.st_uid, ::geteuid());
  ASSERT_NE(std::getenv(kRuntimeDirVariable), nullptr);
  EXPECT_EQ(std::string(std::getenv(kRuntimeDirVariable)), dir);  // the actors started next inherit it
  EXPECT_EQ(private_runtime_dir(), dir);
  EXPECT_EQ(expand_runtime_dir("ipc://{runtime_dir}/tokenizer.ipc"), "ipc://" + dir + "/tokenizer.ipc");
  EXPECT_EQ(expand_runtime_dir("ipc:///tmp/x.ipc"), "ipc:///tmp/x.ipc");
  fs::remove(dir);
}

TEST_F(PrivateDirTest, ConfigEndpointsAreExpanded) {
  EndpointsConfig e;
  ConfigReader r;
  r.bind(e, endpoint_settings());
  r.read_text("[endpoints]\nscheduler = \"ipc://{runtime_dir}/scheduler.ipc\"\n"
              "executor = \"shm://{runtime_dir}/executor.shm\"\n",
              "test.toml");
  const std::string dir = std::getenv(kRuntimeDirVariable);
  EXPECT_EQ(e.scheduler, "ipc://" + dir + "/scheduler.ipc");
  EXPECT_EQ(e.executor, "shm://" + dir + "/executor.shm");
  fs::remove(dir);
}

// Another local user plants a link, or a directory others may enter, and points the variable at
// it (or the operator made one by hand): refused with the reason, never used.
TEST_F(PrivateDirTest, UnsafeGivenDirectoriesAreRefused) {
  const std::string real = base_.file("real");
  fs::create_directory(real);
  ::chmod(real.c_str(), 0700);
  const std::string link = base_.file("link");
  fs::create_symlink(real, link);
  EXPECT_NE(error_with(link).find("symbolic link"), std::string::npos);
  const std::string open = base_.file("open");
  fs::create_directory(open);
  ::chmod(open.c_str(), 0755);
  EXPECT_NE(error_with(open).find("0700"), std::string::npos);
  const std::string file = base_.file("file");
  fclose(fopen(file.c_str(), "w"));
  EXPECT_NE(error_with(file).find("not a directory"), std::string::npos);
  EXPECT_NE(error_with(base_.file("missing")).find("cannot be used"), std::string::npos);
  EXPECT_EQ(error_with(real), "");
}

}  // namespace
}  // namespace zinfer::runtime
