// SimClientStats: what one simulated client measured, filled by its thread (client-sim/sim_client) and
// merged into the run's report (client-sim/sim_report) after the run. Plain data; samples are raw so the
// report computes exact percentiles over all clients.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "client-sim/network_conditions.hpp"

namespace shiftcast {

struct SimClientStats {
  bool connected = false;
  bool failed = false;  // never connected, or lost its connection before the end (not a goodbye)
  std::string failure;  // why, for the report

  // Traffic, counting each datagram's bytes plus kUdpIpv4HeaderBytes.
  std::uint64_t datagrams_up = 0;
  std::uint64_t datagrams_down = 0;
  std::uint64_t bytes_up = 0;
  std::uint64_t bytes_down = 0;
  // What the bytes carried (issue 15's split), content only: the snapshot's entity block, the own
  // player's state and the contact events down; the input commands up. The rest of bytes_down/bytes_up
  // less the IP/UDP headers is framing and crypto (packet header, tag, FlatBuffers tables, frame header).
  std::uint64_t bytes_down_entity_block = 0;
  std::uint64_t bytes_down_own_state = 0;
  std::uint64_t bytes_down_events = 0;
  std::uint64_t bytes_up_commands = 0;        // counted when sent to the link (before any --net loss)
  std::uint64_t server_sequence_max = 0;      // the newest server packet sequence seen
  std::uint64_t server_packets_received = 0;  // authentic server packets (for loss: 1 - received / max)

  // Snapshots: continuity.
  std::uint64_t snapshots = 0;
  std::uint64_t snapshots_skipped = 0;          // baseline not held (ClientSession counts it)
  std::uint64_t snapshot_tick_regressions = 0;  // a newer packet with an older snapshot tick applied
  std::uint64_t first_snapshot_tick = 0;
  std::uint64_t last_snapshot_tick = 0;
  double connected_seconds = 0;

  // Reliable contact events: delivered in order by the session; checked again here.
  std::uint64_t events_delivered = 0;
  std::uint64_t events_highest_seen = 0;  // the highest sequence the server ever sent us
  std::uint64_t events_out_of_order = 0;  // a delivered sequence that was not the previous + 1
  std::uint64_t events_duplicated = 0;    // a delivered sequence delivered before

  // Input to acknowledgement, milliseconds, one sample per command the server acknowledged.
  std::vector<double> input_ack_ms;
  std::uint64_t commands_sent = 0;

  // RPC latency by kind ("raycast", "raycast_rewound", ...), milliseconds; refusals by ErrorCode name.
  std::map<std::string, std::vector<double>> rpc_ms;
  std::map<std::string, std::uint64_t> rpc_errors;

  // Own movement: distance between the client's prediction and the server's position, one sample per
  // snapshot that acknowledged a command; none from a client outside the prediction sample
  // (SimOptions::predict_fraction), which steers by the server's state instead.
  bool predicting = true;
  std::vector<double> movement_error;

  // Network conditions (--net): this client's two links, zeros when the run has none.
  LinkCounters link_up;
  LinkCounters link_down;
};

inline constexpr std::uint64_t kUdpIpv4HeaderBytes = 28;  // IPv4 (20) + UDP (8), no options

}  // namespace shiftcast
