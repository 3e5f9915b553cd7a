// The inputs of SimReport: nearest-rank percentiles against their definition over random samples; the
// server's /metrics read from the real MetricsRegistry rendering (hand-counted buckets) and scraped from a
// real HttpServer on loopback; http_get's refusal and timeout.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <future>
#include <random>
#include <string>
#include <vector>

#include "client-sim/http_get.hpp"
#include "client-sim/sim_report.hpp"
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

}  // namespace
}  // namespace shiftcast
