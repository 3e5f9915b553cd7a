// shiftcast-sim across three real servers, as CI runs it: three shiftcast-server processes on loopback on
// their own free ports, the real load tester as a process (--servers, 3 matches of 4 bots, 3 seconds),
// its JSON report read back by the strict reader (parse_json). Oracles: each server's own counters after the
// run (it answered one CreateMatch and four IssueConnectToken calls, received the clients' datagrams and
// their raycasts), the per-server rows against them and the totals against the rows; least-loaded placement
// against a server that hosts more matches of its own than the others; and a dead server address
// (no metrics, or no RPC behind live metrics) makes the run fail with that address in the reason.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <unistd.h>
#include <algorithm>
#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "server/config/json_value.hpp"
#include "tests/support/rpc_test_client.hpp"
#include "tests/support/server_process.hpp"

namespace shiftcast {
namespace {

namespace fs = std::filesystem;

constexpr int kServers = 3;
constexpr int kClientsPerMatch = 4;

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A loopback port nobody listens on: bound, then closed again.
std::uint16_t closed_port() {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor probe(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  return probe.local_endpoint().port();
}

struct SimRun {
  int status = -1;  // exit status, -1 when it did not exit normally
  std::string out;
  std::string err;
  std::string json;
};

class SimMultiServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) /
           ("shiftcast_multiserver_" + std::to_string(getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    for (int s = 0; s < kServers; ++s) {
      servers_[std::size_t(s)] = std::make_unique<ServerProcess>();
      ASSERT_EQ(servers_[std::size_t(s)]->start(test_server_config(), dir_ / ("server" + std::to_string(s))),
                "");
    }
  }
  void TearDown() override {
    for (auto& server : servers_) {
      if (server && server->pid() > 0) {
        EXPECT_EQ(server->stop(), 0);
      }
    }
    if (HasFailure()) std::fprintf(stderr, "kept in %s\n", dir_.c_str());
    if (!HasFailure()) fs::remove_all(dir_);
  }

  const ServerProcess& server(int s) const { return *servers_[std::size_t(s)]; }
  std::string address(int s) const {
    return "127.0.0.1:" + std::to_string(server(s).ports().rpc) + ":" +
           std::to_string(server(s).ports().http);
  }
  double counter(int s, const std::string& series) const {
    return metric_value(http_get(server(s).ports().http, "/metrics"), series);
  }

  // shiftcast-sim against `servers`, 3 matches of 4 bots for 3 s (the smoke profile's budgets); `extra`
  // flags come last, so they win.
  SimRun sim(const std::string& servers, const std::string& name, const std::string& extra = "") const {
    const std::string source = SHIFTCAST_SOURCE_DIR;
    const fs::path json = dir_ / (name + ".json");
    const std::string command =
        std::string("'") + SHIFTCAST_SIM_BIN + "' --servers " + servers + " --admin-key '" + dev_admin_key() +
        "' --level arena --level-file '" + source + "/configs/levels/arena.map' --profile '" + source +
        "/configs/load/smoke.toml' --matches 3 --clients " + std::to_string(kClientsPerMatch) +
        " --duration 3 --connect-timeout 10 --threads 1 --json '" + json.string() + "' --no-progress " +
        extra + " > '" + (dir_ / (name + ".out")).string() + "' 2> '" + (dir_ / (name + ".err")).string() +
        "'";
    const int raw = std::system(command.c_str());
    SimRun run;
    run.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    run.out = slurp(dir_ / (name + ".out"));
    run.err = slurp(dir_ / (name + ".err"));
    run.json = slurp(json);
    return run;
  }

  fs::path dir_;
  std::array<std::unique_ptr<ServerProcess>, kServers> servers_;
};

TEST_F(SimMultiServerTest, OneLoadSpreadsOverThreeServersAndIsJudgedPerServerAndInTotal) {
  const SimRun run = sim(address(0) + "," + address(1) + "," + address(2), "load");
  ASSERT_FALSE(run.json.empty()) << "exit " << run.status << "\n" << run.err;
  const JsonParse parsed = parse_json(run.json);
  ASSERT_TRUE(parsed.ok()) << parsed.error;
  const JsonValue& report = parsed.value;
  // For sums: a missing number poisons them, so the totals' checks below fail.
  auto number = [](const JsonValue& v) {
    return v.as_number().value_or(std::numeric_limits<double>::quiet_NaN());
  };

  // The totals keep the single-server fields.
  EXPECT_EQ(report["matches"].as_number(), 3);
  EXPECT_EQ(report["clients"].as_number(), kServers * kClientsPerMatch);
  EXPECT_EQ(report["clients_connected"].as_number(), kServers * kClientsPerMatch);
  EXPECT_EQ(report["clients_failed"].as_number(), 0);
  EXPECT_EQ(report["events_lost"].as_number(), 0);
  EXPECT_EQ(report["rpc_errors"].as_number(), 0);  // every shot went to the server hosting its match
  EXPECT_EQ(report["server_metrics_ok"].as_bool(), true);
  EXPECT_EQ(report["placement"].as_string(), "round-robin");

  const JsonValue& rows = report["servers"];
  ASSERT_EQ(rows.items.size(), std::size_t(kServers));
  double tick_samples = 0;
  double violations = 0;
  double cpu = 0;
  bool every_row_met = true;
  for (int s = 0; s < kServers; ++s) {
    const JsonValue& row = rows.items[std::size_t(s)];
    SCOPED_TRACE(address(s));
    EXPECT_EQ(row["server"].as_string(), address(s));
    // Its share, by the run and by the server's own /metrics (its match series during the load).
    EXPECT_EQ(row["matches"].as_number(), 1);
    EXPECT_EQ(row["matches_seen"].as_number(), 1);
    EXPECT_EQ(row["clients"].as_number(), kClientsPerMatch);
    EXPECT_EQ(row["clients_connected"].as_number(), kClientsPerMatch);
    EXPECT_EQ(row["clients_failed"].as_number(), 0);
    EXPECT_EQ(row["events_lost"].as_number(), 0);
    EXPECT_GT(row["input_ack_ms"]["count"].as_number(), 0);
    EXPECT_EQ(row["server_metrics_ok"].as_bool(), true) << row["server_metrics_error"].text;
    EXPECT_GT(row["server_tick_ms"]["count"].as_number(), 0);  // its own matches ticked
    EXPECT_EQ(row["judged"].as_bool(), true);
    // Judged: the verdict and its reasons agree, and each reason is also the run's, with the address.
    EXPECT_TRUE(row["budgets_missed"].is_array());
    EXPECT_EQ(row["budgets_met"].as_bool(), row["budgets_missed"].items.empty());
    for (const JsonValue& miss : row["budgets_missed"].items) {
      EXPECT_TRUE(miss.is_string());
      const std::string line = "server " + address(s) + ": " + miss.text;
      const auto& all = report["budgets_missed"].items;
      EXPECT_TRUE(std::any_of(all.begin(), all.end(), [&](const JsonValue& m) {
        return m.as_string() == line;
      })) << line;
    }
    every_row_met = every_row_met && row["budgets_met"].as_bool() == true;
    tick_samples += number(row["server_tick_ms"]["count"]);
    violations += number(row["invariant_violations"]);
    cpu += number(row["server_cpu_percent"]);

    // The server's own counters, read now: it created one match and issued four tokens, and the
    // clients' datagrams and shots reached it.
    EXPECT_EQ(counter(s, "shiftcast_rpc_requests_total{kind=\"create_match\"}"), 1);
    EXPECT_EQ(counter(s, "shiftcast_rpc_requests_total{kind=\"issue_connect_token\"}"), kClientsPerMatch);
    EXPECT_GT(counter(s, "shiftcast_udp_packets_total{direction=\"in\"}"), 0);
    EXPECT_GT(counter(s, "shiftcast_rpc_requests_total{kind=\"raycast\"}"), 0);
  }
  // The totals are the servers' together.
  EXPECT_EQ(report["server_tick_ms"]["count"].as_number(), tick_samples);
  EXPECT_EQ(report["invariant_violations"].as_number(), violations);
  EXPECT_NEAR(number(report["server_cpu_percent"]), cpu, 1e-6 * (1 + cpu));
  // The run misses when any server does; the exit status is the verdict.
  if (!every_row_met) {
    EXPECT_EQ(report["budgets_met"].as_bool(), false);
  }
  EXPECT_TRUE(report["budgets_missed"].is_array());
  EXPECT_EQ(report["budgets_met"].as_bool(), report["budgets_missed"].items.empty());
  EXPECT_EQ(run.status, report["budgets_met"].as_bool() == true ? 0 : 1) << run.err;
  // The table shows a row per server and the total.
  for (int s = 0; s < kServers; ++s)
    EXPECT_NE(run.out.find(address(s)), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("  total"), std::string::npos) << run.out;
}

TEST_F(SimMultiServerTest, LeastLoadedPlacementCountsEachServersOwnMatches) {
  // Server 0 restarted hosting two matches of its own; servers 1 and 2 host one each.
  ASSERT_EQ(servers_[0]->stop(), 0);
  ASSERT_EQ(
      servers_[0]->start(test_server_config("", "[[initial_match]]\nlevel = \"arena\"\n"), dir_ / "server0b"),
      "");
  const SimRun run =
      sim(address(0) + "," + address(1) + "," + address(2), "least", "--placement least-loaded --matches 2");
  ASSERT_FALSE(run.json.empty()) << "exit " << run.status << "\n" << run.err;
  const JsonParse parsed = parse_json(run.json);
  ASSERT_TRUE(parsed.ok()) << parsed.error;
  const JsonValue& report = parsed.value;
  EXPECT_EQ(report["placement"].as_string(), "least-loaded");
  EXPECT_EQ(report["clients_connected"].as_number(), 2 * kClientsPerMatch);
  const JsonValue& rows = report["servers"];
  ASSERT_EQ(rows.items.size(), std::size_t(kServers));
  // The busiest server got nothing: listed, not judged, and it was never asked to create a match.
  EXPECT_EQ(rows.items[0]["matches"].as_number(), 0);
  EXPECT_EQ(rows.items[0]["matches_seen"].as_number(), 0);
  EXPECT_EQ(rows.items[0]["clients"].as_number(), 0);
  EXPECT_EQ(rows.items[0]["judged"].as_bool(), false);
  EXPECT_EQ(rows.items[0]["budgets_met"].as_bool(), true);
  EXPECT_EQ(counter(0, "shiftcast_rpc_requests_total{kind=\"create_match\"}"), 0);
  for (int s = 1; s < kServers; ++s) {
    SCOPED_TRACE(address(s));
    const JsonValue& row = rows.items[std::size_t(s)];
    EXPECT_EQ(row["matches"].as_number(), 1);
    EXPECT_EQ(row["matches_seen"].as_number(), 1);
    EXPECT_EQ(row["clients_connected"].as_number(), kClientsPerMatch);
    EXPECT_EQ(row["judged"].as_bool(), true);
    EXPECT_EQ(counter(s, "shiftcast_rpc_requests_total{kind=\"create_match\"}"), 1);
  }
  EXPECT_EQ(run.status, report["budgets_met"].as_bool() == true ? 0 : 1) << run.err;
}

TEST_F(SimMultiServerTest, ADeadServerAddressFailsTheRunWithItsAddress) {
  // Nothing at all behind the second address: its metrics cannot be read before the load.
  const std::string dead = "127.0.0.1:" + std::to_string(closed_port()) + ":" + std::to_string(closed_port());
  const SimRun no_server = sim(address(0) + "," + dead, "dead");
  EXPECT_EQ(no_server.status, 3) << no_server.err;
  EXPECT_NE(no_server.err.find("server " + dead + " (2 of 2): cannot read its metrics: "), std::string::npos)
      << no_server.err;
  EXPECT_TRUE(no_server.json.empty());

  // Live metrics but no RPC: the runner cannot reach it, and nothing was created on the live server.
  const std::string no_rpc_address =
      "127.0.0.1:" + std::to_string(closed_port()) + ":" + std::to_string(server(2).ports().http);
  const SimRun no_rpc = sim(address(0) + "," + no_rpc_address, "no_rpc");
  EXPECT_EQ(no_rpc.status, 3) << no_rpc.err;
  EXPECT_NE(no_rpc.err.find("server " + no_rpc_address + ": "), std::string::npos) << no_rpc.err;
  EXPECT_EQ(counter(0, "shiftcast_rpc_requests_total{kind=\"create_match\"}"), 0);

  // Bad addresses are usage errors before anything runs.
  const SimRun port_zero = sim(address(0) + ",127.0.0.1:0:1", "port_zero");
  EXPECT_EQ(port_zero.status, 2);
  EXPECT_NE(port_zero.err.find("rpc port 0: must be 1..65535"), std::string::npos) << port_zero.err;
  const SimRun twice = sim(address(0) + "," + address(0), "twice");
  EXPECT_EQ(twice.status, 2);
  EXPECT_NE(twice.err.find("repeats server " + address(0)), std::string::npos) << twice.err;
}

}  // namespace
}  // namespace shiftcast
