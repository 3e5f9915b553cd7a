// The dashboard and the live view in a real browser (issue 16): the real server on loopback with the
// spectator key, the real load tester playing one match of 8 bots, and headless Chromium
// (tests/browser/read_spectator_pages.py) reading the pages while they play. The oracles are the server
// itself: the paused view's player markers are where a raycast RPC at the same tick finds each player
// (its circle pinned within 1/32 unit by rays just inside and just outside it), the screenshot has the
// player colour at every marker, the dashboard lists the match the load tester made, the view without the
// key is refused, no page logs an error or fetches anything from elsewhere. Screenshots are kept in the
// test's directory (scripts/screenshots.sh copies them to docs/images/).
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

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size()))
    ++n;
  return n;
}

// The text of the browser's JSON from "name": up to the next top-level key `next`.
std::string section(const std::string& json, const std::string& name, const std::string& next) {
  const auto at = json.find("\"" + name + "\": ");
  const auto end = json.find("\"" + next + "\": ", at);
  return at == std::string::npos ? std::string() : json.substr(at, end - at);
}

class SpectatorPagesTest : public ServerTest {};

TEST_F(SpectatorPagesTest, TheBrowserShowsEachPlayerWhereTheServerJudgesIt) {
  const std::string source = SHIFTCAST_SOURCE_DIR;
  start(test_server_config(), "--spectator-key-file '" + source + "/configs/keys/dev-spectator.key'");
  // The load tester creates match 2 (the config's initial match is 1) and plays it while the browser reads.
  const std::string sim = std::string("'") + SHIFTCAST_SIM_BIN + "' --host 127.0.0.1 --rpc-port " +
                          std::to_string(server_.ports().rpc) + " --http-port " +
                          std::to_string(server_.ports().http) + " --admin-key '" + dev_admin_key() +
                          "' --level arena --level-file '" + source + "/configs/levels/arena.map'" +
                          " --matches 1 --clients 8 --duration 12 --threads 1 --profile '" + source +
                          "/configs/load/smoke.toml' --no-progress > '" + (dir_ / "sim.out").string() +
                          "' 2> '" + (dir_ / "sim.err").string() + "'";
  const std::string browser =
      "/usr/bin/python3 '" + source + "/tests/browser/read_spectator_pages.py' --http-port " +
      std::to_string(server_.ports().http) + " --rpc-port " + std::to_string(server_.ports().rpc) +
      " --match 2 --key '" + dev_spectator_key() + "' --service-key-file '" + source +
      "/configs/keys/dev-service.key' --generated '" + SHIFTCAST_PYTHON_PROTOCOL_DIR + "' --screenshots '" +
      dir_.string() + "' > '" + (dir_ / "browser.json").string() + "' 2> '" +
      (dir_ / "browser.err").string() + "'";
  const std::string both = "(" + sim + ") & sim=$!; " + browser + "; status=$?; wait $sim; exit $status";
  const int raw = std::system(("sh -c \"" + both + "\"").c_str());
  const std::string seen = slurp(dir_ / "browser.json");
  ASSERT_TRUE(WIFEXITED(raw) && WEXITSTATUS(raw) == 0) << slurp(dir_ / "browser.err") << seen;

  // The dashboard: polled, the load tester's match listed with its players, linked (the key was given).
  EXPECT_EQ(count(seen, "\"timed_out\": true"), 0u) << seen;
  EXPECT_NE(seen.find("/matches/2?key="), std::string::npos) << seen;
  // The view: players drawn, every one in the player colour at its centre pixel.
  const std::size_t players = count(seen, "\"px\":");
  EXPECT_GE(players, 1u) << seen;
  EXPECT_EQ(count(seen, "\"hex\": \"#e8433a\""), players) << seen;
  // Each pinned player is where the server judged it at the paused tick.
  const std::size_t rays = count(seen, "\"as_expected\":");
  EXPECT_GE(rays, 9u) << seen;
  EXPECT_EQ(count(seen, "\"as_expected\": true"), rays) << seen;
  // Quiet, self-contained, and closed without the key.
  EXPECT_EQ(count(section(seen, "dashboard", "match_view"), "\"console_errors\": []"), 1u) << seen;
  EXPECT_EQ(count(section(seen, "match_view", "raycasts"), "\"console_errors\": []"), 1u) << seen;
  EXPECT_NE(seen.find("\"foreign_requests\": []"), std::string::npos) << seen;
  EXPECT_NE(seen.find("\"status\": 403"), std::string::npos) << seen;
  EXPECT_TRUE(std::filesystem::exists(dir_ / "dashboard.png"));
  EXPECT_TRUE(std::filesystem::exists(dir_ / "match_view.png"));
  EXPECT_GE(metric("shiftcast_http_closed_total{reason=\"spectator_refused\"}"), 1);
  EXPECT_EQ(server_.stop(), 0);
}

}  // namespace
}  // namespace shiftcast
