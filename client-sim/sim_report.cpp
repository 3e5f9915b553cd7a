#include "client-sim/sim_report.hpp"

#include "client-sim/churn_report.hpp"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>

namespace shiftcast {
namespace {

constexpr double kMillisecondsPerSecond = 1000;
constexpr double kBitsPerByte = 8;
constexpr double kBitsPerKilobit = 1000;
constexpr double kPercent = 100;

std::uint64_t minus_or_zero(std::uint64_t a, std::uint64_t b) {
  return a > b ? a - b : 0;
}

// ---- The server's histogram -----------------------------------------------------------------------

// The cumulative count of `before` at `bound` (+Inf: the last), 0 when `before` has no such bucket
// (no match existed at the first scrape).
std::uint64_t cumulative_at(const ServerMetrics& before, double bound) {
  if (before.tick_bucket_counts.empty()) return 0;
  if (std::isinf(bound)) return before.tick_bucket_counts.back();
  for (std::size_t i = 0; i < before.tick_bucket_bounds.size(); ++i) {
    if (before.tick_bucket_bounds[i] == bound) return before.tick_bucket_counts[i];
  }
  return 0;
}

// after - before per bucket, cumulative, negative deltas (a match ended between the scrapes) clamped
// to 0 and kept non-decreasing so the result is still a histogram.
std::vector<std::uint64_t> histogram_delta(const ServerMetrics& before, const ServerMetrics& after) {
  std::vector<std::uint64_t> delta(after.tick_bucket_counts.size());
  std::uint64_t running = 0;
  for (std::size_t i = 0; i < delta.size(); ++i) {
    double bound = i < after.tick_bucket_bounds.size() ? after.tick_bucket_bounds[i]
                                                       : std::numeric_limits<double>::infinity();
    running = std::max(running, minus_or_zero(after.tick_bucket_counts[i], cumulative_at(before, bound)));
    delta[i] = running;
  }
  return delta;
}

// Percentiles of a cumulative histogram (+Inf last), linear within the bucket that holds the rank, the
// first bucket starting at 0; the +Inf bucket reads as the largest finite bound, as the server's own
// Histogram::quantile does. max: the upper bound of the highest non-empty bucket.
Percentiles histogram_percentiles(const std::vector<double>& bounds,
                                  const std::vector<std::uint64_t>& cumulative, double scale) {
  Percentiles out;
  if (cumulative.empty() || cumulative.back() == 0) return out;
  const double largest = bounds.empty() ? 0 : bounds.back();
  auto upper_of = [&](std::size_t i) { return i < bounds.size() ? bounds[i] : largest; };
  auto quantile = [&](double q) {
    double rank = q * static_cast<double>(cumulative.back());
    std::uint64_t below = 0;
    for (std::size_t i = 0; i < cumulative.size(); ++i) {
      std::uint64_t count = cumulative[i] - below;
      if (count > 0 && static_cast<double>(cumulative[i]) >= rank) {
        if (i >= bounds.size()) return largest;
        double lower = i > 0 ? bounds[i - 1] : 0;
        double fraction = (rank - static_cast<double>(below)) / static_cast<double>(count);
        return lower + (bounds[i] - lower) * std::clamp(fraction, 0.0, 1.0);
      }
      below = cumulative[i];
    }
    return largest;
  };
  out.p50 = quantile(0.50) * scale;
  out.p95 = quantile(0.95) * scale;
  out.p99 = quantile(0.99) * scale;
  for (std::size_t i = cumulative.size(); i-- > 0;) {
    if (cumulative[i] > (i > 0 ? cumulative[i - 1] : 0)) {
      out.max = upper_of(i) * scale;
      break;
    }
  }
  out.count = cumulative.back();
  return out;
}

// ---- Formatting -----------------------------------------------------------------------------------

// Two decimals at most, trailing zeros dropped: "4.1", "3", "0.25".
std::string short_number(double v) {
  if (!std::isfinite(v)) return fmt::format("{}", v);
  std::string s = fmt::format("{:.2f}", v);
  while (s.back() == '0')
    s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

// 512, 1.0k, 16k, 2.3M: the progress line keeps a steady width.
std::string compact(double v) {
  constexpr double kKilo = 1e3;
  constexpr double kMega = 1e6;
  if (v < kKilo - 0.5) return fmt::format("{:.0f}", v);
  if (v < 10 * kKilo - 50) return fmt::format("{:.1f}k", v / kKilo);
  if (v < kMega - 500) return fmt::format("{:.0f}k", v / kKilo);
  return fmt::format("{:.1f}M", v / kMega);
}

constexpr std::size_t kLabelWidth = 34;
constexpr int kColumnWidth = 10;

std::string row(std::string_view label, std::string_view value) {
  std::string line = fmt::format("  {}", label);
  line.resize(std::max(line.size() + 1, kLabelWidth), ' ');
  return line + std::string(value) + "\n";
}

std::string percentile_header(std::string_view section) {
  std::string line(section);
  line.resize(std::max(line.size() + 1, kLabelWidth), ' ');
  return line + fmt::format("{:>{}}{:>{}}{:>{}}{:>{}}{:>{}}\n", "p50", kColumnWidth, "p95", kColumnWidth,
                            "p99", kColumnWidth, "max", kColumnWidth, "samples", kColumnWidth);
}

std::string percentile_row(std::string_view label, const Percentiles& p) {
  std::string line = fmt::format("  {}", label);
  line.resize(std::max(line.size() + 1, kLabelWidth), ' ');
  return line + fmt::format("{:>{}.2f}{:>{}.2f}{:>{}.2f}{:>{}.2f}{:>{}}\n", p.p50, kColumnWidth, p.p95,
                            kColumnWidth, p.p99, kColumnWidth, p.max, kColumnWidth, p.count, kColumnWidth);
}

}  // namespace

Percentiles percentiles(std::vector<double> samples) {
  Percentiles out;
  std::erase_if(samples, [](double v) { return std::isnan(v); });
  if (samples.empty()) return out;
  std::sort(samples.begin(), samples.end());
  const std::uint64_t n = samples.size();
  // Nearest rank ceil(p/1000 * n) in integers (p in permille), so no rounding of p * n can shift it by one.
  auto at = [&](std::uint64_t permille) {
    std::uint64_t rank = (permille * n + 999) / 1000;
    return samples[std::max<std::uint64_t>(rank, 1) - 1];
  };
  out.p50 = at(500);
  out.p95 = at(950);
  out.p99 = at(990);
  out.p999 = at(999);
  out.max = samples.back();
  out.count = n;
  return out;
}

Percentiles server_tick_ms_between(const ServerMetrics& before, const ServerMetrics& after) {
  if (!before.ok || !after.ok) return {};
  return histogram_percentiles(after.tick_bucket_bounds, histogram_delta(before, after),
                               kMillisecondsPerSecond);
}

SimReport judge_report(const SimOptions& options, const SimRunResult& run, const ServerMetrics& before,
                       const ServerMetrics& after) {
  SimReport r;
  r.matches = options.matches;
  r.clients_per_match = options.clients;
  r.tick_rate = options.tick_rate;
  r.snapshot_rate = options.snapshot_rate;
  r.snapshot_rate_expected = effective_snapshot_rate(options.tick_rate, options.snapshot_rate);
  r.level = options.level;
  r.clients = static_cast<int>(run.clients.size());
  r.connect_seconds = run.connect_seconds;
  r.load_seconds = run.load_seconds;
  r.client_late_ticks = run.late_client_ticks;

  std::vector<double> acks, movement;
  std::map<std::string, std::vector<double>> rpc;
  std::map<std::string, int> failures;
  double tick_rates = 0, snapshot_rates = 0, up_kbps = 0, down_kbps = 0;
  int timed_clients = 0;
  std::uint64_t packets_received = 0, packets_sent = 0;
  for (const SimClientStats& c : run.clients) {
    if (c.connected) {
      ++r.clients_connected;
      if (c.predicting) ++r.clients_predicting;
      if (c.connected_seconds > 0) {
        tick_rates += static_cast<double>(minus_or_zero(c.last_snapshot_tick, c.first_snapshot_tick)) /
                      c.connected_seconds;
        snapshot_rates += static_cast<double>(c.snapshots) / c.connected_seconds;
        ++timed_clients;
      }
      if (run.load_seconds > 0) {
        const auto kbps = [&](std::uint64_t bytes) {
          return static_cast<double>(bytes) * kBitsPerByte / kBitsPerKilobit / run.load_seconds;
        };
        up_kbps += kbps(c.bytes_up);
        down_kbps += kbps(c.bytes_down);
        const std::uint64_t ip_down = c.datagrams_down * kUdpIpv4HeaderBytes;
        const std::uint64_t ip_up = c.datagrams_up * kUdpIpv4HeaderBytes;
        const std::uint64_t content_down =
            c.bytes_down_entity_block + c.bytes_down_own_state + c.bytes_down_events;
        r.bandwidth_down_split_kbps["entity_block"] += kbps(c.bytes_down_entity_block);
        r.bandwidth_down_split_kbps["own_state"] += kbps(c.bytes_down_own_state);
        r.bandwidth_down_split_kbps["events"] += kbps(c.bytes_down_events);
        r.bandwidth_down_split_kbps["framing_crypto"] +=
            kbps(minus_or_zero(c.bytes_down, ip_down + content_down));
        r.bandwidth_down_split_kbps["ip_udp"] += kbps(ip_down);
        r.bandwidth_up_split_kbps["commands"] += kbps(c.bytes_up_commands);
        r.bandwidth_up_split_kbps["framing_crypto"] +=
            kbps(minus_or_zero(c.bytes_up, ip_up + c.bytes_up_commands));
        r.bandwidth_up_split_kbps["ip_udp"] += kbps(ip_up);
      }
    }
    if (c.failed) {
      ++r.clients_failed;
      ++failures[c.failure.empty() ? "no reason given" : c.failure];
    }
    packets_received += c.server_packets_received;
    packets_sent += c.server_sequence_max;
    r.link_up += c.link_up;
    r.link_down += c.link_down;
    r.events_delivered += c.events_delivered;
    r.events_lost += minus_or_zero(c.events_highest_seen, c.events_delivered);
    r.event_order_violations += c.events_out_of_order + c.events_duplicated;
    r.snapshot_continuity_violations += c.snapshots_skipped + c.snapshot_tick_regressions;
    acks.insert(acks.end(), c.input_ack_ms.begin(), c.input_ack_ms.end());
    movement.insert(movement.end(), c.movement_error.begin(), c.movement_error.end());
    for (const auto& [kind, samples] : c.rpc_ms)
      rpc[kind].insert(rpc[kind].end(), samples.begin(), samples.end());
    for (const auto& [code, count] : c.rpc_errors) {
      r.rpc_errors_by_code[code] += count;
      r.rpc_errors += count;
    }
  }
  if (timed_clients > 0) {
    r.tick_rate_achieved = tick_rates / timed_clients;
    r.snapshot_rate_achieved = snapshot_rates / timed_clients;
  }
  if (r.clients_connected > 0) {
    r.bandwidth_up_kbps = up_kbps / r.clients_connected;
    r.bandwidth_down_kbps = down_kbps / r.clients_connected;
    for (auto* split : {&r.bandwidth_down_split_kbps, &r.bandwidth_up_split_kbps}) {
      for (auto& [kind, kbps] : *split)
        kbps /= r.clients_connected;
    }
  }
  if (packets_sent > 0) {
    r.packet_loss_down =
        std::clamp(1 - static_cast<double>(packets_received) / static_cast<double>(packets_sent), 0.0, 1.0);
  }
  std::vector<std::pair<std::string, int>> sorted_failures(failures.begin(), failures.end());
  std::stable_sort(sorted_failures.begin(), sorted_failures.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  for (const auto& [reason, count] : sorted_failures)
    r.failures.push_back(fmt::format("{} ({})", reason, count));
  r.input_ack_ms = percentiles(std::move(acks));
  r.input_ack_p99_ticks = r.input_ack_ms.p99 * options.tick_rate / kMillisecondsPerSecond;
  r.network = describe(options.network);
  r.round_trip_ms = options.network.round_trip() * kMillisecondsPerSecond;
  r.input_ack_budget_ticks =
      options.budgets.input_ack_p99_ticks + r.round_trip_ms * options.tick_rate / kMillisecondsPerSecond;
  r.movement_error = percentiles(std::move(movement));
  for (auto& [kind, samples] : rpc)
    r.rpc_ms[kind] = percentiles(std::move(samples));

  r.server_metrics_ok = before.ok && after.ok;
  r.server_metrics_error = !before.ok  ? "before the load: " + before.error
                           : !after.ok ? "after the load: " + after.error
                                       : "";
  if (r.server_metrics_ok) {
    r.server_tick_ms = server_tick_ms_between(before, after);
    r.server_late_ticks = minus_or_zero(after.late_ticks, before.late_ticks);
    r.invariant_violations = minus_or_zero(after.invariant_violations, before.invariant_violations);
    const bool timed = before.taken != std::chrono::steady_clock::time_point{} && after.taken > before.taken;
    const double seconds =
        timed ? std::chrono::duration<double>(after.taken - before.taken).count() : run.load_seconds;
    if (seconds > 0)
      r.server_cpu_percent = std::max(0.0, after.cpu_seconds - before.cpu_seconds) / seconds * kPercent;
    if (r.clients_connected > 0) r.server_cpu_percent_per_player = r.server_cpu_percent / r.clients_connected;
  }

  if (run.load_seconds > 0)
    r.sim_cpu_percent = std::max(0.0, run.load_cpu_seconds) / run.load_seconds * kPercent;
  if (r.clients_connected > 0) r.sim_cpu_percent_per_client = r.sim_cpu_percent / r.clients_connected;

  // Churn: the matches ended during the run took their series with them; the runner read them as it went.
  r.churn = run.churn;
  if (r.churn.enabled && r.server_metrics_ok)
    r.invariant_violations = std::max(r.invariant_violations, r.churn.invariant_violations);

  const SimBudgets& b = options.budgets;
  auto miss = [&](std::string line) { r.budgets_missed.push_back(std::move(line)); };
  if (r.clients_connected == 0) {
    miss("no client connected");
  } else if (r.input_ack_ms.count == 0) {
    miss("input_ack_ms: no command was acknowledged");
  }
  if (r.input_ack_p99_ticks > r.input_ack_budget_ticks) {
    miss(r.round_trip_ms > 0 ? fmt::format("input_ack_p99_ticks {} > {} + round trip {} = {}",
                                           short_number(r.input_ack_p99_ticks), b.input_ack_p99_ticks,
                                           short_number(r.input_ack_budget_ticks - b.input_ack_p99_ticks),
                                           short_number(r.input_ack_budget_ticks))
                             : fmt::format("input_ack_p99_ticks {} > {}", short_number(r.input_ack_p99_ticks),
                                           b.input_ack_p99_ticks));
  }
  if (r.events_lost > b.events_lost) miss(fmt::format("events_lost {} > {}", r.events_lost, b.events_lost));
  if (r.event_order_violations > b.event_order_violations) {
    miss(fmt::format("event_order_violations {} > {}", r.event_order_violations, b.event_order_violations));
  }
  if (static_cast<std::uint64_t>(r.clients_failed) > b.clients_failed) {
    miss(fmt::format("clients_failed {} > {}", r.clients_failed, b.clients_failed));
  }
  for (const auto& [kind, p] : r.rpc_ms) {
    if (p.p99 > b.rpc_p99_ms)
      miss(fmt::format("rpc_ms.{} p99 {} > {}", kind, short_number(p.p99), b.rpc_p99_ms));
  }
  if (options.predict_fraction > 0 && r.clients_connected > 0 && r.movement_error.count == 0) {
    // A budget met by having nothing to judge is not met.
    miss(fmt::format("movement_error: no samples from {} predicting clients", r.clients_predicting));
  }
  if (r.movement_error.p99 > b.movement_error_p99) {
    miss(fmt::format("movement_error p99 {} > {}", short_number(r.movement_error.p99), b.movement_error_p99));
  }
  // A lossy link drops its share of snapshots on the way: the budget is a fraction of what it lets through.
  const double delivered_fraction = 1 - options.network.down.loss;
  if (r.snapshot_rate_achieved <
      b.snapshot_rate_min_fraction * delivered_fraction * r.snapshot_rate_expected) {
    miss(delivered_fraction < 1
             ? fmt::format("snapshot_rate_achieved {}/s < {} x (1 - {} loss) x {}/s",
                           short_number(r.snapshot_rate_achieved), b.snapshot_rate_min_fraction,
                           short_number(options.network.down.loss), short_number(r.snapshot_rate_expected))
             : fmt::format("snapshot_rate_achieved {}/s < {} x {}/s", short_number(r.snapshot_rate_achieved),
                           b.snapshot_rate_min_fraction, short_number(r.snapshot_rate_expected)));
  }
  r.bandwidth_up_budget_kbps = b.up_kbit_per_client;
  r.bandwidth_down_budget_kbps = b.down_kbit_per_client;
  // Egress is what hosting costs (issue 15): the mean per connected client, headers included.
  if (b.down_kbit_per_client > 0 && r.bandwidth_down_kbps > b.down_kbit_per_client) {
    miss(fmt::format("down_kbit_per_client {} > {}", short_number(r.bandwidth_down_kbps),
                     b.down_kbit_per_client));
  }
  if (b.up_kbit_per_client > 0 && r.bandwidth_up_kbps > b.up_kbit_per_client) {
    miss(fmt::format("up_kbit_per_client {} > {}", short_number(r.bandwidth_up_kbps), b.up_kbit_per_client));
  }
  if (!r.server_metrics_ok) {
    miss("server metrics unavailable (" + r.server_metrics_error + ")");
  } else {
    if (r.invariant_violations > b.invariant_violations) {
      miss(fmt::format("invariant_violations {} > {}", r.invariant_violations, b.invariant_violations));
    }
    double tick_limit =
        b.server_tick_p99_ms > 0 ? b.server_tick_p99_ms : kMillisecondsPerSecond / options.tick_rate;
    if (r.server_tick_ms.p99 > tick_limit) {
      miss(fmt::format("server_tick_ms p99 {} > {}", short_number(r.server_tick_ms.p99),
                       short_number(tick_limit)));
    }
  }
  churn_budget_misses(r.churn, miss);
  r.budgets_met = r.budgets_missed.empty();
  r.placement = std::string(to_string(options.placement));
  return r;
}

std::string format_report_table(const SimReport& r) {
  std::string out = fmt::format(
      "shiftcast-sim: {} match{} x {} clients on {}, {} Hz ticks, {} Hz snapshots, {:.1f} s of load\n",
      r.matches, r.matches == 1 ? "" : "es", r.clients_per_match, r.level, r.tick_rate, r.snapshot_rate,
      r.load_seconds);
  if (r.servers.size() > 1)
    out += fmt::format("{} servers, matches placed {}\n", r.servers.size(), r.placement);
  out += "\nclients\n";
  out += row("connected", fmt::format("{} / {}", r.clients_connected, r.clients));
  out += row("failed", std::to_string(r.clients_failed));
  for (const std::string& failure : r.failures)
    out += row("  reason", failure);
  out += row("connect time (s)", fmt::format("{:.2f}", r.connect_seconds));
  if (r.client_late_ticks > 0) {
    out += row("late client ticks", fmt::format("{} (the simulator was overloaded)", r.client_late_ticks));
  }
  out += row("simulator cpu (% of one core)", fmt::format("{:.1f}", r.sim_cpu_percent));
  out += row("  per client (%)", fmt::format("{:.4f}", r.sim_cpu_percent_per_client));
  out += "\nrates (per second, mean per client)\n";
  out += row("server ticks", fmt::format("{:.1f} ({} asked)", r.tick_rate_achieved, r.tick_rate));
  out += row("snapshots", fmt::format("{:.1f} ({} expected)", r.snapshot_rate_achieved,
                                      short_number(r.snapshot_rate_expected)));
  // Two appends, not `"\n" + header`: gcc 12 at -O3 flags that with a false -Wrestrict.
  out += '\n';
  out += percentile_header("latency (ms)");
  out += percentile_row("input to acknowledgement", r.input_ack_ms);
  out += row("input to ack p99 (ticks)", fmt::format("{:.2f}", r.input_ack_p99_ticks));
  if (r.round_trip_ms > 0) {
    out += row("  budget (ticks)",
               fmt::format("{} (p99 budget + round trip {} ms)", short_number(r.input_ack_budget_ticks),
                           short_number(r.round_trip_ms)));
  }
  out += '\n';
  out += percentile_header("rpc (ms)");
  for (const auto& [kind, p] : r.rpc_ms)
    out += percentile_row(kind, p);
  out += row("errors", std::to_string(r.rpc_errors));
  for (const auto& [code, count] : r.rpc_errors_by_code)
    out += row("  " + code, std::to_string(count));
  out += "\nbandwidth and loss (per client, headers included)\n";
  const auto with_budget = [](double kbps, double budget) {
    return budget > 0 ? fmt::format("{:.1f} (budget {})", kbps, short_number(budget))
                      : fmt::format("{:.1f}", kbps);
  };
  out += row("up (kbit/s)", with_budget(r.bandwidth_up_kbps, r.bandwidth_up_budget_kbps));
  for (const auto& [kind, kbps] : r.bandwidth_up_split_kbps)
    out += row("  " + kind, fmt::format("{:.1f}", kbps));
  out += row("down (kbit/s)", with_budget(r.bandwidth_down_kbps, r.bandwidth_down_budget_kbps));
  for (const auto& [kind, kbps] : r.bandwidth_down_split_kbps)
    out += row("  " + kind, fmt::format("{:.1f}", kbps));
  out += row("packet loss down", fmt::format("{:.3f} %", r.packet_loss_down * kPercent));
  if (r.network != "none") {
    out += "\nnetwork conditions (shots over TCP are not conditioned)\n";
    out += row("conditions", r.network);
    out += fmt::format("{:<{}}{:>12}{:>12}\n", "  link counters", kLabelWidth, "up", "down");
    auto link_row = [&](std::string_view label, std::uint64_t up, std::uint64_t down) {
      out += fmt::format("  {:<{}}{:>12}{:>12}\n", label, kLabelWidth - 2, up, down);
    };
    link_row("submitted", r.link_up.submitted, r.link_down.submitted);
    link_row("dropped (loss)", r.link_up.dropped_loss, r.link_down.dropped_loss);
    link_row("dropped (queue)", r.link_up.dropped_queue, r.link_down.dropped_queue);
    link_row("duplicated", r.link_up.duplicated, r.link_down.duplicated);
    link_row("reordered", r.link_up.reordered, r.link_down.reordered);
    link_row("delivered", r.link_up.delivered, r.link_down.delivered);
  }
  out += "\nreliability\n";
  out += row("events delivered", std::to_string(r.events_delivered));
  out += row("events lost", std::to_string(r.events_lost));
  out += row("event order violations", std::to_string(r.event_order_violations));
  out += row("snapshot continuity violations", std::to_string(r.snapshot_continuity_violations));
  out += '\n';
  out += percentile_header("movement (units)");
  out += row("clients predicting", fmt::format("{} of {}", r.clients_predicting, r.clients_connected));
  out += percentile_row("prediction error", r.movement_error);
  out += row("prediction error p99.9", fmt::format("{:.2f}", r.movement_error.p999));
  out += '\n';
  out += percentile_header("server");
  if (r.server_metrics_ok) {
    out += percentile_row("tick (ms)", r.server_tick_ms);
    out += row("late ticks", std::to_string(r.server_late_ticks));
    out += row("invariant violations", std::to_string(r.invariant_violations));
    out += row("cpu (% of one core)", fmt::format("{:.1f}", r.server_cpu_percent));
    out += row("cpu per player (%)", fmt::format("{:.3f}", r.server_cpu_percent_per_player));
  } else {
    out += row("metrics unavailable", r.server_metrics_error);
  }
  if (r.churn.enabled) {
    out += "\nchurn (clients above are sessions)\n";
    for (const ChurnField& f : churn_fields(r.churn))
      out += row(f.name, std::to_string(f.value));
  }
  if (r.servers.size() > 1) {
    out += '\n';
    out += format_servers_table(r);
  }
  out += r.budgets_met ? "\nbudgets: met\n" : "\nbudgets: MISSED\n";
  for (const std::string& line : r.budgets_missed)
    out += "  " + line + "\n";
  return out;
}

std::string format_progress_line(const SimProgress& p, const SimProgress& previous, double seconds) {
  auto rate = [&](std::uint64_t now, std::uint64_t before) {
    return seconds > 0 ? static_cast<double>(minus_or_zero(now, before)) / seconds : 0.0;
  };
  return fmt::format(
      "{} clients {}/{} failed {} snapshots/s {} commands/s {} events/s {} rpc/s {} ack p99 {:.1f} ms",
      p.elapsed > 0 ? fmt::format("t={:.0f}s", p.elapsed) : std::string("connecting"), p.connected, p.clients,
      p.failed, compact(rate(p.snapshots, previous.snapshots)), compact(rate(p.commands, previous.commands)),
      compact(rate(p.events, previous.events)), compact(rate(p.rpc_calls, previous.rpc_calls)),
      p.input_ack_p99_ms);
}

}  // namespace shiftcast
