// ServerMetrics: the part of the server's /metrics page a shiftcast-sim report uses (CPU seconds,
// invariant violations, late ticks and the tick time histogram summed over every match), read over HTTP
// or from the page's text. Take one scrape before the load and one while the run's matches still exist;
// make_report (sim_report.hpp) turns the pair into deltas.
//
//   ServerMetrics before = scrape_server_metrics(options);
//   if (!before.ok) spdlog::warn("{}", before.error);   // the report then says the figures are missing
//   ServerMetrics one = scrape_server_metrics(server);   // one of several (client-sim/sim_servers.hpp)
//   ServerMetrics all = merge_server_metrics({a, b, c}); // sums, as if one server hosted every match
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "client-sim/sim_options.hpp"

namespace shiftcast {

// The server's view, from GET /metrics: cumulative values at one moment.
struct ServerMetrics {
  bool ok = false;
  std::string error;
  double cpu_seconds = 0;                  // process_cpu_seconds_total
  std::uint64_t invariant_violations = 0;  // summed over every match
  std::uint64_t late_ticks = 0;
  int matches = 0;  // matches hosted: distinct `match` labels of shiftcast_tick_seconds_count
  std::vector<double> tick_bucket_bounds;         // seconds
  std::vector<std::uint64_t> tick_bucket_counts;  // cumulative, summed over every match; +Inf last
  // When the page was read (scrape_server_metrics sets it): CPU per second is taken over the time between
  // two scrapes, which holds all of its CPU seconds; {} (unknown): over the run's load_seconds.
  std::chrono::steady_clock::time_point taken{};
};

inline constexpr std::chrono::milliseconds kMetricsScrapeTimeout{5000};

// GET http://host:http_port/metrics; ok = false with the reason when unreachable or malformed.
ServerMetrics scrape_server_metrics(const SimOptions& options);
ServerMetrics scrape_server_metrics(const SimServer& server);
// The part of a /metrics page the report uses; ok = false with the reason on a malformed page.
ServerMetrics server_metrics_from_text(std::string_view prometheus_text);
// Several servers' scrapes taken together: counts, CPU seconds and tick buckets summed (bucket by bound),
// taken = the latest. Not ok when any is not (the first such one's error, prefixed "scrape N of M: ").
ServerMetrics merge_server_metrics(const std::vector<ServerMetrics>& scrapes);

}  // namespace shiftcast
