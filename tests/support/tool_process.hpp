// ToolProcessTest: a fixture for tests that run a real shiftcast binary as a process, each test in a
// temporary directory of its own (named by process id and test name, so a plain and a sanitizer build
// running at once stay out of each other's way; kept when the test fails, for a look afterwards).
//
//   class MyToolTest : public ToolProcessTest {};
//   TEST_F(MyToolTest, X) { const ToolRun r = run(SHIFTCAST_LEVEL_TOOL, "info " + path("a.level")); }
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace shiftcast {

struct ToolRun {
  int status = -1;  // the exit status, -1 when the process did not exit normally
  std::string out;
  std::string err;
};

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

class ToolProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("shiftcast_tool_test_" + std::to_string(getpid()) + "_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name()) + "_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    if (!HasFailure()) std::filesystem::remove_all(dir_);
  }

  // Runs `binary arguments` with its output captured in files (arguments here never need quoting beyond
  // single quotes: they are temporary paths and numbers).
  ToolRun run(const std::string& binary, const std::string& arguments) const {
    const std::filesystem::path out = dir_ / "stdout.txt";
    const std::filesystem::path err = dir_ / "stderr.txt";
    const std::string command =
        "'" + binary + "' " + arguments + " >'" + out.string() + "' 2>'" + err.string() + "'";
    const int raw = std::system(command.c_str());
    ToolRun r;
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    r.out = read_file(out);
    r.err = read_file(err);
    return r;
  }

  // A file in the test's directory, single-quoted for the command line.
  std::string path(const std::string& name) const {
    std::string quoted = "'";  // appends, not "'" + ...: gcc 12 -O3 reports a false -Wrestrict on that
    quoted += (dir_ / name).string();
    quoted += '\'';
    return quoted;
  }

  std::filesystem::path dir_;
};

}  // namespace shiftcast
