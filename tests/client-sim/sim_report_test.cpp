// SimReport: nearest-rank percentiles against their definition over random samples; the server's
// /metrics read from the real MetricsRegistry rendering (hand-counted buckets) and scraped from a real
// HttpServer on loopback; make_report on hand-built runs whose rates, percentiles, bandwidth, loss,
// events, server tick percentiles and budget verdicts are computed by hand here; the JSON read back by the
// strict reader (parse_json) with every required key; the table and the progress line.
#include "client-sim/sim_report.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <future>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "client-sim/http_get.hpp"
#include "server/config/json_value.hpp"
#include "server/http_server.hpp"
#include "server/metrics.hpp"
#include "tests/support/seeded_random.hpp"

namespace shiftcast {
namespace {

constexpr std::chrono::seconds kTestTimeout{10};

// ---- Percentiles ----------------------------------------------------------------------------------

TEST(Percentiles, NearestRankOfSmallSets) {
  Percentiles empty = percentiles({});
  EXPECT_EQ(empty.count, 0u);
  EXPECT_EQ(empty.p50, 0);
  EXPECT_EQ(empty.max, 0);
  Percentiles one = percentiles({5});
  EXPECT_EQ(one.p50, 5);
  EXPECT_EQ(one.p99, 5);
  EXPECT_EQ(one.count, 1u);
  // 1..10: ranks ceil(5) = 5, ceil(9.5) = 10, ceil(9.9) = 10.
  Percentiles ten = percentiles({10, 9, 8, 7, 6, 5, 4, 3, 2, 1});
  EXPECT_EQ(ten.p50, 5);
  EXPECT_EQ(ten.p95, 10);
  EXPECT_EQ(ten.p99, 10);
  EXPECT_EQ(ten.max, 10);
  // 1..100 (p * n lands exactly on a rank, where floating rounding would shift it): 50, 95, 99.
  std::vector<double> hundred;
  for (int i = 100; i >= 1; --i)
    hundred.push_back(i);
  Percentiles h = percentiles(hundred);
  EXPECT_EQ(h.p50, 50);
  EXPECT_EQ(h.p95, 95);
  EXPECT_EQ(h.p99, 99);
  EXPECT_EQ(h.max, 100);
  EXPECT_EQ(h.count, 100u);
  EXPECT_EQ(h.p999, 100);  // rank ceil(99.9) = 100
  // 1..1000: p99.9 lands exactly on rank 999.
  std::vector<double> thousand;
  for (int i = 1000; i >= 1; --i)
    thousand.push_back(i);
  EXPECT_EQ(percentiles(thousand).p999, 999);
  EXPECT_EQ(percentiles(thousand).p99, 990);
}

// The definition: the p-th percentile is the smallest sample with at least p% of the samples at or
// below it. Checked by counting over random sets with many duplicates.
TEST(Percentiles, MatchTheNearestRankDefinition) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<double> samples(UniformInt<int>(1, 3000)(rng));
    for (double& s : samples)
      s = UniformInt<int>(0, 40)(rng);
    Percentiles p = percentiles(samples);
    const double n = static_cast<double>(samples.size());
    // In permille, so p99.9 is checked by the same definition.
    for (auto [permille, value] :
         {std::pair{500, p.p50}, {950, p.p95}, {990, p.p99}, {999, p.p999}, {1000, p.max}}) {
      double at_or_below = 0, below = 0;
      for (double s : samples) {
        at_or_below += s <= value;
        below += s < value;
      }
      EXPECT_GE(at_or_below * 1000, permille * n) << "trial " << trial << " p" << permille / 10.0;
      EXPECT_LT(below * 1000, permille * n) << "trial " << trial << " p" << permille / 10.0;
    }
  }
}

// ---- The server's metrics -------------------------------------------------------------------------

// Two matches as the server registers them, with observations whose buckets are counted by hand.
class ServerMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    registry_.gauge("process_cpu_seconds_total", "CPU").set(12.5);
    registry_.gauge("shiftcast_matches", "Matches").set(2);
    for (const char* match : {"1", "2"}) {
      Labels labels{{"match", match}};
      ticks_.push_back(&registry_.histogram("shiftcast_tick_seconds", "Tick", labels));
      late_.push_back(&registry_.counter("shiftcast_late_ticks_total", "Late", labels));
      violations_.push_back(&registry_.counter("shiftcast_invariant_violations_total", "Overlaps", labels));
    }
    for (double v : kMatch1)
      ticks_[0]->observe(v);
    for (double v : kMatch2)
      ticks_[1]->observe(v);
    late_[0]->add(1);
    late_[1]->add(4);
    violations_[0]->add(2);
    violations_[1]->add(3);
  }

  // The le rule by brute force: observations at or below each bound, +Inf last.
  static std::vector<std::uint64_t> expected_cumulative() {
    std::vector<std::uint64_t> out;
    for (double bound : kLatencyBuckets) {
      std::uint64_t n = 0;
      for (double v : kMatch1)
        n += v <= bound;
      for (double v : kMatch2)
        n += v <= bound;
      out.push_back(n);
    }
    out.push_back(std::size(kMatch1) + std::size(kMatch2));
    return out;
  }

  static constexpr double kMatch1[] = {0.0001, 0.0004, 0.002, 0.002, 0.0009};
  static constexpr double kMatch2[] = {0.0004, 0.06, 0.00005};  // 60 ms: the +Inf bucket
  MetricsRegistry registry_;
  std::vector<Histogram*> ticks_;
  std::vector<Counter*> late_, violations_;
};

TEST_F(ServerMetricsTest, ReadsCpuCountersAndTheTickHistogramSummedOverMatches) {
  ServerMetrics m = server_metrics_from_text(registry_.render());
  ASSERT_TRUE(m.ok) << m.error;
  EXPECT_EQ(m.cpu_seconds, 12.5);
  EXPECT_EQ(m.late_ticks, 5u);
  EXPECT_EQ(m.invariant_violations, 5u);
  EXPECT_EQ(m.tick_bucket_bounds, kLatencyBuckets);
  EXPECT_EQ(m.tick_bucket_counts, expected_cumulative());
}

TEST_F(ServerMetricsTest, RefusesPagesItCannotUse) {
  ServerMetrics no_cpu = server_metrics_from_text("shiftcast_late_ticks_total{match=\"1\"} 3\n");
  EXPECT_FALSE(no_cpu.ok);
  EXPECT_NE(no_cpu.error.find("no process_cpu_seconds_total"), std::string::npos);
  ServerMetrics no_inf = server_metrics_from_text(
      "process_cpu_seconds_total 1\nshiftcast_tick_seconds_bucket{match=\"1\",le=\"0.001\"} 3\n");
  EXPECT_NE(no_inf.error.find("no +Inf bucket"), std::string::npos);
  ServerMetrics bad_le = server_metrics_from_text(
      "process_cpu_seconds_total 1\nshiftcast_tick_seconds_bucket{match=\"1\",le=\"soon\"} 3\n");
  EXPECT_NE(bad_le.error.find("without a valid le label"), std::string::npos);
  ServerMetrics negative =
      server_metrics_from_text("process_cpu_seconds_total 1\nshiftcast_late_ticks_total -1\n");
  EXPECT_NE(negative.error.find("not a count"), std::string::npos);
  ServerMetrics malformed = server_metrics_from_text("process_cpu_seconds_total 1\nbroken{\n");
  EXPECT_EQ(malformed.error.rfind("malformed /metrics: line 2:", 0), 0u) << malformed.error;
  // No match at all: no histogram, which is not an error.
  ServerMetrics idle = server_metrics_from_text("process_cpu_seconds_total 0.25\n");
  EXPECT_TRUE(idle.ok);
  EXPECT_TRUE(idle.tick_bucket_counts.empty());
}

TEST_F(ServerMetricsTest, ScrapesARealHttpServer) {
  boost::asio::io_context io;
  HttpServer server(io, "127.0.0.1", 0, {[this] { return registry_.render(); }, {}});
  ASSERT_EQ(server.start(), "");
  std::future<void> runner = std::async(std::launch::async, [&] { io.run(); });
  SimOptions options;
  options.host = "127.0.0.1";
  options.http_port = server.port();
  ServerMetrics m = scrape_server_metrics(options);
  EXPECT_TRUE(m.ok) << m.error;
  EXPECT_EQ(m.cpu_seconds, 12.5);
  EXPECT_EQ(m.invariant_violations, 5u);
  EXPECT_EQ(m.tick_bucket_counts, expected_cumulative());

  HttpResponse missing = http_get("127.0.0.1", server.port(), "/nothing", kTestTimeout);
  EXPECT_EQ(missing.error, "");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.body, "not found\n");
  server.stop();
  ASSERT_EQ(runner.wait_for(kTestTimeout), std::future_status::ready);
}

TEST(HttpGet, ReportsRefusalAndTimeout) {
  boost::asio::io_context io;
  using boost::asio::ip::tcp;
  // A port nobody listens on: bound and closed again.
  std::uint16_t closed_port;
  {
    tcp::acceptor probe(io, tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
    closed_port = probe.local_endpoint().port();
  }
  HttpResponse refused = http_get("127.0.0.1", closed_port, "/metrics", kTestTimeout);
  EXPECT_NE(refused.error.find("refused"), std::string::npos) << refused.error;
  SimOptions options;
  options.http_port = closed_port;
  ServerMetrics unreachable = scrape_server_metrics(options);
  EXPECT_FALSE(unreachable.ok);
  EXPECT_NE(unreachable.error.find("/metrics"), std::string::npos);

  // A listener that never accepts: the kernel completes the connection, nobody answers.
  tcp::acceptor silent(io, tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
  const auto started = std::chrono::steady_clock::now();
  HttpResponse slow =
      http_get("127.0.0.1", silent.local_endpoint().port(), "/metrics", std::chrono::milliseconds(200));
  EXPECT_NE(slow.error.find("timed out"), std::string::npos) << slow.error;
  EXPECT_LT(std::chrono::steady_clock::now() - started, kTestTimeout);
}

// ---- make_report ----------------------------------------------------------------------------------

SimOptions report_options() {
  SimOptions o;
  o.matches = 2;
  o.clients = 2;
  o.tick_rate = 64;
  o.snapshot_rate = 32;
  o.level = "arena";
  return o;  // default budgets: 3 ticks, 0 lost, 0 failed, 0 violations, 50 ms, 32 units, 0.9, a tick
}

// Connected for the whole 10 s load: 64 ticks/s, 32 snapshots/s, 80 / 320 kbit/s, 1 % loss.
SimClientStats healthy_client() {
  SimClientStats c;
  c.connected = true;
  c.connected_seconds = 10;
  c.first_snapshot_tick = 100;
  c.last_snapshot_tick = 740;
  c.snapshots = 320;
  c.bytes_up = 100000;
  c.bytes_down = 400000;
  c.server_sequence_max = 1000;
  c.server_packets_received = 990;
  c.events_highest_seen = 50;
  c.events_delivered = 50;
  c.input_ack_ms = {10, 20, 30, 40};
  c.rpc_ms["raycast"] = {1, 2, 3};
  c.movement_error = {1, 2};
  return c;
}

SimRunResult troubled_run() {
  SimRunResult run;
  run.load_seconds = 10;
  run.clients.push_back(healthy_client());
  SimClientStats dropped;  // 5 s connected then lost: 60 ticks/s, 30 snapshots/s, 40 / 80 kbit/s
  dropped.connected = true;
  dropped.failed = true;
  dropped.failure = "timed out";
  dropped.connected_seconds = 5;
  dropped.last_snapshot_tick = 300;
  dropped.snapshots = 150;
  dropped.bytes_up = 50000;
  dropped.bytes_down = 100000;
  dropped.server_sequence_max = 500;
  dropped.server_packets_received = 480;
  dropped.events_highest_seen = 20;
  dropped.events_delivered = 18;
  dropped.events_out_of_order = 1;
  dropped.events_duplicated = 1;
  dropped.snapshots_skipped = 2;
  dropped.snapshot_tick_regressions = 1;
  dropped.input_ack_ms = {50, 60};
  dropped.rpc_ms["raycast"] = {4};
  dropped.rpc_ms["raycast_rewound"] = {70, 5};
  dropped.rpc_errors["RateLimited"] = 2;
  dropped.movement_error = {40};
  run.clients.push_back(dropped);
  SimClientStats never;
  never.failed = true;
  never.failure = "timed out";
  run.clients.push_back(never);
  SimClientStats refused;
  refused.failed = true;
  refused.failure = "refused \"full\"";
  run.clients.push_back(refused);
  return run;
}

ServerMetrics metrics(double cpu, std::uint64_t violations, std::uint64_t late,
                      std::vector<std::uint64_t> counts) {
  ServerMetrics m;
  m.ok = true;
  m.cpu_seconds = cpu;
  m.invariant_violations = violations;
  m.late_ticks = late;
  m.tick_bucket_bounds = {0.001, 0.002, 0.005};
  m.tick_bucket_counts = std::move(counts);
  return m;
}

// Before {1, 2, 2, 2}, after {3, 10, 12, 12}: the load's ticks are {2, 6, 2, 0} per bucket, 10 in all.
const ServerMetrics kBefore = metrics(100, 1, 2, {1, 2, 2, 2});
const ServerMetrics kAfter = metrics(105, 1, 7, {3, 10, 12, 12});

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

// ---- Output ---------------------------------------------------------------------------------------

TEST(ReportJson, HasEveryRequiredKeyWithTheReportsValues) {
  SimReport r = make_report(report_options(), troubled_run(), kBefore, kAfter);
  const std::string text = report_json(r);
  const JsonParse p = parse_json(text);
  ASSERT_TRUE(p.ok()) << p.error;
  const JsonValue& j = p.value;
  for (const char* key : {"clients",
                          "clients_connected",
                          "clients_predicting",
                          "clients_failed",
                          "events_lost",
                          "input_ack_ms",
                          "rpc_ms",
                          "bandwidth_kbps",
                          "server_tick_ms",
                          "budgets_met",
                          "budgets_missed",
                          "failures",
                          "tick_rate_achieved",
                          "snapshot_rate_achieved",
                          "packet_loss_down",
                          "movement_error",
                          "server_cpu_percent",
                          "server_cpu_percent_per_player",
                          "sim_cpu_percent",
                          "sim_cpu_percent_per_client",
                          "invariant_violations",
                          "event_order_violations",
                          "snapshot_continuity_violations",
                          "rpc_errors",
                          "input_ack_p99_ticks",
                          "load_seconds",
                          "server_late_ticks",
                          "connect_seconds",
                          "client_late_ticks",
                          "rpc_errors_by_code",
                          "snapshot_rate_expected"}) {
    EXPECT_TRUE(j.has(key)) << key;
  }
  for (const char* key : {"input_ack_ms", "server_tick_ms", "movement_error"}) {
    for (const char* p : {"p50", "p95", "p99", "max", "count"})
      EXPECT_TRUE(j[key].has(p)) << key << "." << p;
  }
  EXPECT_EQ(j["clients"].as_number(), 4);
  EXPECT_EQ(j["clients_connected"].as_number(), 2);
  EXPECT_EQ(j["clients_predicting"].as_number(), r.clients_predicting);
  EXPECT_EQ(j["clients_failed"].as_number(), 3);
  EXPECT_EQ(j["events_lost"].as_number(), 2);
  EXPECT_EQ(j["input_ack_ms"]["p50"].as_number(), 30);
  EXPECT_EQ(j["input_ack_ms"]["p99"].as_number(), 60);
  EXPECT_EQ(j["input_ack_p99_ticks"].as_number(), r.input_ack_p99_ticks);  // shortest round trip: exact
  EXPECT_EQ(j["rpc_ms"]["raycast"]["p50"].as_number(), 2);
  EXPECT_EQ(j["rpc_ms"]["raycast_rewound"]["p99"].as_number(), 70);
  EXPECT_EQ(j["bandwidth_kbps"]["up"].as_number(), r.bandwidth_up_kbps);
  EXPECT_EQ(j["bandwidth_kbps"]["down"].as_number(), r.bandwidth_down_kbps);
  EXPECT_EQ(j["packet_loss_down"].as_number(), r.packet_loss_down);
  EXPECT_EQ(j["server_tick_ms"]["p95"].as_number(), r.server_tick_ms.p95);
  EXPECT_EQ(j["server_tick_ms"]["count"].as_number(), 10);
  EXPECT_EQ(j["rpc_errors_by_code"]["RateLimited"].as_number(), 2);
  EXPECT_EQ(j["movement_error"]["p999"].as_number(), r.movement_error.p999);
  EXPECT_EQ(j["sim_cpu_percent"].as_number(), r.sim_cpu_percent);
  EXPECT_EQ(j["sim_cpu_percent_per_client"].as_number(), r.sim_cpu_percent_per_client);
  EXPECT_EQ(j["level"].as_string(), "arena");
  EXPECT_EQ(j["budgets_met"].as_bool(), false);
  ASSERT_TRUE(j["budgets_missed"].is_array());
  ASSERT_EQ(j["budgets_missed"].items.size(), r.budgets_missed.size());
  for (std::size_t i = 0; i < r.budgets_missed.size(); ++i) {
    EXPECT_EQ(j["budgets_missed"].items[i].as_string(), r.budgets_missed[i]);
  }
  ASSERT_EQ(j["failures"].items.size(), 2u);
  EXPECT_EQ(j["failures"].items[1].as_string(), "refused \"full\" (1)");
  EXPECT_EQ(report_json(r), text);  // stable
}

TEST(ReportJson, EscapesStringsAndNullsNonFiniteNumbers) {
  SimReport r;
  r.level = "tab\there \"q\" back\\slash\nline \x01 caf\xC3\xA9";
  r.failures = {"bad \xFF byte", "cut \xE2\x82", "surrogate \xED\xA0\x80"};
  r.load_seconds = std::numeric_limits<double>::quiet_NaN();
  r.tick_rate_achieved = std::numeric_limits<double>::infinity();
  r.input_ack_ms.p99 = -std::numeric_limits<double>::infinity();
  r.bandwidth_up_kbps = 1e-7;
  r.server_cpu_percent = 123456789.125;
  const std::string text = report_json(r);
  EXPECT_EQ(text.find('\xFF'), std::string::npos);
  // Valid non-ASCII UTF-8 is written as it is: never as \u escapes, so never as surrogate pairs.
  EXPECT_NE(text.find("caf\xC3\xA9"), std::string::npos);
  const JsonParse p = parse_json(text);
  ASSERT_TRUE(p.ok()) << p.error;
  const JsonValue& j = p.value;
  EXPECT_EQ(j["level"].as_string(), "tab\there \"q\" back\\slash\nline \x01 caf\xC3\xA9");
  ASSERT_EQ(j["failures"].items.size(), 3u);
  EXPECT_EQ(j["failures"].items[0].as_string(), "bad \xEF\xBF\xBD byte");  // U+FFFD
  EXPECT_EQ(j["failures"].items[1].as_string(), "cut \xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(j["failures"].items[2].as_string(), "surrogate \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  // Written as null, not left out: operator[] reads a missing member as null too.
  for (const JsonValue* nulled :
       {j.member("load_seconds"), j.member("tick_rate_achieved"), j["input_ack_ms"].member("p99")}) {
    ASSERT_NE(nulled, nullptr);
    EXPECT_TRUE(nulled->is_null());
  }
  EXPECT_EQ(j["bandwidth_kbps"]["up"].as_number(), 1e-7);
  EXPECT_EQ(j["server_cpu_percent"].as_number(), 123456789.125);
  EXPECT_TRUE(j["rpc_ms"].is_object());
  EXPECT_TRUE(j["rpc_ms"].members.empty());
  EXPECT_NE(text.find("\"rpc_ms\": {}"), std::string::npos);
}

TEST(ReportTable, ShowsEverySectionAndTheVerdict) {
  SimReport bad = make_report(report_options(), troubled_run(), kBefore, kAfter);
  std::string table = format_report_table(bad);
  for (const char* part :
       {"clients\n", "rates", "latency (ms)", "rpc (ms)", "bandwidth and loss", "reliability\n",
        "movement (units)", "server ", "timed out (2)", "raycast_rewound", "RateLimited"}) {
    EXPECT_NE(table.find(part), std::string::npos) << part;
  }
  const std::string verdict = "\nbudgets: MISSED\n";
  ASSERT_NE(table.find(verdict), std::string::npos);
  std::string expected_tail = verdict;
  for (const std::string& line : bad.budgets_missed)
    expected_tail += "  " + line + "\n";
  EXPECT_TRUE(table.ends_with(expected_tail)) << table;
  // The percentile columns line up: every row's p50 figure ends in the header's "p50" column.
  std::size_t header = table.find("latency (ms)");
  std::size_t p50_end = table.find("p50", header) - header + 3;
  std::size_t row = table.find("  input to acknowledgement");
  EXPECT_EQ(table.substr(row + p50_end - 5, 5), "30.00");

  SimRunResult run;
  run.load_seconds = 10;
  run.clients = {healthy_client()};
  EXPECT_TRUE(
      format_report_table(make_report(report_options(), run, kBefore, kAfter)).ends_with("\nbudgets: met\n"));
}

TEST(ProgressLine, ShowsRatesOverTheLastInterval) {
  SimProgress previous;
  previous.elapsed = 11;
  previous.snapshots = 184000;
  previous.commands = 320000;
  previous.events = 1000;
  previous.rpc_calls = 11000;
  SimProgress now;
  now.elapsed = 12;
  now.clients = 512;
  now.connected = 512;
  now.snapshots = 200000;  // +16000
  now.commands = 352000;   // +32000
  now.events = 1250;       // +250
  now.rpc_calls = 12000;   // +1000
  now.input_ack_p99_ms = 18.24;
  EXPECT_EQ(format_progress_line(now, previous, 1.0),
            "t=12s clients 512/512 failed 0 snapshots/s 16k commands/s 32k events/s 250 rpc/s 1.0k ack p99 "
            "18.2 ms");
  // The same change over two seconds: half the rates.
  EXPECT_EQ(format_progress_line(now, previous, 2.0),
            "t=12s clients 512/512 failed 0 snapshots/s 8.0k commands/s 16k events/s 125 rpc/s 500 ack p99 "
            "18.2 ms");
  // While connecting (elapsed 0); counts that went back read as 0, never wrap; no time, no rate.
  SimProgress connecting;
  connecting.clients = 4;
  connecting.connected = 1;
  connecting.failed = 1;
  EXPECT_EQ(format_progress_line(connecting, now, 1.0),
            "connecting clients 1/4 failed 1 snapshots/s 0 commands/s 0 events/s 0 rpc/s 0 ack p99 0.0 ms");
  EXPECT_EQ(format_progress_line(now, {}, 0.0),
            "t=12s clients 512/512 failed 0 snapshots/s 0 commands/s 0 events/s 0 rpc/s 0 ack p99 18.2 ms");
}

}  // namespace
}  // namespace shiftcast
