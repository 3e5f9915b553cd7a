// ChurnCounters: every outcome of a churn run (client-sim/churn_runner.hpp), counted for the report
// (client-sim/sim_report) and judged by scripts/soak.sh. Plain data. A session is one connection of one
// client slot, from its fresh token to its end; its own checks (events, snapshots) are in the run's
// per-session SimClientStats.
#pragma once

#include <cstdint>

namespace shiftcast {

struct ChurnCounters {
  bool enabled = false;

  // Players.
  std::uint64_t sessions = 0;            // sessions started (a fresh token each)
  std::uint64_t sessions_connected = 0;  // of them, completed the handshake
  std::uint64_t reconnects = 0;       // sessions of a slot after its first (a fresh token, a new client id)
  std::uint64_t silent_drops = 0;     // left by closing the socket without a word (the server times out)
  std::uint64_t goodbyes = 0;         // left with a goodbye before the run's end
  std::uint64_t match_ended = 0;      // ended because their match was ended (then reconnected elsewhere)
  std::uint64_t sessions_failed = 0;  // ended any other way (denied, timed out): counted as failed
  std::uint64_t at_run_end = 0;       // still playing at the end (a goodbye then)
  std::uint64_t at_run_end_connecting = 0;  // of them, still in their handshake (not a failure)
  std::uint64_t token_reuses = 0;           // a client id handed out twice for one match (must stay 0)

  // Matches.
  std::uint64_t matches_created = 0;
  std::uint64_t matches_ended = 0;
  std::uint64_t admin_errors = 0;  // CreateMatch, EndMatch or IssueConnectToken refused or unanswered
  int matches_alive_max = 0;
  // Invariant violations over every match the run created, ended or not: read per match from /metrics
  // every few seconds and just before each EndMatch (a match's series leave /metrics with it).
  std::uint64_t invariant_violations = 0;

  // Passing RPC clients.
  std::uint64_t rpc_visits = 0;          // connections that made a few queries and closed
  std::uint64_t rpc_visit_queries = 0;   // queries they had answered
  std::uint64_t rpc_visit_failures = 0;  // a visit that could not connect or lost an answer
  std::uint64_t rpc_abandoned = 0;       // connections that sent half a frame and vanished

  // Contact subscribers.
  std::uint64_t subscribers = 0;
  std::uint64_t subscribers_reading = 0;  // of them, read everything
  std::uint64_t subscribers_never_reading = 0;
  std::uint64_t subscriber_pushes = 0;        // ContactPush frames the reading ones received
  std::uint64_t subscriber_event_gaps = 0;    // a pushed event whose sequence was not the previous + 1
  std::uint64_t subscribers_left = 0;         // reading ones that stayed their lifetime and closed
  std::uint64_t subscribers_cut_slow = 0;     // cut off with RpcError SlowConsumer
  std::uint64_t subscribers_cut_timeout = 0;  // cut off with RpcError Timeout (a write not taken)
  std::uint64_t subscribers_cut_other = 0;    // closed by the server without one of those
  std::uint64_t subscribers_match_ended = 0;  // their subscription ended with its match (RpcError MatchEnded)
  std::uint64_t subscribers_never_cut = 0;    // never-reading ones still open at their end: we closed them
  std::uint64_t subscribers_refused = 0;      // the subscription itself refused or never answered
  std::uint64_t subscribers_at_run_end = 0;   // still within their lifetime when the run ended
};

}  // namespace shiftcast
