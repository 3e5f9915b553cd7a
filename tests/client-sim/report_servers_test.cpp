// make_report over several servers on hand-built runs: each server judged over its own clients against
// its own scrapes (figures worked by hand here), the total over everyone against the summed scrapes, a
// budget missed on one server alone failing the run though the total holds it, a server given no match
// listed but not judged, the one-server report unchanged but for its one row; the JSON's servers array
// read back by the strict reader (parse_json), and the table's per-server section.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "client-sim/sim_report.hpp"
#include "server/config/json_value.hpp"

namespace shiftcast {
namespace {

using Lines = std::vector<std::string>;

SimOptions two_servers() {
  SimOptions o;
  o.matches = 2;
  o.clients = 2;
  o.tick_rate = 64;
  o.snapshot_rate = 32;
  o.level = "arena";
  o.servers = {{"10.0.0.1", 1, 2}, {"10.0.0.2", 3, 4}};
  return o;  // default budgets: 3 ticks, 0 lost, 0 failed, 0 violations, 50 ms, 4 units, 0.9 x 32/s, a tick
}

// Connected for the whole 10 s load at 32 snapshots/s, `acks` acknowledged at 10 ms each.
SimClientStats client(std::size_t acks, std::uint64_t events) {
  SimClientStats c;
  c.connected = true;
  c.connected_seconds = 10;
  c.first_snapshot_tick = 100;
  c.last_snapshot_tick = 740;
  c.snapshots = 320;
  c.events_highest_seen = events;
  c.events_delivered = events;
  c.input_ack_ms.assign(acks, 10);
  c.rpc_ms["raycast"] = {1, 2};
  c.movement_error = {1};
  return c;
}

// Match 0 on server 0 (clients 0, 1: 1000 acks each at 10 ms), match 1 on server 1 (clients 2, 3: 50
// acks each, client 3's last 5 at 100 ms). Server 1's p99 is 100 ms (6.4 ticks > 3: nearest rank 99 of
// its 100), the total's is 10 ms (rank 2079 of 2100 is below the 2095 fast ones): one server misses.
SimRunResult split_run() {
  SimRunResult run;
  run.load_seconds = 10;
  run.match_ids = {7, 7};
  run.match_servers = {0, 1};
  run.client_servers = {0, 0, 1, 1};
  run.clients = {client(1000, 5), client(1000, 5), client(50, 1), client(50, 2)};
  for (std::size_t i = 45; i < 50; ++i)
    run.clients[3].input_ack_ms[i] = 100;
  return run;
}

ServerMetrics scrape(double cpu, std::uint64_t violations, int matches, std::vector<std::uint64_t> counts) {
  ServerMetrics m;
  m.ok = true;
  m.cpu_seconds = cpu;
  m.invariant_violations = violations;
  m.matches = matches;
  m.tick_bucket_bounds = {0.001, 0.002, 0.005};
  m.tick_bucket_counts = std::move(counts);
  return m;
}

// Server 0: 100 ticks all under 1 ms, 5 CPU seconds, one match more. Server 1: 100 ticks of 1..2 ms, one
// CPU second, one match more. Together: 200 ticks, half in each bucket.
const std::vector<ServerMetrics> kBefore = {scrape(100, 0, 1, {0, 0, 0, 0}), scrape(20, 0, 1, {0, 0, 0, 0})};
const std::vector<ServerMetrics> kAfter = {scrape(105, 0, 2, {100, 100, 100, 100}),
                                           scrape(21, 0, 2, {0, 100, 100, 100})};

TEST(ServerMetricsMerge, CountsMatchesAndSumsScrapesBucketByBound) {
  const ServerMetrics two = server_metrics_from_text(
      "process_cpu_seconds_total 2\n"
      "shiftcast_tick_seconds_bucket{match=\"1\",le=\"0.001\"} 3\n"
      "shiftcast_tick_seconds_bucket{match=\"1\",le=\"+Inf\"} 4\n"
      "shiftcast_tick_seconds_count{match=\"1\"} 4\n"
      "shiftcast_tick_seconds_bucket{match=\"9\",le=\"0.001\"} 1\n"
      "shiftcast_tick_seconds_bucket{match=\"9\",le=\"+Inf\"} 1\n"
      "shiftcast_tick_seconds_count{match=\"9\"} 1\n"
      "shiftcast_invariant_violations_total{match=\"9\"} 1\n");
  ASSERT_TRUE(two.ok) << two.error;
  EXPECT_EQ(two.matches, 2);
  const ServerMetrics idle = server_metrics_from_text("process_cpu_seconds_total 0.5\n");
  ASSERT_TRUE(idle.ok);
  EXPECT_EQ(idle.matches, 0);

  const ServerMetrics both = merge_server_metrics({two, idle, two});
  ASSERT_TRUE(both.ok);
  EXPECT_EQ(both.matches, 4);
  EXPECT_DOUBLE_EQ(both.cpu_seconds, 4.5);
  EXPECT_EQ(both.invariant_violations, 2u);
  EXPECT_EQ(both.tick_bucket_bounds, (std::vector<double>{0.001}));
  EXPECT_EQ(both.tick_bucket_counts, (std::vector<std::uint64_t>{8, 10}));
  ServerMetrics failed;
  failed.error = "connection refused";
  const ServerMetrics broken = merge_server_metrics({two, failed});
  EXPECT_FALSE(broken.ok);
  EXPECT_EQ(broken.error, "scrape 2 of 2: connection refused");
}

TEST(ReportServers, EachServerIsJudgedAloneAndTheRunFailsWhenOneMisses) {
  const SimReport r = make_report(two_servers(), split_run(), kBefore, kAfter);
  ASSERT_EQ(r.servers.size(), 2u);
  const SimServerRow& a = r.servers[0];
  const SimServerRow& b = r.servers[1];
  EXPECT_EQ(a.server, "10.0.0.1:1:2");
  EXPECT_EQ(b.server, "10.0.0.2:3:4");
  EXPECT_EQ(a.matches, 1);
  EXPECT_EQ(b.matches, 1);
  EXPECT_EQ(a.matches_seen, 1);
  EXPECT_EQ(b.matches_seen, 1);
  EXPECT_EQ(a.clients, 2);
  EXPECT_EQ(b.clients_connected, 2);
  EXPECT_EQ(a.input_ack_ms.count, 2000u);
  EXPECT_EQ(b.input_ack_ms.count, 100u);
  EXPECT_DOUBLE_EQ(a.input_ack_p99_ticks, 10 * 64 / 1000.0);
  EXPECT_DOUBLE_EQ(b.input_ack_p99_ticks, 100 * 64 / 1000.0);
  EXPECT_EQ(a.events_lost, 0u);
  // Each server's CPU over its own scrapes (no scrape times: over the 10 s load): 50 % and 10 %.
  EXPECT_DOUBLE_EQ(a.server_cpu_percent, 50);
  EXPECT_DOUBLE_EQ(b.server_cpu_percent, 10);
  // Tick p99 from its own histogram: server 0's ticks all in (0, 1 ms], server 1's in (1, 2 ms].
  EXPECT_EQ(a.server_tick_ms.count, 100u);
  EXPECT_NEAR(a.server_tick_ms.p99, 0.99, 1e-9);
  EXPECT_NEAR(b.server_tick_ms.p99, 1.99, 1e-9);
  EXPECT_TRUE(a.judged);
  EXPECT_TRUE(a.budgets_met);
  EXPECT_FALSE(b.budgets_met);
  EXPECT_EQ(b.budgets_missed, (Lines{"input_ack_p99_ticks 6.4 > 3"}));

  // The total: every client, the summed histograms and CPU; its own figures hold every budget, but the
  // run misses through server 1.
  EXPECT_EQ(r.clients, 4);
  EXPECT_EQ(r.input_ack_ms.count, 2100u);
  EXPECT_DOUBLE_EQ(r.input_ack_p99_ticks, 10 * 64 / 1000.0);
  EXPECT_EQ(r.server_tick_ms.count, 200u);
  EXPECT_NEAR(r.server_tick_ms.p50, 1, 1e-9);  // rank 100 of 200: the top of the first bucket
  EXPECT_DOUBLE_EQ(r.server_cpu_percent, 60);
  EXPECT_DOUBLE_EQ(r.server_cpu_percent_per_player, 15);
  EXPECT_EQ(r.events_delivered, 13u);
  EXPECT_FALSE(r.budgets_met);
  EXPECT_EQ(r.budgets_missed, (Lines{"server 10.0.0.2:3:4: input_ack_p99_ticks 6.4 > 3"}));
  EXPECT_EQ(r.placement, "round-robin");
}

TEST(ReportServers, ServerFiguresComeFromThatServersOwnScrapes) {
  std::vector<ServerMetrics> after = kAfter;
  after[0].invariant_violations = 2;  // server 0 re-placed two players
  after[1].ok = false;                // server 1's second scrape failed
  after[1].error = "connection refused";
  const SimReport r = make_report(two_servers(), split_run(), kBefore, after);
  EXPECT_EQ(r.servers[0].invariant_violations, 2u);
  EXPECT_EQ(r.servers[0].budgets_missed, (Lines{"invariant_violations 2 > 0"}));
  EXPECT_FALSE(r.servers[1].server_metrics_ok);
  EXPECT_EQ(r.servers[1].matches_seen, -1);
  EXPECT_EQ(r.servers[1].server_metrics_error, "after the load: connection refused");
  // The total cannot read the servers together either, and says which scrape failed.
  EXPECT_FALSE(r.server_metrics_ok);
  EXPECT_EQ(r.server_metrics_error, "after the load: scrape 2 of 2: connection refused");
  EXPECT_EQ(r.budgets_missed,
            (Lines{"server metrics unavailable (after the load: scrape 2 of 2: connection refused)",
                   "server 10.0.0.1:1:2: invariant_violations 2 > 0",
                   "server 10.0.0.2:3:4: input_ack_p99_ticks 6.4 > 3",
                   "server 10.0.0.2:3:4: server metrics unavailable (after the load: connection refused)"}));
}

TEST(ReportServers, AServerGivenNoMatchIsListedButNotJudged) {
  SimOptions o = two_servers();
  o.servers.push_back({"10.0.0.3", 5, 6});
  SimRunResult run = split_run();
  for (std::size_t i = 45; i < 50; ++i)
    run.clients[3].input_ack_ms[i] = 10;  // everyone fast
  std::vector<ServerMetrics> before = kBefore;
  std::vector<ServerMetrics> after = kAfter;
  before.push_back(scrape(0, 0, 0, {}));
  after.push_back(scrape(0.5, 0, 0, {}));
  const SimReport r = make_report(o, run, before, after);
  ASSERT_EQ(r.servers.size(), 3u);
  EXPECT_EQ(r.servers[2].matches, 0);
  EXPECT_EQ(r.servers[2].clients, 0);
  EXPECT_FALSE(r.servers[2].judged);
  EXPECT_TRUE(r.servers[2].budgets_met);
  EXPECT_EQ(r.budgets_missed, Lines{});
  EXPECT_TRUE(r.budgets_met);
  EXPECT_DOUBLE_EQ(r.server_cpu_percent, 65);  // its CPU still counts
  EXPECT_NE(format_servers_table(r).find("no match placed"), std::string::npos);
}

TEST(ReportServers, OneServerKeepsTheSingleServerReportAndGainsItsRow) {
  SimOptions o = two_servers();
  o.servers.clear();
  o.host = "127.0.0.1";
  o.rpc_port = 9;
  o.http_port = 10;
  SimRunResult run = split_run();
  run.match_servers = {0, 0};
  run.client_servers.clear();  // a churn run does not say: everyone on server 0
  const SimReport one = make_report(o, run, kBefore[0], kAfter[0]);
  const SimReport judged = judge_report(o, run, kBefore[0], kAfter[0]);
  EXPECT_EQ(report_json(one).substr(0, report_json(judged).find("\"placement\"")),
            report_json(judged).substr(0, report_json(judged).find("\"placement\"")));
  ASSERT_EQ(one.servers.size(), 1u);
  EXPECT_EQ(one.servers[0].server, "127.0.0.1:9:10");
  EXPECT_EQ(one.servers[0].matches, 2);
  EXPECT_EQ(one.servers[0].clients, 4);
  EXPECT_EQ(one.servers[0].budgets_missed, one.budgets_missed);
  EXPECT_EQ(one.servers[0].server_cpu_percent, one.server_cpu_percent);
  // The table has no per-server section for one server.
  EXPECT_EQ(format_report_table(one).find("servers"), std::string::npos);
}

TEST(ReportServers, JsonCarriesEveryServerRowAfterTheTotals) {
  const SimReport r = make_report(two_servers(), split_run(), kBefore, kAfter);
  const std::string text = report_json(r);
  const JsonParse p = parse_json(text);
  ASSERT_TRUE(p.ok()) << p.error;
  const JsonValue& json = p.value;
  EXPECT_EQ(json["clients"].as_number(), 4);  // the totals keep their names
  EXPECT_EQ(json["budgets_met"].as_bool(), false);
  EXPECT_EQ(json["placement"].as_string(), "round-robin");
  const JsonValue& servers = json["servers"];
  ASSERT_TRUE(servers.is_array());
  ASSERT_EQ(servers.items.size(), 2u);
  for (std::size_t s = 0; s < 2; ++s) {
    const JsonValue& row = servers.items[s];
    EXPECT_EQ(row["server"].as_string(), r.servers[s].server);
    EXPECT_EQ(row["matches"].as_number(), 1);
    EXPECT_EQ(row["matches_seen"].as_number(), 1);
    EXPECT_EQ(row["clients"].as_number(), 2);
    EXPECT_EQ(row["clients_connected"].as_number(), 2);
    EXPECT_EQ(row["clients_failed"].as_number(), 0);
    EXPECT_EQ(row["events_lost"].as_number(), 0);
    EXPECT_EQ(row["invariant_violations"].as_number(), 0);
    EXPECT_EQ(row["server_tick_ms"]["count"].as_number(), 100);
    EXPECT_EQ(row["input_ack_ms"]["count"].as_number(), double(r.servers[s].input_ack_ms.count));
    const std::optional<double> cpu = row["server_cpu_percent"].as_number();
    ASSERT_TRUE(cpu.has_value());
    EXPECT_DOUBLE_EQ(*cpu, r.servers[s].server_cpu_percent);
    EXPECT_EQ(row["budgets_met"].as_bool(), s == 0);
    ASSERT_TRUE(row["budgets_missed"].is_array());
    EXPECT_EQ(row["budgets_missed"].items.size(), s == 0 ? 0u : 1u);
  }
  // Scripts that search the text for a key find the total first.
  EXPECT_LT(text.find("\"clients\":"), text.find("\"servers\":"));
  const std::string table = format_report_table(r);
  EXPECT_NE(table.find("10.0.0.1:1:2"), std::string::npos);
  EXPECT_NE(table.find("MISSED (1)"), std::string::npos);
  EXPECT_NE(table.find("  total"), std::string::npos);
}

}  // namespace
}  // namespace shiftcast
