// shiftcast-sim --html, seen in a real browser: the real server on loopback, the real load tester as a
// process (one match of 8 bots for 4 seconds) writing its JSON report and its page, and headless Chromium
// (tests/browser/read_report_page.py, selenium) reading what the page rendered. The oracle is the JSON
// report of the same run: the verdict agrees with budgets_met, each histogram counts every sample the
// report counted, each chart is drawn at a readable size with its axis titles, the timeline has a point
// a second, and the page needs nothing from the network and logs no error.
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

// The number after "key": (the first occurrence from `from`).
double number_after(const std::string& json, const std::string& key, std::size_t from = 0) {
  const auto at = json.find("\"" + key + "\":", from);
  if (at == std::string::npos) return -1;
  return std::strtod(json.c_str() + at + key.size() + 3, nullptr);
}

// The text of one chart's object in the browser's JSON: from its key to the next chart's.
std::string chart(const std::string& json, const std::string& name) {
  const auto at = json.find("\"" + name + "\": {");
  if (at == std::string::npos) return {};
  return json.substr(at, json.find('}', json.find("\"axis_titles\"", at)) - at + 1);
}

class ReportPageTest : public ServerTest {};

TEST_F(ReportPageTest, TheBrowserShowsTheRunTheReportDescribes) {
  start();
  const std::filesystem::path json = dir_ / "report.json", page = dir_ / "report.html";
  const std::string source = SHIFTCAST_SOURCE_DIR;
  constexpr int kSeconds = 4;
  const std::string command = std::string("'") + SHIFTCAST_SIM_BIN + "' --host 127.0.0.1 --rpc-port " +
                              std::to_string(server_.ports().rpc) + " --http-port " +
                              std::to_string(server_.ports().http) + " --admin-key '" + dev_admin_key() +
                              "' --level arena --level-file '" + source + "/configs/levels/arena.map'" +
                              " --matches 1 --clients 8 --duration " + std::to_string(kSeconds) +
                              " --threads 1 --profile '" + source + "/configs/load/smoke.toml' --json '" +
                              json.string() + "' --html '" + page.string() + "' --no-progress > '" +
                              (dir_ / "sim.out").string() + "' 2> '" + (dir_ / "sim.err").string() + "'";
  const int raw = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(raw)) << slurp(dir_ / "sim.err");
  const std::string report = slurp(json);
  ASSERT_FALSE(report.empty()) << slurp(dir_ / "sim.err");
  ASSERT_FALSE(slurp(page).empty());

  const std::string browser_command =
      "/usr/bin/python3 '" + source + "/tests/browser/read_report_page.py' '" + page.string() + "' > '" +
      (dir_ / "browser.json").string() + "' 2> '" + (dir_ / "browser.err").string() + "'";
  const int browser = std::system(browser_command.c_str());
  const std::string seen = slurp(dir_ / "browser.json");
  ASSERT_TRUE(WIFEXITED(browser) && WEXITSTATUS(browser) == 0) << slurp(dir_ / "browser.err");

  // The verdict is the report's.
  const bool met = report.find("\"budgets_met\": true") != std::string::npos ||
                   report.find("\"budgets_met\":true") != std::string::npos;
  EXPECT_NE(seen.find(std::string("\"met\": \"") + (met ? "true" : "false") + "\""), std::string::npos)
      << seen;
  // Self-contained and quiet.
  EXPECT_NE(seen.find("\"console_errors\": []"), std::string::npos) << seen;
  EXPECT_NE(seen.find("\"requests\": []"), std::string::npos) << seen;

  for (const char* name : {"clients", "server_tick", "input_ack", "bandwidth", "rpc", "input_ack_histogram",
                           "prediction_error_histogram"}) {
    const std::string c = chart(seen, name);
    ASSERT_FALSE(c.empty()) << name << "\n" << seen;
    EXPECT_GT(number_after(c, "width"), 400) << name;
    EXPECT_GT(number_after(c, "height"), 100) << name;
    EXPECT_NE(c.find("\"axis_titles\": [\""), std::string::npos) << name;
  }
  // A point a second for the time charts (the last second may end with the load: at least kSeconds - 1;
  // the bandwidth has no rate for the first second).
  for (const char* name : {"clients", "input_ack", "server_tick"})
    EXPECT_GE(number_after(chart(seen, name), "points"), kSeconds - 1) << name << "\n" << chart(seen, name);
  EXPECT_GE(number_after(chart(seen, "bandwidth"), "points"), kSeconds - 2) << chart(seen, "bandwidth");
  // Each histogram counts every sample the report counted, once.
  const auto count_in_report = [&](const std::string& key) {
    return number_after(report, "count", report.find("\"" + key + "\":"));
  };
  EXPECT_EQ(number_after(chart(seen, "input_ack_histogram"), "bar_total"), count_in_report("input_ack_ms"));
  EXPECT_EQ(number_after(chart(seen, "prediction_error_histogram"), "bar_total"),
            count_in_report("movement_error"));
  EXPECT_GT(count_in_report("input_ack_ms"), 0);
  EXPECT_EQ(server_.stop(), 0);
}

}  // namespace
}  // namespace shiftcast
