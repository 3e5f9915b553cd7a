// Metrics and Rejections: the Prometheus 0.0.4 text of a small registry against hand-written output
// (HELP/TYPE once per family, escaping, cumulative buckets with +Inf, _sum, _count), identity of
// registrations, removal, histogram quantiles against closed forms and against exact quantiles of evenly
// spaced samples, exact totals under concurrent updates, and the rejection counters of a channel.
#include "server/metrics.hpp"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "protocol/envelope.hpp"
#include "server/rejections.hpp"

namespace shiftcast {
namespace {

TEST(Metrics, RendersThePrometheusTextFormat) {
  MetricsRegistry registry;
  // Registered out of name order: families render sorted by name, series in registration order.
  Histogram& tick =
      registry.histogram("shiftcast_tick_seconds", "Tick duration", {{"match", "7"}}, {0.25, 1});
  Counter& udp = registry.counter("shiftcast_rejected_total", "Refused\\inputs\nper reason",
                                  {{"channel", "udp"}, {"reason", "a\"b\\c\nd"}});
  Counter& rpc =
      registry.counter("shiftcast_rejected_total", "ignored: the first help wins", {{"channel", "rpc"}});
  Gauge& matches = registry.gauge("shiftcast_matches", "Matches running");
  udp.add();
  udp.add(4);
  rpc.add(2);
  matches.set(3);
  matches.add(-0.5);
  tick.observe(0.25);  // on a bound: that bound's bucket (le is inclusive)
  tick.observe(0.125);
  tick.observe(0.5);
  tick.observe(4);  // beyond every bound: +Inf only
  EXPECT_EQ(registry.render(),
            "# HELP shiftcast_matches Matches running\n"
            "# TYPE shiftcast_matches gauge\n"
            "shiftcast_matches 2.5\n"
            "# HELP shiftcast_rejected_total Refused\\\\inputs\\nper reason\n"
            "# TYPE shiftcast_rejected_total counter\n"
            "shiftcast_rejected_total{channel=\"udp\",reason=\"a\\\"b\\\\c\\nd\"} 5\n"
            "shiftcast_rejected_total{channel=\"rpc\"} 2\n"
            "# HELP shiftcast_tick_seconds Tick duration\n"
            "# TYPE shiftcast_tick_seconds histogram\n"
            "shiftcast_tick_seconds_bucket{match=\"7\",le=\"0.25\"} 2\n"
            "shiftcast_tick_seconds_bucket{match=\"7\",le=\"1\"} 3\n"
            "shiftcast_tick_seconds_bucket{match=\"7\",le=\"+Inf\"} 4\n"
            "shiftcast_tick_seconds_sum{match=\"7\"} 4.875\n"
            "shiftcast_tick_seconds_count{match=\"7\"} 4\n");
}

TEST(Metrics, SpecialValuesAndBoundsUseTheFormatsSpellings) {
  MetricsRegistry registry;
  registry.gauge("g", "", {{"k", "nan"}}).set(std::numeric_limits<double>::quiet_NaN());
  registry.gauge("g", "", {{"k", "inf"}}).set(std::numeric_limits<double>::infinity());
  registry.gauge("g", "", {{"k", "-inf"}}).set(-std::numeric_limits<double>::infinity());
  registry.gauge("g", "", {{"k", "small"}}).set(5e-05);
  registry.gauge("g", "", {{"k", "fixed"}}).set(123456.5);
  registry.gauge("g", "", {{"k", "large"}}).set(1e6);
  registry.gauge("g", "", {{"k", "negative"}}).set(-0.0001);
  registry.histogram("h", "", {}, {5e-05, 1e-04});
  EXPECT_EQ(
      registry.render(),
      "# HELP g \n# TYPE g gauge\n"
      "g{k=\"nan\"} NaN\ng{k=\"inf\"} +Inf\ng{k=\"-inf\"} -Inf\ng{k=\"small\"} 5e-05\n"
      "g{k=\"fixed\"} 123456.5\ng{k=\"large\"} 1e+06\ng{k=\"negative\"} -0.0001\n"
      "# HELP h \n# TYPE h histogram\n"
      "h_bucket{le=\"5e-05\"} 0\nh_bucket{le=\"0.0001\"} 0\nh_bucket{le=\"+Inf\"} 0\nh_sum 0\nh_count 0\n");
}

TEST(Metrics, SameNameAndLabelsGiveTheSameObject) {
  MetricsRegistry registry;
  Counter& a = registry.counter("c_total", "help", {{"k", "1"}});
  Counter& b = registry.counter("c_total", "other help", {{"k", "1"}});
  Counter& c = registry.counter("c_total", "help", {{"k", "2"}});
  EXPECT_EQ(&a, &b);
  EXPECT_NE(&a, &c);
  Histogram& h1 = registry.histogram("h", "help", {});
  Histogram& h2 = registry.histogram("h", "help", {});
  EXPECT_EQ(&h1, &h2);
  EXPECT_EQ(h1.bounds(), kLatencyBuckets);
}

TEST(Metrics, ProgrammingErrorsAreRefused) {
  MetricsRegistry registry;
  registry.counter("x_total", "help");
  EXPECT_THROW(registry.gauge("x_total", "help"), std::logic_error);
  EXPECT_THROW(registry.counter("1bad", "help"), std::logic_error);
  EXPECT_THROW(registry.counter("bad-name", "help"), std::logic_error);
  EXPECT_THROW(registry.counter("ok_total", "help", {{"bad-label", "v"}}), std::logic_error);
  EXPECT_THROW(registry.counter("ok_total", "help", {{"__reserved", "v"}}), std::logic_error);
  EXPECT_THROW(registry.counter("ok_total", "help", {{"k", "1"}, {"k", "2"}}), std::logic_error);
  EXPECT_THROW(registry.histogram("h", "help", {{"le", "1"}}), std::logic_error);
  EXPECT_THROW(Histogram({2, 1}), std::invalid_argument);
  EXPECT_THROW(Histogram({1, 1}), std::invalid_argument);
  EXPECT_THROW(Histogram({1, std::numeric_limits<double>::infinity()}), std::invalid_argument);
  EXPECT_NO_THROW(registry.counter("ns:ok_total", "colons are allowed in metric names"));
}

TEST(Metrics, RemoveLabelledDropsTheSeriesOfAnEndedMatch) {
  MetricsRegistry registry;
  registry.counter("a_total", "a", {{"match", "1"}}).add(1);
  registry.counter("a_total", "a", {{"match", "2"}}).add(2);
  registry.histogram("b_seconds", "b", {{"match", "1"}}, {1}).observe(0.5);
  registry.gauge("c", "c", {{"other", "1"}}).set(1);
  registry.remove_labelled("match", "1");
  EXPECT_EQ(registry.render(),
            "# HELP a_total a\n# TYPE a_total counter\na_total{match=\"2\"} 2\n"
            "# HELP c c\n# TYPE c gauge\nc{other=\"1\"} 1\n");
  // A family left empty is gone, so its name may come back as another type.
  EXPECT_NO_THROW(registry.gauge("b_seconds", "now a gauge"));
}

TEST(Metrics, LatencyBucketsAreTheDocumentedOnes) {
  const std::vector<double> expected{50e-6, 100e-6, 200e-6, 300e-6, 500e-6, 750e-6, 1e-3, 1.5e-3,
                                     2e-3,  3e-3,   5e-3,   7.5e-3, 10e-3,  20e-3,  50e-3};
  EXPECT_EQ(kLatencyBuckets, expected);
}

TEST(Histogram, QuantileInterpolatesLinearlyInsideItsBucket) {
  Histogram h({1, 2, 4});
  EXPECT_EQ(h.quantile(0.5), 0);  // empty
  for (int i = 0; i < 4; ++i)
    h.observe(0.5);  // (0, 1]
  for (int i = 0; i < 4; ++i)
    h.observe(1.5);  // (1, 2]
  for (int i = 0; i < 2; ++i)
    h.observe(100);  // (4, +Inf)
  EXPECT_EQ(h.count(), 10u);
  EXPECT_EQ(h.sum(), 4 * 0.5 + 4 * 1.5 + 2 * 100);
  EXPECT_EQ(h.bucket_counts(), (std::vector<std::uint64_t>{4, 4, 0, 2}));
  // rank = q * count; inside bucket (lo, hi] holding n with c below: lo + (hi - lo) * (rank - c) / n.
  EXPECT_DOUBLE_EQ(h.quantile(0.25), 0 + 1.0 * (2.5 - 0) / 4);
  EXPECT_DOUBLE_EQ(h.quantile(0.4), 1.0);
  EXPECT_DOUBLE_EQ(h.quantile(0.75), 1 + 1.0 * (7.5 - 4) / 4);
  EXPECT_DOUBLE_EQ(h.quantile(0.8), 2.0);   // the empty (2, 4] bucket is skipped, not divided by
  EXPECT_DOUBLE_EQ(h.quantile(0.95), 4.0);  // in +Inf: the largest finite bound
  EXPECT_DOUBLE_EQ(h.quantile(0), 0.0);
  EXPECT_DOUBLE_EQ(h.quantile(-1), 0.0);
  EXPECT_DOUBLE_EQ(h.quantile(2), 4.0);
  h.observe(std::numeric_limits<double>::quiet_NaN());  // ignored
  EXPECT_EQ(h.count(), 10u);
}

TEST(Histogram, QuantilesOfEvenlySpacedSamplesMatchTheExactOnes) {
  // N samples evenly spread over (0, 50 ms]: within a bucket they are uniform, so linear interpolation
  // reproduces the exact quantile q * 50 ms to within one sample spacing.
  constexpr int kSamples = 100000;
  constexpr double kSpan = 0.05;
  Histogram h(kLatencyBuckets);
  for (int i = 1; i <= kSamples; ++i)
    h.observe(kSpan * i / kSamples);
  for (double q : {0.01, 0.1, 0.25, 0.5, 0.9, 0.99, 0.999}) {
    EXPECT_NEAR(h.quantile(q), q * kSpan, kSpan / kSamples) << q;
  }
}

TEST(Metrics, ConcurrentUpdatesAreExact) {
  MetricsRegistry registry;
  Counter& counter = registry.counter("n_total", "n");
  Gauge& gauge = registry.gauge("g", "g");
  Histogram& histogram = registry.histogram("h", "h", {}, {0.5});
  constexpr int kThreads = 4;
  constexpr int kPerThread = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kPerThread; ++i) {
        counter.add();
        gauge.add(0.5);  // exact in binary, so the total is exact whatever the order
        histogram.observe(0.25);
      }
    });
  }
  for (std::thread& t : threads)
    t.join();
  EXPECT_EQ(counter.value(), std::uint64_t{kThreads} * kPerThread);
  EXPECT_EQ(gauge.value(), 0.5 * kThreads * kPerThread);
  EXPECT_EQ(histogram.count(), std::uint64_t{kThreads} * kPerThread);
  EXPECT_EQ(histogram.sum(), 0.25 * kThreads * kPerThread);
  EXPECT_EQ(histogram.bucket_counts()[0], std::uint64_t{kThreads} * kPerThread);
}

// Rejections: counters for every reason exist from the start, named by envelope.hpp's to_string.
std::string rejected_line(const std::string& channel, wire::ErrorCode code, std::uint64_t n) {
  return "shiftcast_rejected_total{channel=\"" + channel + "\",reason=\"" + to_string(code) + "\"} " +
         std::to_string(n) + "\n";
}

TEST(Rejections, CountsEveryReasonPerChannel) {
  MetricsRegistry registry;
  Rejections udp(registry, "udp");
  Rejections rpc(registry, "rpc");
  std::string text = registry.render();
  for (wire::ErrorCode code : wire::EnumValuesErrorCode()) {
    if (code == wire::ErrorCode::Ok) {
      EXPECT_EQ(text.find("reason=\"ok\""), std::string::npos);
      continue;
    }
    EXPECT_NE(text.find(rejected_line("udp", code, 0)), std::string::npos) << to_string(code);
    EXPECT_NE(text.find(rejected_line("rpc", code, 0)), std::string::npos) << to_string(code);
  }
  for (int i = 0; i < 3; ++i)
    udp.reject(wire::ErrorCode::TokenExpired, "127.0.0.1:5000", "stale");
  rpc.reject(wire::ErrorCode::RateLimited, "127.0.0.1:6000", "bucket empty");
  udp.reject(wire::ErrorCode::Ok, "127.0.0.1:5000", "a caller's bug");
  udp.reject(static_cast<wire::ErrorCode>(60000), "127.0.0.1:5000", "not a code");
  EXPECT_EQ(udp.count(wire::ErrorCode::TokenExpired), 3u);
  EXPECT_EQ(rpc.count(wire::ErrorCode::TokenExpired), 0u);
  EXPECT_EQ(rpc.count(wire::ErrorCode::RateLimited), 1u);
  EXPECT_EQ(udp.count(wire::ErrorCode::Internal), 2u);
  text = registry.render();
  EXPECT_NE(text.find(rejected_line("udp", wire::ErrorCode::TokenExpired, 3)), std::string::npos) << text;
  // The labels are envelope.hpp's snake_case names.
  EXPECT_NE(text.find("shiftcast_rejected_total{channel=\"udp\",reason=\"token_expired\"} 3\n"),
            std::string::npos);
  EXPECT_NE(text.find("shiftcast_rejected_total{channel=\"rpc\",reason=\"rate_limited\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find(rejected_line("rpc", wire::ErrorCode::RateLimited, 1)), std::string::npos) << text;
  EXPECT_NE(text.find(rejected_line("udp", wire::ErrorCode::Internal, 2)), std::string::npos) << text;
  EXPECT_EQ(text.find("# TYPE shiftcast_rejected_total counter"),
            text.rfind("# TYPE shiftcast_rejected_total"));
}

TEST(Rejections, LogsAtDebugLevel) {
  std::ostringstream captured;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(captured);
  auto logger = std::make_shared<spdlog::logger>("rejections_test", sink);
  logger->set_pattern("%l %v");
  std::shared_ptr<spdlog::logger> previous = spdlog::default_logger();
  spdlog::set_default_logger(logger);

  MetricsRegistry registry;
  Rejections udp(registry, "udp");
  logger->set_level(spdlog::level::info);
  udp.reject(wire::ErrorCode::WrongVersion, "10.0.0.1:1234", "version 9");
  logger->set_level(spdlog::level::debug);
  udp.reject(wire::ErrorCode::TokenReplayed, "10.0.0.2:4321", "token seen before");
  spdlog::set_default_logger(previous);

  EXPECT_EQ(captured.str(), std::string("debug udp: rejected because ") +
                                to_string(wire::ErrorCode::TokenReplayed) +
                                " from 10.0.0.2:4321: token seen before\n");
  EXPECT_EQ(udp.count(wire::ErrorCode::WrongVersion), 1u);  // counted even when not logged
}

}  // namespace
}  // namespace shiftcast
