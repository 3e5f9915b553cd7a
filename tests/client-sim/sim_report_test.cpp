// make_report on hand-built runs (tests/client-sim/report_fixtures.hpp) whose rates, percentiles,
// bandwidth, loss, events, server tick percentiles and budget verdicts are computed by hand here.
#include "client-sim/sim_report.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "server/config/json_value.hpp"
#include "tests/client-sim/report_fixtures.hpp"

namespace shiftcast {
namespace {

using namespace report_fixtures;

TEST(MakeReport, ComputesEveryFigureOfATroubledRun) {
  SimReport r = make_report(report_options(), troubled_run(), kBefore, kAfter);
  EXPECT_EQ(r.clients, 4);
  EXPECT_EQ(r.clients_connected, 2);
  EXPECT_EQ(r.clients_failed, 3);
  EXPECT_EQ(r.failures, (std::vector<std::string>{"timed out (2)", "refused \"full\" (1)"}));
  EXPECT_EQ(r.load_seconds, 10);
  EXPECT_DOUBLE_EQ(r.tick_rate_achieved, (64.0 + 60.0) / 2);
  EXPECT_DOUBLE_EQ(r.snapshot_rate_achieved, (32.0 + 30.0) / 2);
  EXPECT_DOUBLE_EQ(r.snapshot_rate_expected, 32);
  // {10, 20, 30, 40, 50, 60}: ranks ceil(3) = 3, ceil(5.7) = 6, ceil(5.94) = 6.
  EXPECT_EQ(r.input_ack_ms.p50, 30);
  EXPECT_EQ(r.input_ack_ms.p95, 60);
  EXPECT_EQ(r.input_ack_ms.p99, 60);
  EXPECT_EQ(r.input_ack_ms.max, 60);
  EXPECT_EQ(r.input_ack_ms.count, 6u);
  EXPECT_DOUBLE_EQ(r.input_ack_p99_ticks, 60.0 * 64 / 1000);
  ASSERT_EQ(r.rpc_ms.size(), 2u);
  EXPECT_EQ(r.rpc_ms["raycast"].p50, 2);  // {1, 2, 3, 4}
  EXPECT_EQ(r.rpc_ms["raycast"].p99, 4);
  EXPECT_EQ(r.rpc_ms["raycast"].count, 4u);
  EXPECT_EQ(r.rpc_ms["raycast_rewound"].p50, 5);  // {5, 70}
  EXPECT_EQ(r.rpc_ms["raycast_rewound"].p95, 70);
  EXPECT_EQ(r.rpc_errors, 2u);
  EXPECT_EQ(r.rpc_errors_by_code, (std::map<std::string, std::uint64_t>{{"RateLimited", 2}}));
  EXPECT_DOUBLE_EQ(r.bandwidth_up_kbps, (100000.0 * 8 / 1000 / 10 + 50000.0 * 8 / 1000 / 10) / 2);     // 60
  EXPECT_DOUBLE_EQ(r.bandwidth_down_kbps, (400000.0 * 8 / 1000 / 10 + 100000.0 * 8 / 1000 / 10) / 2);  // 200
  EXPECT_DOUBLE_EQ(r.packet_loss_down, 1 - 1470.0 / 1500.0);
  EXPECT_EQ(r.events_delivered, 68u);
  EXPECT_EQ(r.events_lost, 2u);
  EXPECT_EQ(r.event_order_violations, 2u);
  EXPECT_EQ(r.snapshot_continuity_violations, 3u);
  EXPECT_EQ(r.movement_error.p50, 2);  // {1, 2, 40}
  EXPECT_EQ(r.movement_error.p99, 40);
  ASSERT_TRUE(r.server_metrics_ok);
  // Delta {2, 8, 10, 10}: p50 rank 5 in (1, 2] ms at (5 - 2) / 6; p95 rank 9.5 and p99 rank 9.9 in
  // (2, 5] ms at 1.5 / 2 and 1.9 / 2; max: the upper bound of the last non-empty bucket.
  EXPECT_DOUBLE_EQ(r.server_tick_ms.p50, 1 + 1 * 0.5);
  EXPECT_DOUBLE_EQ(r.server_tick_ms.p95, 2 + 3 * 0.75);
  EXPECT_NEAR(r.server_tick_ms.p99, 2 + 3 * 0.95, 1e-9);
  EXPECT_DOUBLE_EQ(r.server_tick_ms.max, 5);
  EXPECT_EQ(r.server_tick_ms.count, 10u);
  EXPECT_EQ(r.server_late_ticks, 5u);
  EXPECT_EQ(r.invariant_violations, 0u);
  EXPECT_DOUBLE_EQ(r.server_cpu_percent, 5.0 / 10 * 100);
  EXPECT_DOUBLE_EQ(r.server_cpu_percent_per_player, 50.0 / 2);
  EXPECT_FALSE(r.budgets_met);
  EXPECT_EQ(r.budgets_missed, (std::vector<std::string>{
                                  "input_ack_p99_ticks 3.84 > 3",
                                  "events_lost 2 > 0",
                                  "event_order_violations 2 > 0",
                                  "clients_failed 3 > 0",
                                  "rpc_ms.raycast_rewound p99 70 > 50",
                                  "movement_error p99 40 > 4",
                              }));
}

TEST(MakeReport, AHealthyRunMeetsEveryBudget) {
  SimRunResult run;
  run.load_seconds = 10;
  run.clients = {healthy_client(), healthy_client()};
  SimReport r = make_report(report_options(), run, kBefore, kAfter);
  EXPECT_TRUE(r.budgets_met);
  EXPECT_TRUE(r.budgets_missed.empty()) << r.budgets_missed.front();
  EXPECT_DOUBLE_EQ(r.input_ack_p99_ticks, 40.0 * 64 / 1000);  // 2.56 ticks
  EXPECT_DOUBLE_EQ(r.server_cpu_percent_per_player, 50.0 / 2);
}

// Network conditions: the input-to-ack budget grows by the round trip in ticks (both latencies and both
// jitters' worst case), the snapshot-rate budget shrinks by the down link's loss, the links' counters
// are summed, and the table and the JSON state them. Figures by hand: 120 ms at 64 Hz is 7.68 ticks.
TEST(MakeReport, BudgetsScaleWithTheNetworkConditions) {
  SimOptions o = report_options();
  o.network = parse_network_conditions("loss=10%,latency=50ms,jitter=10ms").conditions;
  SimRunResult run;
  run.load_seconds = 10;
  run.clients = {healthy_client(), healthy_client()};
  for (SimClientStats& c : run.clients) {
    c.input_ack_ms = {150, 155, 160, 165};  // 165 ms = 10.56 ticks: within 3 + 7.68
    c.snapshots = 270;                      // 27/s: below 0.9 x 32, above 0.9 x 0.9 x 32 = 25.92
    c.link_up = {100, 10, 0, 1, 2, 91};
    c.link_down = {50, 5, 1, 1, 0, 45};
  }
  const SimReport r = make_report(o, run, kBefore, kAfter);
  EXPECT_EQ(r.network, "loss=10%,latency=50ms,jitter=10ms");
  EXPECT_DOUBLE_EQ(r.round_trip_ms, 120);
  EXPECT_DOUBLE_EQ(r.input_ack_budget_ticks, 3 + 120.0 * 64 / 1000);
  EXPECT_EQ(r.link_up.submitted, 200u);
  EXPECT_EQ(r.link_up.delivered, 182u);
  EXPECT_EQ(r.link_down.dropped_queue, 2u);
  EXPECT_TRUE(r.budgets_met) << r.budgets_missed.front();

  for (SimClientStats& c : run.clients)
    c.input_ack_ms = {180};  // 11.52 ticks > 10.68
  EXPECT_EQ(make_report(o, run, kBefore, kAfter).budgets_missed,
            (std::vector<std::string>{"input_ack_p99_ticks 11.52 > 3 + round trip 7.68 = 10.68"}));
  for (SimClientStats& c : run.clients)
    c.snapshots = 250;  // 25/s
  EXPECT_EQ(make_report(o, run, kBefore, kAfter).budgets_missed.back(),
            "snapshot_rate_achieved 25/s < 0.9 x (1 - 0.1 loss) x 32/s");

  const SimReport clean = make_report(report_options(), run, kBefore, kAfter);
  EXPECT_EQ(clean.network, "none");
  EXPECT_EQ(clean.round_trip_ms, 0);
  EXPECT_EQ(clean.input_ack_budget_ticks, 3);
  const std::string table = format_report_table(r);
  EXPECT_NE(table.find("conditions                      loss=10%,latency=50ms,jitter=10ms"),
            std::string::npos);
  EXPECT_NE(table.find("budget (ticks)                10.68 (p99 budget + round trip 120 ms)"),
            std::string::npos);
  EXPECT_EQ(format_report_table(clean).find("network conditions"), std::string::npos);
  const std::string json = report_json(r);
  EXPECT_NE(json.find("\"input_ack_budget_ticks\": 10.68"), std::string::npos);
  EXPECT_NE(json.find("\"conditions\": \"loss=10%,latency=50ms,jitter=10ms\""), std::string::npos);
  EXPECT_NE(json.find("\"dropped_queue\": 2"), std::string::npos);
}

TEST(MakeReport, EachBudgetIsJudgedOnItsOwn) {
  SimRunResult run;
  run.load_seconds = 10;
  run.clients = {healthy_client()};
  auto missed = [&](const SimOptions& o, const SimRunResult& rr, const ServerMetrics& before,
                    const ServerMetrics& after) { return make_report(o, rr, before, after).budgets_missed; };
  using Lines = std::vector<std::string>;

  SimOptions tight = report_options();
  tight.budgets.server_tick_p99_ms = 4;  // p99 4.85 ms
  EXPECT_EQ(missed(tight, run, kBefore, kAfter), (Lines{"server_tick_ms p99 4.85 > 4"}));
  tight = report_options();
  tight.tick_rate = 250;  // no budget given: one tick period, 4 ms (beyond the sim's range, but judged)
  tight.budgets.input_ack_p99_ticks = 100;
  tight.snapshot_rate = 32;
  tight.budgets.snapshot_rate_min_fraction = 0;
  EXPECT_EQ(missed(tight, run, kBefore, kAfter), (Lines{"server_tick_ms p99 4.85 > 4"}));

  SimOptions loose = report_options();
  loose.budgets.input_ack_p99_ticks = 2;  // 40 ms at 64 Hz is 2.56 ticks
  EXPECT_EQ(missed(loose, run, kBefore, kAfter), (Lines{"input_ack_p99_ticks 2.56 > 2"}));

  SimRunResult slow = run;
  slow.clients[0].snapshots = 200;  // 20/s of 32
  EXPECT_EQ(missed(report_options(), slow, kBefore, kAfter),
            (Lines{"snapshot_rate_achieved 20/s < 0.9 x 32/s"}));

  ServerMetrics violated = kAfter;
  violated.invariant_violations = 4;
  EXPECT_EQ(missed(report_options(), run, kBefore, violated), (Lines{"invariant_violations 3 > 0"}));

  ServerMetrics failed_scrape;
  failed_scrape.error = "GET http://127.0.0.1:40002/metrics: timed out";
  SimReport blind = make_report(report_options(), run, kBefore, failed_scrape);
  EXPECT_FALSE(blind.server_metrics_ok);
  EXPECT_EQ(
      blind.budgets_missed,
      (Lines{"server metrics unavailable (after the load: GET http://127.0.0.1:40002/metrics: timed out)"}));
  EXPECT_EQ(blind.server_cpu_percent, 0);

  SimRunResult nobody;
  nobody.load_seconds = 10;
  nobody.clients.resize(2);
  for (SimClientStats& c : nobody.clients)
    c.failed = true;
  SimOptions lenient = report_options();
  lenient.budgets.clients_failed = 2;
  EXPECT_EQ(missed(lenient, nobody, kBefore, kAfter),
            (Lines{"no client connected", "snapshot_rate_achieved 0/s < 0.9 x 32/s"}));

  SimRunResult unacknowledged = run;
  unacknowledged.clients[0].input_ack_ms.clear();
  EXPECT_EQ(missed(report_options(), unacknowledged, kBefore, kAfter),
            (Lines{"input_ack_ms: no command was acknowledged"}));

  // The prediction budget is judged on the clients in the prediction sample: with none of them sampling,
  // there is nothing to judge, which is a miss; with prediction off (fraction 0) it is not judged.
  SimRunResult unsampled = run;
  unsampled.clients[0].movement_error.clear();
  EXPECT_EQ(missed(report_options(), unsampled, kBefore, kAfter),
            (Lines{"movement_error: no samples from 1 predicting clients"}));
  SimOptions no_prediction = report_options();
  no_prediction.predict_fraction = 0;
  unsampled.clients[0].predicting = false;
  EXPECT_EQ(missed(no_prediction, unsampled, kBefore, kAfter), Lines{});
  EXPECT_EQ(make_report(no_prediction, unsampled, kBefore, kAfter).clients_predicting, 0);
  EXPECT_EQ(make_report(report_options(), run, kBefore, kAfter).clients_predicting, 1);
}

// Issue 15's bandwidth budgets: each direction on its own, against the mean per client the report shows
// (headers included), missed only above the limit; 0 is no limit, and the table shows the limit.
TEST(MakeReport, BandwidthBudgetsPerClientEachWay) {
  SimRunResult run;
  run.load_seconds = 10;
  run.clients = {healthy_client()};  // 100,000 bytes up and 400,000 down in 10 s
  using Lines = std::vector<std::string>;
  SimOptions o = report_options();
  o.budgets.up_kbit_per_client = 79;
  o.budgets.down_kbit_per_client = 320;  // exactly met: only above the limit is a miss
  const SimReport r = make_report(o, run, kBefore, kAfter);
  EXPECT_EQ(r.budgets_missed, (Lines{"up_kbit_per_client 80 > 79"}));
  EXPECT_NE(format_report_table(r).find("80.0 (budget 79)"), std::string::npos);
  EXPECT_NE(format_report_table(r).find("320.0 (budget 320)"), std::string::npos);
  o.budgets.up_kbit_per_client = 80;
  o.budgets.down_kbit_per_client = 319.5;
  EXPECT_EQ(make_report(o, run, kBefore, kAfter).budgets_missed, (Lines{"down_kbit_per_client 320 > 319.5"}));
  o.budgets.down_kbit_per_client = 0;  // none
  EXPECT_TRUE(make_report(o, run, kBefore, kAfter).budgets_met);
}

// A match that ended between the scrapes takes its series with it: counts go down, never wrap.
TEST(MakeReport, ClampsNegativeServerDeltas) {
  SimRunResult run;
  run.load_seconds = 10;
  run.clients = {healthy_client()};
  ServerMetrics shrunk = metrics(99, 0, 1, {0, 1, 3, 3});  // {-1, -1, +1, +1} against kBefore
  SimReport r = make_report(report_options(), run, kBefore, shrunk);
  ASSERT_TRUE(r.server_metrics_ok);
  EXPECT_EQ(r.server_late_ticks, 0u);
  EXPECT_EQ(r.invariant_violations, 0u);
  EXPECT_EQ(r.server_cpu_percent, 0);
  // Cumulative delta {0, 0, 1, 1}: one tick in (2, 5] ms.
  EXPECT_EQ(r.server_tick_ms.count, 1u);
  EXPECT_DOUBLE_EQ(r.server_tick_ms.max, 5);
  // A first scrape with no match: the whole histogram is the load's; +Inf reads as the largest bound.
  ServerMetrics idle = metrics(100, 0, 0, {});
  idle.tick_bucket_bounds.clear();
  ServerMetrics overflow = metrics(101, 0, 0, {0, 0, 0, 4});
  SimReport o = make_report(report_options(), run, idle, overflow);
  EXPECT_EQ(o.server_tick_ms.count, 4u);
  EXPECT_DOUBLE_EQ(o.server_tick_ms.p50, 5);
  EXPECT_DOUBLE_EQ(o.server_tick_ms.max, 5);
}

// CPU seconds accrue between the two scrapes (connecting included), so that is the interval they are
// divided by when the scrapes say when they were taken.
TEST(MakeReport, ServerCpuIsOverTheTimeBetweenScrapes) {
  SimRunResult run;
  run.load_seconds = 10;
  run.connect_seconds = 2.5;
  run.late_client_ticks = 7;
  run.clients = {healthy_client(), healthy_client()};
  ServerMetrics before = kBefore;
  ServerMetrics after = kAfter;
  before.taken = std::chrono::steady_clock::time_point(std::chrono::seconds(1000));
  after.taken = before.taken + std::chrono::seconds(20);
  SimReport r = make_report(report_options(), run, before, after);
  EXPECT_DOUBLE_EQ(r.server_cpu_percent, 5.0 / 20 * 100);
  EXPECT_DOUBLE_EQ(r.server_cpu_percent_per_player, 25.0 / 2);
  EXPECT_EQ(r.connect_seconds, 2.5);
  EXPECT_EQ(r.client_late_ticks, 7u);
  EXPECT_NE(format_report_table(r).find("7 (the simulator was overloaded)"), std::string::npos);
}

TEST(MakeReport, SimulatorCpuIsOverTheLoadPerConnectedClient) {
  SimRunResult run = troubled_run();  // 10 s of load, 2 of its 4 clients connected
  run.load_cpu_seconds = 3;
  SimReport r = make_report(report_options(), run, kBefore, kAfter);
  EXPECT_DOUBLE_EQ(r.sim_cpu_percent, 3.0 / 10 * 100);
  EXPECT_DOUBLE_EQ(r.sim_cpu_percent_per_client, 30.0 / 2);
  const std::string table = format_report_table(r);
  const std::size_t line = table.find("simulator cpu (% of one core)");
  ASSERT_NE(line, std::string::npos);
  EXPECT_EQ(table.substr(line, table.find('\n', line) - line).substr(32),
            "30.0");          // the label column, then the figure
  run.load_cpu_seconds = -1;  // a clock that went backwards gives 0, never a negative share
  EXPECT_EQ(make_report(report_options(), run, kBefore, kAfter).sim_cpu_percent, 0);
  SimRunResult nobody;
  nobody.load_seconds = 10;
  nobody.load_cpu_seconds = 1;
  const SimReport empty = make_report(report_options(), nobody, kBefore, kAfter);
  EXPECT_DOUBLE_EQ(empty.sim_cpu_percent, 10);
  EXPECT_EQ(empty.sim_cpu_percent_per_client, 0);  // no client connected: no per-client share
}

// The bandwidth split: each kind's bytes over the load seconds, per connected client; framing and crypto
// is what remains of the datagrams after the IP/UDP headers and the content. Closed form: one client,
// 10 s, 1,000 datagrams down of 500 bytes with 28 of headers each (so 472,000 of datagram), of which
// 200,000 entity block, 48,000 own state, 64,000 events; 2,000 up of 100 (72 + 28), 80,000 commands.
TEST(MakeReport, BandwidthSplitsByKindAndSumsToTheTotal) {
  SimRunResult run;
  run.load_seconds = 10;
  SimClientStats c;
  c.connected = true;
  c.connected_seconds = 10;
  c.datagrams_down = 1000;
  c.bytes_down = 500000;
  c.bytes_down_entity_block = 200000;
  c.bytes_down_own_state = 48000;
  c.bytes_down_events = 64000;
  c.datagrams_up = 2000;
  c.bytes_up = 200000;
  c.bytes_up_commands = 80000;
  run.clients.push_back(c);
  const SimReport r = make_report(report_options(), run, kBefore, kAfter);
  const auto kbps = [](double bytes) { return bytes * 8 / 1000 / 10; };
  const std::map<std::string, double> down = {{"entity_block", kbps(200000)},
                                              {"own_state", kbps(48000)},
                                              {"events", kbps(64000)},
                                              {"framing_crypto", kbps(160000)},
                                              {"ip_udp", kbps(28000)}};
  const std::map<std::string, double> up = {
      {"commands", kbps(80000)}, {"framing_crypto", kbps(64000)}, {"ip_udp", kbps(56000)}};
  EXPECT_EQ(r.bandwidth_down_split_kbps, down);
  EXPECT_EQ(r.bandwidth_up_split_kbps, up);
  double down_sum = 0, up_sum = 0;
  for (const auto& [kind, v] : r.bandwidth_down_split_kbps)
    down_sum += v;
  for (const auto& [kind, v] : r.bandwidth_up_split_kbps)
    up_sum += v;
  EXPECT_DOUBLE_EQ(down_sum, r.bandwidth_down_kbps);
  EXPECT_DOUBLE_EQ(up_sum, r.bandwidth_up_kbps);
  const JsonParse p = parse_json(report_json(r));
  ASSERT_TRUE(p.ok()) << p.error;
  const JsonValue& j = p.value;
  EXPECT_EQ(j["bandwidth_split_kbps"]["down"]["entity_block"].as_number(), kbps(200000));
  EXPECT_EQ(j["bandwidth_split_kbps"]["up"]["commands"].as_number(), kbps(80000));
  const std::string text = format_report_table(r);
  EXPECT_NE(text.find("entity_block"), std::string::npos);
  EXPECT_NE(text.find("framing_crypto"), std::string::npos);
}

}  // namespace
}  // namespace shiftcast
