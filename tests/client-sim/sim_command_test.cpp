// shiftcast-sim end to end, as CI runs it: the real server on loopback, the real load tester as a
// process (2 matches of 8 bots for 5 seconds), its JSON report read back. Everyone connects, no reliable
// event is lost, the server found no invariant violation, and the exit status agrees with the budgets
// the report says were met.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "tests/support/server_fixture.hpp"

namespace shiftcast {
namespace {

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The number after "key": at the top level of the report (the keys asserted here are unique in it).
double json_number(const std::string& json, const std::string& key) {
  const auto at = json.find("\"" + key + "\":");
  if (at == std::string::npos) return -1;
  return std::strtod(json.c_str() + at + key.size() + 3, nullptr);
}

bool json_true(const std::string& json, const std::string& key) {
  const auto at = json.find("\"" + key + "\":");
  if (at == std::string::npos) return false;
  std::size_t v = at + key.size() + 3;
  while (v < json.size() && json[v] == ' ')
    ++v;
  return json.compare(v, 4, "true") == 0;
}

class SimCommandTest : public ServerTest {};

TEST_F(SimCommandTest, ShortRunConnectsEveryoneLosesNothingAndExitsByItsBudgets) {
  start();
  const std::filesystem::path json = dir_ / "report.json";
  const std::string source = SHIFTCAST_SOURCE_DIR;
  const std::string command = std::string("'") + SHIFTCAST_SIM_BIN + "' --host 127.0.0.1 --rpc-port " +
                              std::to_string(server_.ports().rpc) + " --http-port " +
                              std::to_string(server_.ports().http) + " --admin-key '" + dev_admin_key() +
                              "' --level arena --level-file '" + source + "/configs/levels/arena.map'" +
                              " --matches 2 --clients 8 --duration 5 --threads 1 --profile '" + source +
                              "/configs/load/smoke.toml' --json '" + json.string() + "' --no-progress > '" +
                              (dir_ / "sim.out").string() + "' 2> '" + (dir_ / "sim.err").string() + "'";
  const int raw = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(raw)) << slurp(dir_ / "sim.err");
  const int status = WEXITSTATUS(raw);
  const std::string report = slurp(json);
  ASSERT_FALSE(report.empty()) << "exit " << status << "\n" << slurp(dir_ / "sim.err");

  EXPECT_EQ(json_number(report, "clients"), 16) << report;
  EXPECT_EQ(json_number(report, "clients_connected"), 16) << report;
  EXPECT_EQ(json_number(report, "clients_failed"), 0) << report;
  EXPECT_EQ(json_number(report, "events_lost"), 0) << report;
  EXPECT_EQ(json_number(report, "invariant_violations"), 0) << report;
  EXPECT_GT(json_number(report, "events_delivered"), 0) << report;
  // The exit status is the budgets' verdict, whatever it was on this run.
  EXPECT_EQ(status, json_true(report, "budgets_met") ? 0 : 1) << report;
  // The table went to stdout.
  EXPECT_NE(slurp(dir_ / "sim.out").find("budgets:"), std::string::npos);
  EXPECT_EQ(server_.stop(), 0);
}

}  // namespace
}  // namespace shiftcast
