// Hand-built runs and server scrapes for the report tests (sim_report_test, report_output_test): every
// figure make_report computes from them is worked out by hand in those tests.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "client-sim/sim_report.hpp"

namespace shiftcast::report_fixtures {

inline SimOptions report_options() {
  SimOptions o;
  o.matches = 2;
  o.clients = 2;
  o.tick_rate = 64;
  o.snapshot_rate = 32;
  o.level = "arena";
  return o;  // default budgets: 3 ticks, 0 lost, 0 failed, 0 violations, 50 ms, 32 units, 0.9, a tick
}

// Connected for the whole 10 s load: 64 ticks/s, 32 snapshots/s, 80 / 320 kbit/s, 1 % loss.
inline SimClientStats healthy_client() {
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

inline SimRunResult troubled_run() {
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

inline ServerMetrics metrics(double cpu, std::uint64_t violations, std::uint64_t late,
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
inline const ServerMetrics kBefore = metrics(100, 1, 2, {1, 2, 2, 2});
inline const ServerMetrics kAfter = metrics(105, 1, 7, {3, 10, 12, 12});

}  // namespace shiftcast::report_fixtures
