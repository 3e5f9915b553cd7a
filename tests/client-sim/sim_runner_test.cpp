// run_simulation against the real shiftcast-server on loopback: matches created and ended over the admin
// RPC, every client connected, playing and checked. Oracles: the server's own counters (/metrics: every
// datagram the clients say they sent arrived; the matches exist while the hook runs) and ListMatches
// after the run.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "client-sim/sim_runner.hpp"
#include "protocol/envelope.hpp"
#include "tests/support/rpc_test_client.hpp"
#include "tests/support/server_process.hpp"

namespace shiftcast {
namespace {

constexpr int kMatches = 2;
constexpr int kClientsPerMatch = 4;
constexpr double kLoadSeconds = 3;
constexpr int kSnapshotRate = 32;
// Loopback on a shared machine: a client may miss a few snapshot ticks, not a tenth of them.
constexpr double kMinSnapshotFraction = 0.8;
// Own movement against the server's: bots bump into each other now and then, and the profile's budget
// (p99 of 32 units, a player's width) holds.
constexpr double kMovementErrorP99 = 32;

std::uint64_t udp_counter(std::uint16_t http_port, const std::string& series) {
  return std::uint64_t(metric_value(http_get(http_port, "/metrics"), series));
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

SimOptions run_options(const ServerProcess& server) {
  SimOptions o;
  o.host = "127.0.0.1";
  o.rpc_port = server.ports().rpc;
  o.http_port = server.ports().http;
  o.admin_key = dev_admin_key();
  o.matches = kMatches;
  o.clients = kClientsPerMatch;
  o.duration = kLoadSeconds;
  o.connect_timeout = 10;
  o.tick_rate = 64;
  o.snapshot_rate = kSnapshotRate;
  o.level = "arena";
  o.level_file = std::string(SHIFTCAST_SOURCE_DIR) + "/configs/levels/arena.map";
  o.threads = 2;
  o.behaviour.fire_per_second = 4;
  o.behaviour.rewound_fraction = 0.5f;
  return o;
}

TEST(SimRunner, ClientsConnectPlayAndLeaveAgainstTheRealServer) {
  ServerProcess server;
  const std::filesystem::path dir = std::filesystem::path(SHIFTCAST_BINARY_DIR) / "test-tmp" / "sim_runner";
  ASSERT_EQ(server.start(test_server_config(), dir), "");
  const std::size_t initial_matches = listed_matches(server.ports().rpc);
  ASSERT_GE(initial_matches, 1u);

  const SimOptions o = run_options(server);
  SimLevel level;
  ASSERT_EQ(load_sim_level(o, level), "");

  int progress_lines = 0;
  std::size_t matches_in_hook = 0;
  const SimRunResult r = run_simulation(
      o, level,
      [&](const SimProgress& p) {
        ++progress_lines;
        EXPECT_EQ(p.clients, kMatches * kClientsPerMatch);
      },
      [&] { matches_in_hook = listed_matches(server.ports().rpc); });
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.match_ids.size(), std::size_t(kMatches));
  EXPECT_EQ(matches_in_hook, initial_matches + kMatches);
  EXPECT_EQ(listed_matches(server.ports().rpc), initial_matches);  // ended
  EXPECT_GE(progress_lines, int(kLoadSeconds) - 1);
  EXPECT_GE(r.load_seconds, kLoadSeconds);
  ASSERT_EQ(r.clients.size(), std::size_t(kMatches * kClientsPerMatch));

  std::uint64_t up = 0;
  std::uint64_t up_bytes = 0;
  std::uint64_t shots = 0;
  std::vector<double> movement;
  for (const SimClientStats& c : r.clients) {
    EXPECT_TRUE(c.connected);
    EXPECT_FALSE(c.failed) << c.failure;
    EXPECT_GE(double(c.snapshots), kMinSnapshotFraction * kSnapshotRate * kLoadSeconds);
    EXPECT_EQ(c.snapshot_tick_regressions, 0u);
    EXPECT_EQ(c.events_out_of_order, 0u);
    EXPECT_EQ(c.events_duplicated, 0u);
    EXPECT_EQ(c.events_highest_seen, c.events_delivered);  // nothing held behind a hole
    EXPECT_GE(c.server_sequence_max, c.server_packets_received);
    EXPECT_GT(c.commands_sent, 0u);
    EXPECT_FALSE(c.input_ack_ms.empty());
    EXPECT_FALSE(c.movement_error.empty());
    movement.insert(movement.end(), c.movement_error.begin(), c.movement_error.end());
    EXPECT_TRUE(c.rpc_errors.empty());
    for (const auto& [kind, samples] : c.rpc_ms)
      if (kind.starts_with("raycast")) shots += samples.size();
    EXPECT_EQ(c.rpc_ms.at("issue_connect_token").size(), 1u);
    up += c.datagrams_up;
    up_bytes += c.bytes_up - c.datagrams_up * kUdpIpv4HeaderBytes;
  }
  EXPECT_GT(shots, 0u);
  std::sort(movement.begin(), movement.end());
  ASSERT_FALSE(movement.empty());
  EXPECT_LE(movement[movement.size() * 99 / 100], kMovementErrorP99);
  EXPECT_GT(r.clients[0].events_delivered + r.clients[1].events_delivered + r.clients[4].events_delivered,
            0u);

  // Every datagram the clients sent reached the server (loopback): its own count agrees, once the last
  // goodbyes are read (bounded: a few scrapes over real sockets).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  std::uint64_t in = 0;
  do {
    in = udp_counter(server.ports().http, "shiftcast_udp_packets_total{direction=\"in\"}");
  } while (in < up && std::chrono::steady_clock::now() < deadline);
  EXPECT_EQ(in, up);
  EXPECT_EQ(udp_counter(server.ports().http, "shiftcast_udp_bytes_total{direction=\"in\"}"), up_bytes);
  EXPECT_EQ(server.stop(), 0);
}

// A quarter of the clients predict: clients 0 and 4 of 8 (ceil rule: one in each match), and only they give
// prediction samples; the others play as well (their commands acknowledged, their shots answered).
TEST(SimRunner, OnlyTheClientsInThePredictionSamplePredict) {
  ServerProcess server;
  const std::filesystem::path dir =
      std::filesystem::path(SHIFTCAST_BINARY_DIR) / "test-tmp" / "sim_runner_sample";
  ASSERT_EQ(server.start(test_server_config(), dir), "");
  SimOptions o = run_options(server);
  o.predict_fraction = 0.25;
  SimLevel level;
  ASSERT_EQ(load_sim_level(o, level), "");
  const SimRunResult r = run_simulation(o, level, {});
  ASSERT_EQ(r.error, "");
  ASSERT_EQ(r.clients.size(), std::size_t(kMatches * kClientsPerMatch));
  for (std::size_t k = 0; k < r.clients.size(); ++k) {
    const SimClientStats& c = r.clients[k];
    const bool sampled = k % 4 == 0;
    EXPECT_EQ(c.predicting, sampled) << "client " << k;
    EXPECT_EQ(c.movement_error.empty(), !sampled) << "client " << k;
    EXPECT_TRUE(c.connected);
    EXPECT_FALSE(c.failed) << c.failure;
    EXPECT_GT(c.commands_sent, 0u);
    EXPECT_FALSE(c.input_ack_ms.empty());
  }
  EXPECT_EQ(server.stop(), 0);
}

}  // namespace
}  // namespace shiftcast
