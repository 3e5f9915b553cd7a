// make_report over several servers (sim_report.hpp): the total judged over every client against the
// servers' merged scrapes, each server judged over its own clients against its own scrapes, and the
// per-server section of the text table.
#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "client-sim/sim_report.hpp"

namespace shiftcast {
namespace {

// The server index of client i (all on server 0 when the run did not say: a churn run, one server).
std::uint32_t client_server(const SimRunResult& run, std::size_t i) {
  return i < run.client_servers.size() ? run.client_servers[i] : 0;
}

int matches_on(const SimOptions& options, const SimRunResult& run, std::uint32_t server) {
  if (run.match_servers.empty()) return server == 0 ? options.matches : 0;
  return static_cast<int>(std::count(run.match_servers.begin(), run.match_servers.end(), server));
}

// The run as far as one server's clients go: the same timing, only their stats.
SimRunResult part_of(const SimRunResult& run, std::uint32_t server) {
  SimRunResult part;
  part.load_seconds = run.load_seconds;
  part.load_cpu_seconds = run.load_cpu_seconds;
  part.connect_seconds = run.connect_seconds;
  part.late_client_ticks = run.late_client_ticks;
  for (std::size_t i = 0; i < run.clients.size(); ++i)
    if (client_server(run, i) == server) part.clients.push_back(run.clients[i]);
  return part;
}

SimServerRow row_of(const SimReport& judged, const SimServer& server, int matches,
                    const ServerMetrics& before, const ServerMetrics& after) {
  SimServerRow row;
  row.server = server.label();
  row.matches = matches;
  row.matches_seen = before.ok && after.ok ? after.matches - before.matches : -1;
  row.clients = judged.clients;
  row.clients_connected = judged.clients_connected;
  row.clients_failed = judged.clients_failed;
  row.input_ack_ms = judged.input_ack_ms;
  row.input_ack_p99_ticks = judged.input_ack_p99_ticks;
  row.events_lost = judged.events_lost;
  row.event_order_violations = judged.event_order_violations;
  row.snapshot_rate_achieved = judged.snapshot_rate_achieved;
  row.movement_error = judged.movement_error;
  row.server_metrics_ok = judged.server_metrics_ok;
  row.server_metrics_error = judged.server_metrics_error;
  row.server_tick_ms = judged.server_tick_ms;
  row.server_late_ticks = judged.server_late_ticks;
  row.invariant_violations = judged.invariant_violations;
  row.server_cpu_percent = judged.server_cpu_percent;
  row.judged = matches > 0;
  if (row.judged) row.budgets_missed = judged.budgets_missed;
  row.budgets_met = row.budgets_missed.empty();
  return row;
}

}  // namespace

SimReport make_report(const SimOptions& options, const SimRunResult& run, const ServerMetrics& before,
                      const ServerMetrics& after) {
  return make_report(options, run, std::vector<ServerMetrics>{before}, std::vector<ServerMetrics>{after});
}

SimReport make_report(const SimOptions& options, const SimRunResult& run,
                      const std::vector<ServerMetrics>& before, const std::vector<ServerMetrics>& after) {
  const std::vector<SimServer> servers = sim_servers(options);
  if (before.size() != servers.size() || after.size() != servers.size()) {
    ServerMetrics missing;
    missing.error =
        fmt::format("{} and {} scrapes for {} servers", before.size(), after.size(), servers.size());
    return judge_report(options, run, missing, missing);
  }
  if (servers.size() == 1) {
    SimReport r = judge_report(options, run, before[0], after[0]);
    r.servers.push_back(row_of(r, servers[0], options.matches, before[0], after[0]));
    r.servers.back().budgets_missed = r.budgets_missed;  // the run's own verdict, churn's included
    r.servers.back().budgets_met = r.budgets_met;
    return r;
  }

  SimReport total = judge_report(options, run, merge_server_metrics(before), merge_server_metrics(after));
  double cpu_percent = 0;
  for (std::uint32_t s = 0; s < servers.size(); ++s) {
    SimOptions alone = options;
    alone.matches = matches_on(options, run, s);
    const SimReport judged = judge_report(alone, part_of(run, s), before[s], after[s]);
    total.servers.push_back(row_of(judged, servers[s], alone.matches, before[s], after[s]));
    cpu_percent += judged.server_cpu_percent;
  }
  // Each server's CPU is over its own pair of scrapes; the total is their sum (in cores, as one server's).
  if (total.server_metrics_ok) {
    total.server_cpu_percent = cpu_percent;
    total.server_cpu_percent_per_player =
        total.clients_connected > 0 ? cpu_percent / total.clients_connected : 0;
  }
  for (const SimServerRow& row : total.servers) {
    for (const std::string& miss : row.budgets_missed)
      total.budgets_missed.push_back("server " + row.server + ": " + miss);
  }
  total.budgets_met = total.budgets_missed.empty();
  return total;
}

std::string format_servers_table(const SimReport& r) {
  constexpr int kServerWidth = 26;
  std::string out = fmt::format("{:<{}}{:>8}{:>9}{:>8}{:>10}{:>8}{:>11}{:>10}{:>8}  {}\n", "servers",
                                kServerWidth, "matches", "clients", "failed", "ack p99", "events",
                                "invariant", "tick p99", "cpu", "budgets");
  out += fmt::format("{:<{}}{:>8}{:>9}{:>8}{:>10}{:>8}{:>11}{:>10}{:>8}\n", "", kServerWidth, "", "connected",
                     "", "(ticks)", "lost", "violations", "(ms)", "(%)");
  const auto line = [&](const std::string& name, int matches, int connected, int clients, int failed,
                        double ack_ticks, std::uint64_t lost, std::uint64_t invariants, bool metrics,
                        double tick_p99, double cpu, std::string verdict) {
    out += fmt::format("  {:<{}}{:>8}{:>9}{:>8}{:>10.2f}{:>8}{:>11}{:>10}{:>8}  {}\n", name, kServerWidth - 2,
                       matches, fmt::format("{}/{}", connected, clients), failed, ack_ticks, lost,
                       metrics ? std::to_string(invariants) : "-",
                       metrics ? fmt::format("{:.2f}", tick_p99) : "-",
                       metrics ? fmt::format("{:.1f}", cpu) : "-", verdict);
  };
  for (const SimServerRow& s : r.servers) {
    const std::string verdict = !s.judged       ? "no match placed"
                                : s.budgets_met ? "met"
                                                : fmt::format("MISSED ({})", s.budgets_missed.size());
    line(s.server, s.matches, s.clients_connected, s.clients, s.clients_failed, s.input_ack_p99_ticks,
         s.events_lost, s.invariant_violations, s.server_metrics_ok, s.server_tick_ms.p99,
         s.server_cpu_percent, verdict);
  }
  line("total", r.matches, r.clients_connected, r.clients, r.clients_failed, r.input_ack_p99_ticks,
       r.events_lost, r.invariant_violations, r.server_metrics_ok, r.server_tick_ms.p99, r.server_cpu_percent,
       r.budgets_met ? "met" : "MISSED");
  return out;
}

}  // namespace shiftcast
