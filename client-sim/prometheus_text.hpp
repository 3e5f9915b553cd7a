// PrometheusText: a parser of the Prometheus text exposition format (version 0.0.4), enough to read a
// scrape of GET /metrics: every sample line becomes a series name, its labels (escapes undone) and its
// value; `# TYPE` and `# HELP` lines are kept per family; other comments and blank lines are skipped.
// Histograms arrive as their own series (name_bucket{le="..."}, name_sum, name_count), as on the wire.
//
//   PrometheusText text = parse_prometheus_text(body);
//   if (!text.error.empty()) return fail(text.error);           // "line 12: ..." on the first bad line
//   for (const PrometheusSample& s : text.samples)
//     if (s.name == "shiftcast_late_ticks_total") late += s.value;
//
// The input is a peer's bytes: every line is checked, and the first malformed one stops the parse with
// its line number (a half-read scrape must not pass for a whole one).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace shiftcast {

struct PrometheusSample {
  std::string name;
  std::vector<std::pair<std::string, std::string>> labels;  // in the order written
  double value = 0;                                         // NaN and +-Inf as written
  std::optional<std::int64_t> timestamp_ms;

  // The value of label `name`, or nullptr.
  const std::string* label(std::string_view name) const;
};

struct PrometheusText {
  std::string error;  // empty: parsed
  std::vector<PrometheusSample> samples;
  std::map<std::string, std::string> types;  // family name -> counter, gauge, histogram, summary, untyped
  std::map<std::string, std::string> help;   // family name -> help text, escapes undone
};

PrometheusText parse_prometheus_text(std::string_view text);

// A Prometheus float: decimal, "NaN", "+Inf", "-Inf" (and "Inf"), as Go's ParseFloat reads them.
std::optional<double> parse_prometheus_value(std::string_view text);

}  // namespace shiftcast
