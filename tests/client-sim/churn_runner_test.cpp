// run_churn (client-sim/churn_runner.hpp) against the real shiftcast-server on loopback: a few seconds of
// churn with short lifetimes, so every kind of coming and going happens. Oracles: the server's own
// counters (/metrics: every silent drop timed out on its side, no token was ever refused as replayed,
// never-reading subscribers cut off), ListMatches (every match the run created is gone after it), and
// each session's own checks (events in order, none lost while connected, snapshot continuity).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "client-sim/churn_report.hpp"
#include "client-sim/churn_runner.hpp"
#include "protocol/envelope.hpp"
#include "tests/support/rpc_test_client.hpp"
#include "tests/support/server_process.hpp"

namespace shiftcast {
namespace {

constexpr int kMatches = 2;
constexpr int kClientsPerMatch = 3;
constexpr double kChurnSeconds = 10;
// The server times silent players out after this (its flag), and a write its reader does not take
// (a never-reading subscriber's) after this.
constexpr int kServerConnectionTimeoutS = 1;
constexpr int kServerWriteTimeoutS = 1;
// A subscription is cut once this much waits unwritten on its connection (the server's default is 4 MiB,
// minutes of a never-reader's backlog at this test's contact rate; a reader never comes near it here).
constexpr int kServerSubscriberPendingBytes = 64 * 1024;
// Bounded waits for the server's counters to catch up with what the clients did (real sockets).
constexpr auto kCounterDeadline = std::chrono::seconds(8);

double metric(std::uint16_t http_port, const std::string& series) {
  return metric_value(http_get(http_port, "/metrics"), series);
}

std::size_t listed_matches(std::uint16_t rpc_port) {
  RpcTestClient rpc(rpc_port);
  flatbuffers::FlatBufferBuilder fbb;
  finish_envelope(fbb, wire::Message::ListMatches,
                  wire::CreateListMatches(fbb, fbb.CreateString(dev_service_key())).Union(), 1);
  if (!rpc.send(fbb)) return 0;
  const auto reply = rpc.receive();
  if (!reply) return 0;
  const EnvelopeView v = verify_envelope(*reply, kMaxRpcFrameBytes);
  const wire::ListMatchesReply* r = v.envelope ? v.envelope->message_as_ListMatchesReply() : nullptr;
  return r != nullptr && r->matches() != nullptr ? r->matches()->size() : 0;
}

SimOptions churn_options(const ServerProcess& server) {
  SimOptions o;
  o.host = "127.0.0.1";
  o.rpc_port = server.ports().rpc;
  o.http_port = server.ports().http;
  o.admin_key = dev_admin_key();
  o.matches = kMatches;
  o.clients = kClientsPerMatch;
  o.duration = kChurnSeconds;
  o.connect_timeout = 5;
  o.level = "arena";
  o.level_file = std::string(SHIFTCAST_SOURCE_DIR) + "/configs/levels/arena.map";
  o.threads = 2;
  o.seed = 11;
  ChurnSettings& c = o.churn;
  c.enabled = true;
  c.ramp_s = 0.5;
  c.lifetime_min_s = 1.5;
  c.lifetime_max_s = 3;
  c.goodbye_fraction = 0.5;
  c.reconnect_delay_min_s = 0.2;
  c.reconnect_delay_max_s = 0.6;
  c.match_lifetime_min_s = 4;
  c.match_lifetime_max_s = 6;
  c.match_max_players = 16;
  c.rpc_visits_per_second = 3;
  c.rpc_abandon_fraction = 0.4;
  c.subscribers_per_second = 1.5;
  c.subscriber_lifetime_min_s = 4;
  c.subscriber_lifetime_max_s = 5;
  c.subscriber_never_read_fraction = 0.5;
  c.subscriber_never_read_subscriptions = 64;
  return o;
}

TEST(ChurnRunner, PlayersMatchesAndSubscribersComeAndGoAgainstTheRealServer) {
  ServerProcess server;
  const std::filesystem::path dir = std::filesystem::path(SHIFTCAST_BINARY_DIR) / "test-tmp" / "churn_runner";
  ASSERT_EQ(
      server.start(test_server_config(), dir,
                   "--connection-timeout-s " + std::to_string(kServerConnectionTimeoutS) +
                       " --rpc-write-timeout-s " + std::to_string(kServerWriteTimeoutS) +
                       " --subscriber-max-pending-bytes " + std::to_string(kServerSubscriberPendingBytes)),
      "");
  const std::uint16_t http = server.ports().http;
  const std::size_t initial_matches = listed_matches(server.ports().rpc);
  const SimOptions o = churn_options(server);
  SimLevel level;
  ASSERT_EQ(load_sim_level(o, level), "");

  const SimRunResult r = run_churn(o, level, {});
  ASSERT_EQ(r.error, "");
  const ChurnCounters& c = r.churn;
  EXPECT_TRUE(c.enabled);
  std::string counters;
  for (const ChurnField& f : churn_fields(c))
    counters += std::string(f.name) + " " + std::to_string(f.value) + "\n";
  SCOPED_TRACE(counters);

  // Players: every kind of end happened, and none failed.
  EXPECT_EQ(c.sessions, r.clients.size());
  EXPECT_GT(c.reconnects, 0u);
  EXPECT_GT(c.silent_drops, 0u);
  EXPECT_GT(c.goodbyes, 0u);
  EXPECT_GT(c.match_ended, 0u) << "the plan ends matches under their players";
  EXPECT_EQ(c.sessions_failed, 0u);
  EXPECT_EQ(c.token_reuses, 0u);
  EXPECT_EQ(c.admin_errors, 0u);
  EXPECT_EQ(c.sessions, c.reconnects + std::uint64_t(kMatches * kClientsPerMatch));
  std::uint64_t connected = 0;
  for (const SimClientStats& s : r.clients) {
    EXPECT_FALSE(s.failed) << s.failure;
    if (!s.connected) continue;
    ++connected;
    EXPECT_EQ(s.events_out_of_order, 0u);
    EXPECT_EQ(s.events_duplicated, 0u);
    EXPECT_EQ(s.events_highest_seen, s.events_delivered) << "an event lost while connected";
    EXPECT_EQ(s.snapshot_tick_regressions, 0u);
    EXPECT_EQ(s.snapshots_skipped, 0u);
  }
  EXPECT_EQ(connected, c.sessions_connected);
  EXPECT_GE(connected + c.match_ended + c.at_run_end_connecting, c.sessions);

  // Matches: replaced all along; every one the run created is gone.
  EXPECT_GT(c.matches_created, std::uint64_t(kMatches));
  EXPECT_EQ(c.matches_ended, c.matches_created);
  EXPECT_EQ(c.matches_alive_max, kMatches + 1);
  EXPECT_EQ(listed_matches(server.ports().rpc), initial_matches);
  EXPECT_EQ(c.invariant_violations, 0u);

  // Passing RPC clients.
  EXPECT_GT(c.rpc_visits, 0u);
  EXPECT_EQ(c.rpc_visit_queries, 3 * c.rpc_visits);
  EXPECT_EQ(c.rpc_visit_failures, 0u);
  EXPECT_GT(c.rpc_abandoned, 0u);

  // Subscribers: the reading ones got every event in order; the never-reading ones were all cut off
  // (or their match ended first), none was still subscribed at its end.
  EXPECT_GT(c.subscribers_reading, 0u);
  EXPECT_GT(c.subscriber_pushes, 0u);
  EXPECT_EQ(c.subscriber_event_gaps, 0u);
  EXPECT_EQ(c.subscribers_refused, 0u);
  EXPECT_GT(c.subscribers_never_reading, 0u);
  EXPECT_EQ(c.subscribers_never_cut, 0u);
  EXPECT_GT(c.subscribers_cut_slow + c.subscribers_cut_timeout + c.subscribers_cut_other, 0u);

  // The server's side: every fresh token accepted (none replayed), every silent drop timed out there,
  // and the cut subscribers counted by reason.
  EXPECT_EQ(metric(http, "shiftcast_rejected_total{channel=\"udp\",reason=\"token_replayed\"}"), 0);
  // A silently dropped player is timed out by the server unless its match ended first (then it leaves
  // with MatchEnded): at least one was, and no player we did not drop ever was.
  const auto deadline = std::chrono::steady_clock::now() + kCounterDeadline;
  double timeouts = 0;
  do {
    timeouts = metric(http, "shiftcast_rejected_total{channel=\"udp\",reason=\"timeout\"}");
  } while (timeouts < 1 && std::chrono::steady_clock::now() < deadline);
  EXPECT_GE(timeouts, 1);
  EXPECT_LE(timeouts, double(c.silent_drops));
  const std::string page = http_get(http, "/metrics");
  EXPECT_GT(metric_value(page, "shiftcast_rejected_total{channel=\"rpc\",reason=\"slow_consumer\"}") +
                metric_value(page, "shiftcast_rejected_total{channel=\"rpc\",reason=\"timeout\"}"),
            0)
      << page;
  EXPECT_EQ(server.stop(), 0);
}

}  // namespace
}  // namespace shiftcast
