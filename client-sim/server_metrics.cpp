#include "client-sim/server_metrics.hpp"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "client-sim/http_get.hpp"
#include "client-sim/prometheus_text.hpp"

namespace shiftcast {

ServerMetrics server_metrics_from_text(std::string_view prometheus_text) {
  ServerMetrics m;
  PrometheusText text = parse_prometheus_text(prometheus_text);
  if (!text.error.empty()) {
    m.error = "malformed /metrics: " + text.error;
    return m;
  }
  auto counter = [&](const PrometheusSample& s, std::uint64_t& sum) {
    if (!std::isfinite(s.value) || s.value < 0) {
      m.error = fmt::format("/metrics: {} = {}: not a count", s.name, s.value);
      return false;
    }
    sum += static_cast<std::uint64_t>(std::llround(s.value));
    return true;
  };
  bool cpu_seen = false;
  std::map<double, std::uint64_t> buckets;  // le -> cumulative count over every match; +Inf sorts last
  std::set<std::string> matches;
  for (const PrometheusSample& s : text.samples) {
    if (s.name == "process_cpu_seconds_total") {
      m.cpu_seconds = s.value;
      cpu_seen = std::isfinite(s.value);
    } else if (s.name == "shiftcast_invariant_violations_total") {
      if (!counter(s, m.invariant_violations)) return m;
    } else if (s.name == "shiftcast_late_ticks_total") {
      if (!counter(s, m.late_ticks)) return m;
    } else if (s.name == "shiftcast_tick_seconds_count") {
      if (const std::string* match = s.label("match")) matches.insert(*match);
    } else if (s.name == "shiftcast_tick_seconds_bucket") {
      const std::string* le = s.label("le");
      std::optional<double> bound = le ? parse_prometheus_value(*le) : std::nullopt;
      if (!bound || std::isnan(*bound)) {
        m.error = "/metrics: a shiftcast_tick_seconds bucket without a valid le label";
        return m;
      }
      if (!counter(s, buckets[*bound])) return m;
    }
  }
  if (!cpu_seen) {
    m.error = "/metrics: no process_cpu_seconds_total";
    return m;
  }
  if (!buckets.empty() && !std::isinf(buckets.rbegin()->first)) {
    m.error = "/metrics: shiftcast_tick_seconds has no +Inf bucket";
    return m;
  }
  for (const auto& [bound, count] : buckets) {
    // Sums per bound are a histogram only if every match has the same bounds (the server's are one
    // constant); anything else shows as counts going down.
    if (!m.tick_bucket_counts.empty() && count < m.tick_bucket_counts.back()) {
      m.error =
          "/metrics: shiftcast_tick_seconds buckets are not cumulative (bounds differ between matches?)";
      m.tick_bucket_bounds.clear();
      m.tick_bucket_counts.clear();
      return m;
    }
    if (!std::isinf(bound)) m.tick_bucket_bounds.push_back(bound);
    m.tick_bucket_counts.push_back(count);
  }
  m.matches = static_cast<int>(matches.size());
  m.ok = true;
  return m;
}

ServerMetrics merge_server_metrics(const std::vector<ServerMetrics>& scrapes) {
  ServerMetrics m;
  std::map<double, std::uint64_t> buckets;  // le -> cumulative count; the last bound is +Inf
  for (std::size_t i = 0; i < scrapes.size(); ++i) {
    const ServerMetrics& s = scrapes[i];
    if (!s.ok) {
      ServerMetrics failed;
      failed.error = fmt::format("scrape {} of {}: {}", i + 1, scrapes.size(), s.error);
      return failed;
    }
    m.cpu_seconds += s.cpu_seconds;
    m.invariant_violations += s.invariant_violations;
    m.late_ticks += s.late_ticks;
    m.matches += s.matches;
    m.taken = std::max(m.taken, s.taken);
    for (std::size_t b = 0; b < s.tick_bucket_counts.size(); ++b) {
      const double bound =
          b < s.tick_bucket_bounds.size() ? s.tick_bucket_bounds[b] : std::numeric_limits<double>::infinity();
      buckets[bound] += s.tick_bucket_counts[b];
    }
  }
  // Equal bounds everywhere (the server's are one constant) keep the sums cumulative.
  for (const auto& [bound, count] : buckets) {
    if (!std::isinf(bound)) m.tick_bucket_bounds.push_back(bound);
    m.tick_bucket_counts.push_back(count);
  }
  m.ok = !scrapes.empty();
  if (!m.ok) m.error = "no server scraped";
  return m;
}

ServerMetrics scrape_server_metrics(const SimOptions& options) {
  return scrape_server_metrics(SimServer{options.host, options.rpc_port, options.http_port});
}

ServerMetrics scrape_server_metrics(const SimServer& server) {
  HttpResponse response = http_get(server.host, server.http_port, "/metrics", kMetricsScrapeTimeout);
  if (!response.error.empty()) {
    ServerMetrics m;
    m.error = response.error;
    return m;
  }
  if (response.status != 200) {
    ServerMetrics m;
    m.error =
        fmt::format("GET http://{}:{}/metrics: HTTP {}", server.host, server.http_port, response.status);
    return m;
  }
  ServerMetrics m = server_metrics_from_text(response.body);
  m.taken = std::chrono::steady_clock::now();
  return m;
}

}  // namespace shiftcast
