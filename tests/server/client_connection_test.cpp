// The UDP match channel end to end, in memory: a ClientSession and a ClientConnection with the server's
// handshake functions between them, over a link that loses, duplicates and reorders datagrams with a
// fixed seed. Oracles: the world the test steps (snapshots), the list of contacts it queued (events),
// the arrival log of the link (which commands the server can have received), and the clock it passes.
#include "server/client_connection.hpp"
#include "protocol/contact_event_codec.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>

#include "protocol/entity_block.hpp"
#include "tests/support/channel_harness.hpp"
#include "tests/support/seeded_random.hpp"

namespace shiftcast {
namespace {

using namespace channel_test;

// A small world the test steps: entity 1 is the client's player; a few entities move each tick, one is
// replaced now and then. Float poses are kept to check the half-quantum bound of what the client sees.
struct TestWorld {
  struct Body {
    float x, y, z, yaw;
  };
  std::mt19937 rng;
  std::map<std::uint32_t, Body> bodies;
  std::uint32_t next_id = 1;

  explicit TestWorld(std::uint32_t seed, int count) : rng(seed) {
    for (int i = 0; i < count; ++i)
      spawn();
  }
  void spawn() {
    UniformReal<float> c(-2000, 2000), yaw(-3, 3);
    bodies[next_id++] = {c(rng), c(rng), c(rng) / 10, yaw(rng)};
  }
  void step(std::uint64_t tick) {
    UniformReal<float> d(-12, 12);
    UniformInt<std::uint32_t> pick(1, next_id - 1);
    for (int i = 0; i < 6; ++i) {
      if (auto it = bodies.find(pick(rng)); it != bodies.end()) {
        it->second.x += d(rng);
        it->second.y += d(rng);
        it->second.yaw += d(rng) / 24;
      }
    }
    if (tick % 40 == 0) {
      if (auto it = bodies.find(pick(rng)); it != bodies.end() && it->first != kOwnEntity) bodies.erase(it);
      spawn();
    }
  }
  SnapshotState states() const {
    SnapshotState out;
    for (const auto& [id, b] : bodies) {
      const std::uint8_t kind = id == kOwnEntity ? 0 : 2;
      out.emplace_back(id, kind, 0, quantize_entity_yaw(b.yaw, kind),
                       quantize_position(wire::Vec3f(b.x, b.y, b.z)));
    }
    return out;
  }
};

TEST(ClientConnection, SixHundredTicksOverALossyLink) {
  const ConnectToken token = make_token();
  ClientSession client(token, ClientSessionSettings{});
  Server server;
  Link up(1, 0.2, 0.1), down(2, 0.2, 0.1);
  // Enough entities that the first snapshots (from the empty baseline) cannot carry them all: about 11
  // bytes each when new, against some 800 bytes of room.
  TestWorld world(3, 300);
  std::mt19937 rng(4);
  std::map<std::uint64_t, std::pair<SnapshotState, std::map<std::uint32_t, TestWorld::Body>>> history;
  std::vector<wire::ContactEvent> queued, delivered;
  std::map<std::size_t, std::uint64_t> command_datagrams;  // up-link datagram id -> newest command in it
  std::vector<std::uint64_t> server_inputs;
  std::vector<PlayerInput> taken;
  std::uint64_t tick = 0, checked_tick = 0;
  int complete_checks = 0, tampered = 0, forged_commands = 0;
  constexpr std::uint64_t kTicks = 600, kDrainTicks = 300;  // contacts stop after kTicks, the rest drains
  constexpr int kMaxHandshakeSteps = 100;

  double now = kStart;
  for (int step = 0; tick < kTicks + kDrainTicks; ++step, now = kStart + step * kTickSeconds) {
    ASSERT_TRUE(tick > 0 || step < kMaxHandshakeSteps) << "no connection";
    for (const auto& d : up.receive(now)) {
      for (auto& r : server.on_datagram(d, kClientAddress, now))
        down.send(std::move(r), now);
    }
    if (server.connection) {
      ClientConnection& c = *server.connection;
      ++tick;
      taken.clear();
      c.take_commands(taken);
      for (const PlayerInput& in : taken)
        server_inputs.push_back(command_sequence(in));
      world.step(tick);
      if (tick <= kTicks) {
        for (std::uint32_t n = rng() % 3; n > 0; --n) {
          const ContactRecord record = make_contact(tick, 1 + rng() % 30, rng);
          queued.push_back(to_wire(record, queued.size() + 1));
          c.queue_contact(record);
        }
      }
      const SnapshotState states = world.states();
      history[tick] = {states, world.bodies};
      const auto& own = world.bodies.at(kOwnEntity);
      std::vector<std::uint8_t> frame = c.build_frame(tick, states, Vec3{own.x, own.y, own.z}, now);
      ASSERT_LE(frame.size(), kMaxDatagramBytes);
      if (tick % 50 == 25 && client.state() == ClientState::kConnected) {
        // Forged and replayed server packets are refused by the client, with their reasons.
        EXPECT_EQ(client.on_datagram(tamper(frame, false), now), wire::ErrorCode::DecryptFailed);
        EXPECT_EQ(client.on_datagram(tamper(frame, true), now), wire::ErrorCode::DecryptFailed);
        EXPECT_EQ(client.on_datagram(frame, now), wire::ErrorCode::Ok);
        EXPECT_EQ(client.on_datagram(frame, now), wire::ErrorCode::DuplicatePacket);
        ++tampered;
      }
      down.send(std::move(frame), now);
    }
    for (const auto& d : down.receive(now))
      client.on_datagram(d, now);
    for (auto& d : client.poll(now))
      up.send(std::move(d), now);
    if (client.state() == ClientState::kConnected) {
      const std::uint64_t sequence = client.last_command_sequence() + 1;
      std::vector<std::uint8_t> frame = client.send_command(command_input(sequence), tick, now);
      if (sequence % 50 == 10) {
        // ... and the server refuses forged, replayed and misdirected client packets.
        ClientConnection& c = *server.connection;
        EXPECT_EQ(c.on_packet(tamper(frame, false), kClientAddress, now), wire::ErrorCode::DecryptFailed);
        EXPECT_EQ(c.on_packet(tamper(frame, true), kClientAddress, now), wire::ErrorCode::DecryptFailed);
        EXPECT_EQ(c.on_packet(frame, "10.0.0.8:5000", now), wire::ErrorCode::UnknownConnection);
        ++forged_commands;
      }
      command_datagrams[up.send(std::move(frame), now)] = sequence;
    }
    ASSERT_NE(client.state(), ClientState::kTimedOut);
    ASSERT_FALSE(server.connection && server.connection->timed_out(now));

    if (client.latest_snapshot_tick() != checked_tick && client.latest_snapshot_complete()) {
      checked_tick = client.latest_snapshot_tick();
      const auto& [expected, bodies] = history.at(checked_tick);
      const SnapshotState& held = client.world_state();
      ASSERT_EQ(held.size(), expected.size()) << "tick " << checked_tick;
      for (std::size_t i = 0; i < held.size(); ++i) {
        ASSERT_TRUE(same_entity_state(held[i], expected[i])) << "tick " << checked_tick << " entity " << i;
        const wire::Vec3f p = dequantize_position(held[i].position());
        const TestWorld::Body& b = bodies.at(held[i].id());
        ASSERT_LE(std::abs(p.x() - b.x), kPositionQuantum / 2);
        ASSERT_LE(std::abs(p.y() - b.y), kPositionQuantum / 2);
        ASSERT_LE(std::abs(p.z() - b.z), kPositionQuantum / 2);
      }
      ++complete_checks;
    }
    for (const auto& e : client.take_events())
      delivered.push_back(e);
  }
  EXPECT_EQ(client.own_entity(), kOwnEntity);
  EXPECT_GT(complete_checks, 300);
  EXPECT_GT(tampered, 10);
  EXPECT_EQ(client.counters().rejected[static_cast<std::size_t>(wire::ErrorCode::DecryptFailed)],
            2u * tampered);
  EXPECT_GT(client.counters().snapshots_incomplete, 0u);  // the first, from the empty baseline at least

  // Contacts: every one exactly once, in order.
  ASSERT_EQ(delivered.size(), queued.size());
  for (std::size_t i = 0; i < queued.size(); ++i) {
    const wire::ContactEvent sent = quantize_contact_event(queued[i]);  // what a client reads of it
    ASSERT_EQ(std::memcmp(&delivered[i], &sent, sizeof(wire::ContactEvent)), 0) << "event " << i;
  }
  EXPECT_EQ(server.connection->events_pending(), 0u);

  // Commands: k reaches the server iff one of the three frames carrying it (newest k, k+1 or k+2)
  // arrived before any frame whose newest command is k+3 or later.
  std::map<std::uint64_t, std::size_t> first_arrival;  // newest command in the frame -> arrival position
  for (std::size_t pos = 0; pos < up.arrivals().size(); ++pos) {
    if (auto it = command_datagrams.find(up.arrivals()[pos]); it != command_datagrams.end())
      first_arrival.emplace(it->second, pos);
  }
  const std::uint64_t sent_commands = client.last_command_sequence();
  std::vector<std::uint64_t> accepted;
  int single_losses_covered = 0;
  for (std::uint64_t k = 1; k <= sent_commands; ++k) {
    std::size_t carrying = SIZE_MAX, newer = SIZE_MAX;
    for (const auto& [newest, pos] : first_arrival) {
      if (newest >= k && newest <= k + 2) carrying = std::min(carrying, pos);
      if (newest >= k + 3) newer = std::min(newer, pos);
    }
    if (carrying < newer) {
      accepted.push_back(k);
      const auto own = std::find_if(command_datagrams.begin(), command_datagrams.end(),
                                    [&](const auto& d) { return d.second == k; });
      if (up.lost(own->first)) ++single_losses_covered;
    }
  }
  for (bool waiting = true; waiting;) {
    taken.clear();
    waiting = server.connection->take_commands(taken).waiting > 0;
    for (const PlayerInput& in : taken)
      server_inputs.push_back(command_sequence(in));
  }
  const ConnectionCounters& sc = server.connection->counters();
  EXPECT_EQ(sc.commands_received, accepted.size());
  EXPECT_EQ(sc.commands_missing + accepted.size(), accepted.empty() ? 0 : accepted.back());
  EXPECT_GT(single_losses_covered, 50);
  EXPECT_TRUE(std::is_sorted(server_inputs.begin(), server_inputs.end()));
  EXPECT_EQ(std::adjacent_find(server_inputs.begin(), server_inputs.end()), server_inputs.end());
  EXPECT_TRUE(std::includes(accepted.begin(), accepted.end(), server_inputs.begin(), server_inputs.end()));
  EXPECT_EQ(server_inputs.size() + sc.commands_dropped, accepted.size());
  EXPECT_EQ(sc.rejected[static_cast<std::size_t>(wire::ErrorCode::DecryptFailed)], 2u * forged_commands);
  EXPECT_GT(forged_commands, 10);

  // Goodbye: said three times over the lossy link; the server closes with ClientDisconnected.
  const std::vector<std::uint8_t> bye = client.disconnect(now);
  EXPECT_EQ(client.state(), ClientState::kDisconnected);
  EXPECT_EQ(client.code(), wire::ErrorCode::ClientDisconnected);
  for (int i = 0; i < 3; ++i)
    up.send(bye, now);
  for (const auto& d : up.receive(now + 1))
    server.on_datagram(d, kClientAddress, now + 1);
  EXPECT_TRUE(server.connection->closed());
  EXPECT_EQ(server.connection->close_reason(), wire::ErrorCode::ClientDisconnected);
  EXPECT_TRUE(client.send_command(command_input(1), tick, now).empty());
}

TEST(ClientConnection, TimeoutsFireAtExactlyTheConfiguredTime) {
  ConnectionSettings server_settings;
  server_settings.timeout = 2.5;
  ClientSessionSettings client_settings;
  client_settings.timeout = 3.0;
  client_settings.keepalive_interval = 1.0;
  Connected p(server_settings, client_settings);
  ClientConnection& c = p.connection();
  EXPECT_FALSE(c.timed_out(std::nextafter(kStart + 2.5, 0.0)));  // created by the response at kStart

  const double t1 = kStart + 1.25;
  const auto frame = p.client.send_command(command_input(1), 0, t1);
  EXPECT_EQ(c.on_packet(tamper(frame, false), kClientAddress, t1 + 1), wire::ErrorCode::DecryptFailed);
  EXPECT_EQ(c.on_packet(frame, kClientAddress, t1), wire::ErrorCode::Ok);
  EXPECT_FALSE(c.timed_out(kStart + 2.5));
  EXPECT_FALSE(c.timed_out(std::nextafter(t1 + 2.5, 0.0)));  // the forged packet did not move the deadline
  EXPECT_FALSE(c.closed());
  EXPECT_TRUE(c.timed_out(t1 + 2.5));
  EXPECT_TRUE(c.closed());
  EXPECT_EQ(c.close_reason(), wire::ErrorCode::Timeout);
  EXPECT_TRUE(c.build_frame(1, {}, {}, t1 + 2.5).empty());

  // The client heard the server last at kStart (the keep-alive that connected it); it keeps sending
  // keep-alives meanwhile, which does not keep it alive.
  EXPECT_TRUE(p.client.poll(t1 + 0.5).empty());
  EXPECT_EQ(p.client.poll(t1 + 1.0).size(), 1u);  // keepalive_interval after the command
  EXPECT_TRUE(p.client.poll(std::nextafter(kStart + 3.0, 0.0)).size() <= 1u);
  EXPECT_EQ(p.client.state(), ClientState::kConnected);
  EXPECT_TRUE(p.client.poll(kStart + 3.0).empty());
  EXPECT_EQ(p.client.state(), ClientState::kTimedOut);
  EXPECT_EQ(p.client.code(), wire::ErrorCode::Timeout);
}

TEST(ClientConnection, CommandsInOrderOnceEachWithRefusalsAndDrops) {
  Connected p;
  ClientConnection& c = p.connection();
  const double t = kStart + 0.1;
  const auto f1 = p.client.send_command(command_input(1), 10.0, t);
  // Protocol 3 quantizes: the session sends a NaN move as 0, so no command a session sends is refused
  // (undecodable bits are: ServerBadInputTest, tests/protocol/input_codec_test.cpp).
  PlayerInput nan_move = command_input(2);
  nan_move.forward = std::numeric_limits<float>::quiet_NaN();
  const auto f2 = p.client.send_command(nan_move, 11.0, t);
  const auto f3 = p.client.send_command(command_input(3), 12.5, t);
  EXPECT_EQ(c.on_packet(f3, kClientAddress, t), wire::ErrorCode::Ok);  // carries 3, 2, 1
  EXPECT_EQ(c.counters().commands_refused, 0u);
  EXPECT_EQ(c.counters().commands_received, 3u);
  EXPECT_EQ(c.input_ack(), 3u);
  EXPECT_EQ(c.view_tick(), 12.5);
  EXPECT_EQ(c.on_packet(f1, kClientAddress, t), wire::ErrorCode::Ok);  // late: nothing new
  EXPECT_EQ(c.on_packet(f2, kClientAddress, t), wire::ErrorCode::Ok);  // nothing new either
  EXPECT_EQ(c.on_packet(f3, kClientAddress, t), wire::ErrorCode::DuplicatePacket);
  // One tick's credit runs one command: 1, 2, 3 at the next ticks, then nothing is left.
  std::vector<PlayerInput> taken;
  EXPECT_EQ(c.take_commands(taken).waiting, 2u);
  EXPECT_EQ(c.take_commands(taken).waiting, 1u);
  EXPECT_EQ(c.take_commands(taken).waiting, 0u);
  EXPECT_EQ(c.take_commands(taken).run, 0u);
  ASSERT_EQ(taken.size(), 3u);
  EXPECT_EQ(command_sequence(taken[0]), 1u);
  EXPECT_EQ(command_sequence(taken[1]), 2u);
  EXPECT_EQ(taken[1].forward, 0.0f);
  EXPECT_EQ(command_sequence(taken[2]), 3u);
  EXPECT_EQ(c.run_ack(), 3u);

  // A client running ahead: kMaxQueuedCommands + 3 commands between two ticks; the newest
  // kMaxQueuedCommands stay and run in order, as the credit allows.
  const std::uint64_t last = 3 + kMaxQueuedCommands + 3;
  for (std::uint64_t k = 4; k <= last; ++k) {
    ASSERT_EQ(c.on_packet(p.client.send_command(command_input(k), 13.0, t), kClientAddress, t),
              wire::ErrorCode::Ok);
  }
  EXPECT_EQ(c.counters().commands_dropped, 3u);
  taken.clear();
  for (bool waiting = true; waiting;)
    waiting = c.take_commands(taken).waiting > 0;
  ASSERT_EQ(taken.size(), kMaxQueuedCommands);
  for (std::size_t i = 0; i < taken.size(); ++i)
    EXPECT_EQ(command_sequence(taken[i]), last + 1 - kMaxQueuedCommands + i);
  EXPECT_EQ(c.counters().commands_missing, 0u);

  // The client learns when each command was first acknowledged (input latency): the frame reports the
  // newest command run.
  const auto frame = c.build_frame(1, {}, {}, t + 0.01);
  EXPECT_EQ(p.client.on_datagram(frame, t + 0.05), wire::ErrorCode::Ok);
  EXPECT_EQ(p.client.input_ack(), last);
  const auto acks = p.client.take_command_acks();
  ASSERT_EQ(acks.size(), last);
  for (std::size_t i = 0; i < acks.size(); ++i) {
    EXPECT_EQ(acks[i].sequence, i + 1);
    EXPECT_EQ(acks[i].sent_at, t);
    EXPECT_EQ(acks[i].acked_at, t + 0.05);
  }
}

// Protocol version 5 (and 6) through the server's own path: once the client acknowledged two snapshots of an
// entity running straight at constant speed (the second decoded against the first), the runner is not in
// the block at all, and the client still holds exactly the world; when it stops, it costs a delta.
TEST(ClientConnection, AStraightRunnerCostsNothingOnceTwoSnapshotsWereAcknowledged) {
  Connected p;
  ClientConnection& c = p.connection();
  const auto world = [](std::uint64_t tick, std::uint64_t stop) {
    const auto t = static_cast<std::int32_t>(std::min(tick, stop));
    return SnapshotState{
        wire::EntityState(kOwnEntity, 0, 0, 0, wire::QuantizedVec(0, 0, 0)),
        wire::EntityState(2, 0, 0, static_cast<std::uint16_t>(64992 + 256 * t),  // a player's
                          wire::QuantizedVec(-3000 + 80 * t, 500 - 37 * t, 24))};
  };
  constexpr std::uint64_t kStop = 12;
  std::vector<std::size_t> block_bytes;
  for (std::uint64_t tick = 2; tick <= 16; tick += 2) {
    const double now = kStart + static_cast<double>(tick) * kTickSeconds;
    const SnapshotState states = world(tick, kStop);
    ASSERT_EQ(p.client.on_datagram(c.build_frame(tick, states, Vec3{0, 0, 0}, now), now),
              wire::ErrorCode::Ok);
    const ReadMessage read = read_connected_message(p.client.last_packet_message());
    ASSERT_EQ(read.error, wire::ErrorCode::Ok);
    ASSERT_TRUE(read.message.server_frame.snapshot.has_value());
    block_bytes.push_back(read.message.server_frame.snapshot->block.size());
    ASSERT_EQ(p.client.latest_snapshot_tick(), tick);
    ASSERT_EQ(p.client.world_state().size(), states.size());
    for (std::size_t i = 0; i < states.size(); ++i)
      ASSERT_TRUE(same_entity_state(p.client.world_state()[i], states[i]))
          << "tick " << tick << " entity " << i;
    // The acknowledgement rides on the next command.
    const std::uint64_t sequence = p.client.last_command_sequence() + 1;
    EXPECT_EQ(c.on_packet(p.client.send_command(command_input(sequence), tick, now), kClientAddress, now),
              wire::ErrorCode::Ok);
    EXPECT_EQ(c.acked_snapshot_tick(), tick);
  }
  // Ticks 2 (both entities new) and 4 (against tick 2 alone: nothing to predict from) carry the runner.
  EXPECT_GT(block_bytes[0], 4u);
  EXPECT_GT(block_bytes[1], 2u);
  // Ticks 6 to 12: the runner is predicted exactly; the block is its two empty counts (12 bits).
  for (std::size_t k = 2; k <= 5; ++k)
    EXPECT_EQ(block_bytes[k], (kMinEntityBlockBits + 7) / 8) << "tick " << 2 * (k + 1);
  // Tick 14: it stopped at 12 and costs a position and a yaw delta; at 16 it is predicted to stand.
  EXPECT_GT(block_bytes[6], 4u);
  EXPECT_EQ(block_bytes[7], (kMinEntityBlockBits + 7) / 8);
}

TEST(ClientConnection, ServerDisconnectReachesTheClient) {
  Connected p;
  ClientConnection& c = p.connection();
  const auto bye = c.build_disconnect(wire::ErrorCode::MatchEnded, kStart + 1);
  EXPECT_TRUE(c.closed());
  EXPECT_EQ(c.close_reason(), wire::ErrorCode::MatchEnded);
  EXPECT_EQ(p.client.on_datagram(bye, kStart + 1), wire::ErrorCode::Ok);
  EXPECT_EQ(p.client.on_datagram(bye, kStart + 1),
            wire::ErrorCode::UnexpectedMessage);  // a copy: session over
  EXPECT_EQ(p.client.state(), ClientState::kDisconnected);
  EXPECT_EQ(p.client.code(), wire::ErrorCode::MatchEnded);
  EXPECT_TRUE(p.client.poll(kStart + 100).empty());
  // A spoofed ConnectionDenied (unauthenticated) cannot end a connected session either.
  Connected q;
  EXPECT_EQ(q.client.on_datagram(build_denied(wire::ErrorCode::MatchFull), kStart),
            wire::ErrorCode::UnexpectedMessage);
  EXPECT_EQ(q.client.state(), ClientState::kConnected);
}

}  // namespace
}  // namespace shiftcast
