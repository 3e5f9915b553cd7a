// SimReport: a run's outcome, judged against the profile's budgets: what the README shows and CI
// asserts. Built from the clients' raw samples (exact percentiles) and two scrapes of the server's
// /metrics (before and after the load: tick time histogram deltas, CPU, invariant violations).
//
//   ServerMetrics before = scrape_server_metrics(options);   // before the load
//   ServerMetrics after;
//   SimRunResult result = run_simulation(options, level, progress,
//                                        [&] { after = scrape_server_metrics(options); });
//   SimReport report = make_report(options, result, before, after);
//   std::fputs(format_report_table(report).c_str(), stdout);
//   write_file(options.json_path, report_json(report));
//   return report.budgets_met ? kSimExitOk : kSimExitBudgetMissed;
//
// Several servers (SimOptions::servers): one scrape of each before and after, in sim_servers order;
//   SimReport report = make_report(options, result, befores, afters);
// judges the whole run (the fields below, the totals: tick histograms and counters summed over the
// servers, CPU the sum of theirs) and each server alone (`servers`, one SimServerRow each: its clients
// against its own /metrics), and the run misses its budgets when the total or any server misses one
// (each server's misses are also in budgets_missed, prefixed "server HOST:RPC:HTTP: ").
//
// A match's series leave /metrics when the match ends, so the "after" scrape must happen while the
// run's matches still exist (run_simulation's before_end_matches hook); make_report clamps any negative
// delta to 0 so a late scrape gives low figures, never wrapped ones.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "client-sim/churn_counters.hpp"
#include "client-sim/server_metrics.hpp"
#include "client-sim/sim_options.hpp"
#include "client-sim/sim_runner.hpp"

namespace shiftcast {

struct Percentiles {
  double p50 = 0, p95 = 0, p99 = 0, max = 0;
  double p999 = 0;  // p99.9: reported for the movement (prediction) error, where the tail matters
  std::uint64_t count = 0;
};
// Nearest rank (the smallest sample with at least p% of the samples at or below it); zeros when empty.
Percentiles percentiles(std::vector<double> samples);

// One server's part of a run, judged alone against the same budgets (SimReport's fields of the same name,
// over the clients of the matches it hosted and its own /metrics).
struct SimServerRow {
  std::string server;  // HOST:RPC_PORT:HTTP_PORT
  int matches = 0;     // this run created on it
  // This run's matches as the server's own /metrics counts them: match series at the second scrape less
  // at the first (-1 when a scrape failed).
  int matches_seen = -1;
  int clients = 0;
  int clients_connected = 0;
  int clients_failed = 0;
  Percentiles input_ack_ms;
  double input_ack_p99_ticks = 0;
  std::uint64_t events_lost = 0;
  std::uint64_t event_order_violations = 0;
  double snapshot_rate_achieved = 0;
  Percentiles movement_error;
  bool server_metrics_ok = false;
  std::string server_metrics_error;
  Percentiles server_tick_ms;
  std::uint64_t server_late_ticks = 0;
  std::uint64_t invariant_violations = 0;
  double server_cpu_percent = 0;
  bool judged = false;  // false: placement gave it no match, so no client budget applies to it
  std::vector<std::string> budgets_missed;
  bool budgets_met = false;
};

struct SimReport {
  // Everything the JSON has; see report_json for the field names.
  int matches = 0;  // the run asked for
  int clients_per_match = 0;
  int tick_rate = 0;
  int snapshot_rate = 0;
  double snapshot_rate_expected = 0;  // what the server really sends (effective_snapshot_rate)
  std::string level;

  int clients = 0;
  int clients_connected = 0;  // completed the handshake at some point (a later drop counts as failed too)
  int clients_failed = 0;
  std::vector<std::string> failures;  // distinct reasons with counts: "timed out (3)"
  double connect_seconds = 0;
  double load_seconds = 0;
  std::uint64_t client_late_ticks = 0;  // the simulator fell behind: its latencies are suspect
  double tick_rate_achieved = 0;        // server ticks per second seen in snapshots, mean over clients
  double snapshot_rate_achieved = 0;    // snapshots per second, mean over clients
  Percentiles input_ack_ms;
  double input_ack_p99_ticks = 0;
  // Network conditions (--net): their text ("none"), the round trip they add (both latencies and both
  // jitters' worst case), the input-to-ack budget that round trip scales (budget + round trip in ticks)
  // and the links' counters summed over the clients. The snapshot-rate budget is likewise a fraction of
  // what the down link's loss lets through.
  std::string network = "none";
  double round_trip_ms = 0;
  double input_ack_budget_ticks = 0;
  LinkCounters link_up;
  LinkCounters link_down;
  std::map<std::string, Percentiles> rpc_ms;
  std::uint64_t rpc_errors = 0;
  std::map<std::string, std::uint64_t> rpc_errors_by_code;
  double bandwidth_up_kbps = 0;  // per client, mean
  double bandwidth_down_kbps = 0;
  double bandwidth_up_budget_kbps = 0;  // the profile's up_kbit_per_client (0: none)
  double bandwidth_down_budget_kbps = 0;
  // The same, split by what the bytes carried (per client, mean): "entity_block", "own_state",
  // "events", "framing_crypto", "ip_udp" down; "commands", "framing_crypto", "ip_udp" up.
  std::map<std::string, double> bandwidth_down_split_kbps;
  std::map<std::string, double> bandwidth_up_split_kbps;
  double packet_loss_down = 0;  // fraction of server packets never received
  std::uint64_t events_delivered = 0;
  std::uint64_t events_lost = 0;
  std::uint64_t event_order_violations = 0;  // out of order or duplicated deliveries
  std::uint64_t snapshot_continuity_violations = 0;
  // Over the connected clients that predicted (SimOptions::predict_fraction; all of them by default).
  int clients_predicting = 0;
  Percentiles movement_error;
  bool server_metrics_ok = false;  // both scrapes read; the server figures below are zeros otherwise
  std::string server_metrics_error;
  Percentiles server_tick_ms;  // from the histogram delta, linear within a bucket; max: its upper bound
  std::uint64_t server_late_ticks = 0;
  std::uint64_t invariant_violations = 0;
  double server_cpu_percent = 0;  // of one core, between the two scrapes
  double server_cpu_percent_per_player = 0;
  // The simulator's own CPU over the load (all its client threads), of one core, and per connected client:
  // on a machine the two share, what the load tester leaves the server.
  double sim_cpu_percent = 0;
  double sim_cpu_percent_per_client = 0;
  std::vector<std::string> budgets_missed;  // "input_ack_p99_ticks 4.1 > 3", ...
  bool budgets_met = false;
  // Churn runs: what came and went (client-sim/churn_report.hpp); `clients` are then sessions, and
  // invariant_violations count every match the run created, ended ones too.
  ChurnCounters churn;
  // Per server, in sim_servers(options) order (one row for a one-server run), and how matches were placed.
  std::vector<SimServerRow> servers;
  std::string placement = "round-robin";
};

// One server's scrapes (a one-server run): the report and its single row in `servers`.
SimReport make_report(const SimOptions& options, const SimRunResult& run, const ServerMetrics& before,
                      const ServerMetrics& after);
// One scrape per server (sim_servers(options) order) before and after: totals and a row per server.
SimReport make_report(const SimOptions& options, const SimRunResult& run,
                      const std::vector<ServerMetrics>& before, const std::vector<ServerMetrics>& after);
// The judgement itself, of `run`'s clients against one pair of scrapes, without rows (make_report's part).
SimReport judge_report(const SimOptions& options, const SimRunResult& run, const ServerMetrics& before,
                       const ServerMetrics& after);
// The text table's per-server section (format_report_table prints it with more than one server).
std::string format_servers_table(const SimReport& report);
// The server's tick time between two scrapes, in milliseconds (what make_report reports for the whole
// load; the report page's timeline takes it second by second). Zeros when either scrape failed.
Percentiles server_tick_ms_between(const ServerMetrics& before, const ServerMetrics& after);
std::string format_report_table(const SimReport& report);
// One line, no newline: "t=12s clients 512/512 failed 0 snapshots/s 16k commands/s 32k events/s 250 rpc/s
// 1.0k ack p99 18.2 ms" ("connecting" instead of t= while elapsed is 0). Counts in SimProgress are totals
// since the start; rates are their change since `previous` over `seconds`, the wall time between the two.
std::string format_progress_line(const SimProgress& progress, const SimProgress& previous, double seconds);
// Keys: clients, clients_connected, clients_failed, events_lost, input_ack_ms {p50,p95,p99,max},
// movement_error {p50,p95,p99,p999,max},
// rpc_ms {kind: {p50,p95,p99,max}}, bandwidth_kbps {up, down}, bandwidth_split_kbps {down: {kind: kbps},
// up: {kind: kbps}}, server_tick_ms {p50,p95,p99,max}, and the
// rest of SimReport's fields under their own names; budgets_met and budgets_missed; then placement and
// servers [{server, matches, matches_seen, clients, ..., judged, budgets_met, budgets_missed}], one object
// per SimServerRow under its fields' names. Non-finite numbers are written as null.
std::string report_json(const SimReport& report);

}  // namespace shiftcast
