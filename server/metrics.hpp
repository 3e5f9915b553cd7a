// Metrics: counters, gauges and histograms that any thread updates without locks, rendered in the
// Prometheus text format (version 0.0.4) for GET /metrics. Register once (under a mutex), keep the
// returned reference, update it on the hot path (one relaxed atomic add).
//
//   Counter& drops = registry.counter("shiftcast_udp_rejected_total", "UDP datagrams refused",
//                                     {{"reason", "token_expired"}});
//   drops.add();
//   Histogram& tick = registry.histogram("shiftcast_tick_seconds", "Tick duration",
//                                        {{"match", "1"}}, kLatencyBuckets);
//   tick.observe(0.0004);
//   std::string text = registry.render();
//
// Families render in name order, series in registration order, so the output is deterministic. Counter
// names end in _total by the caller's choice (the registry does not rename). Registering a name twice
// with another type, or an invalid metric or label name, is a programming error: std::logic_error.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace shiftcast {

using Labels = std::vector<std::pair<std::string, std::string>>;

class Counter {
 public:
  void add(std::uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  std::uint64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> value_{0};
};

class Gauge {
 public:
  void set(double v) { value_.store(v, std::memory_order_relaxed); }
  void add(double v);
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

// Cumulative buckets as Prometheus wants them (le = upper bound, +Inf implied).
class Histogram {
 public:
  // Finite, strictly increasing bounds (std::invalid_argument otherwise: a programming error).
  explicit Histogram(std::vector<double> upper_bounds);
  // NaN is ignored (it would poison the sum); +Inf lands in the +Inf bucket.
  void observe(double value);
  // Quantile estimated from the buckets (linear within a bucket, from 0 for the first one), for
  // MatchStatus and the sim. q is clamped to [0, 1]; 0 when nothing was observed; the largest finite
  // bound when the quantile falls in the +Inf bucket.
  double quantile(double q) const;
  // The sum of the buckets, so that it always equals the +Inf bucket of a render.
  std::uint64_t count() const;
  double sum() const;
  const std::vector<double>& bounds() const { return bounds_; }
  std::vector<std::uint64_t> bucket_counts() const;  // non-cumulative, bounds().size() + 1 entries

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> buckets_;
  std::atomic<double> sum_{0};
};

// Seconds: 50 us .. 50 ms, for ticks and RPC latencies.
extern const std::vector<double> kLatencyBuckets;

class MetricsRegistry {
 public:
  MetricsRegistry();
  ~MetricsRegistry();
  MetricsRegistry(const MetricsRegistry&) = delete;
  MetricsRegistry& operator=(const MetricsRegistry&) = delete;

  // The same name and labels (in the same order) return the same object; the help text of the first
  // registration wins. References stay valid until remove_labelled drops the series.
  Counter& counter(const std::string& name, const std::string& help, const Labels& labels = {});
  Gauge& gauge(const std::string& name, const std::string& help, const Labels& labels = {});
  Histogram& histogram(const std::string& name, const std::string& help, const Labels& labels,
                       const std::vector<double>& upper_bounds = kLatencyBuckets);
  // The same, shared: the series outlives remove_labelled as long as the pointer is held (a match's
  // series, read by a MatchStatus that holds the match after it ended, must not dangle).
  std::shared_ptr<Counter> counter_series(const std::string& name, const std::string& help,
                                          const Labels& labels = {});
  std::shared_ptr<Gauge> gauge_series(const std::string& name, const std::string& help,
                                      const Labels& labels = {});
  std::shared_ptr<Histogram> histogram_series(const std::string& name, const std::string& help,
                                              const Labels& labels,
                                              const std::vector<double>& upper_bounds = kLatencyBuckets);
  // Drops every series with this label value (a match that ended) from the render. References from
  // counter()/gauge()/histogram() dangle afterwards; pointers from the *_series calls stay valid.
  void remove_labelled(const std::string& label, const std::string& value);
  std::string render() const;
  // Every series of a counter family with its value (empty for an unknown name or another kind): for
  // pages that summarise what /metrics says (the dashboard's rejections).
  std::vector<std::pair<Labels, std::uint64_t>> counter_values(const std::string& name) const;

 private:
  enum class Kind { kCounter, kGauge, kHistogram };
  struct Family;
  struct Series;
  // Under mutex_: the family of this name, created on first use; logic_error if its kind differs.
  Family& family(const std::string& name, const std::string& help, Kind kind);
  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Family>> families_;
};

}  // namespace shiftcast
