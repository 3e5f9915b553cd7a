// What a ClientConnection puts in its frames: never over the datagram limit with hundreds of entities and
// events, a fair share for events and snapshots, the baselines it encodes against (never one the client
// has let go, and what the client does when given one anyway), and the refusals of its stream.
#include "server/client_connection.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "protocol/contact_event_codec.hpp"
#include "protocol/entity_block.hpp"
#include "protocol/input_codec.hpp"
#include "protocol/own_state_codec.hpp"
#include "tests/support/channel_harness.hpp"
#include "tests/support/seeded_random.hpp"

namespace shiftcast {
namespace {

using namespace channel_test;

// The most one entity can add to a block: the widest id gap (4 + 32 bits), a new entity with every field
// in its widest tier (9 + 9 + 16 + 3 x 36), and the changed count moving up a tier (at most 22 more).
constexpr std::size_t kMaxEntryBits = 36 + 142 + 22;

// How many changed entities the frame's entity block carries (its second count, after the removed ids).
std::size_t entities_in_block(const ServerFrameMessage& f) {
  BitReader in(f.snapshot->block);
  const std::uint64_t removed = in.read_tiered(kCountTiers);
  for (std::uint64_t k = 0; k < removed; ++k)
    in.read_tiered(kIdGapTiers);
  return static_cast<std::size_t>(in.read_tiered(kCountTiers));
}

// How many contact events the frame carries, and their bytes.
std::pair<std::size_t, std::size_t> events_in_frame(const ServerFrameMessage& f) {
  if (!f.events) return {0, 0};
  BitReader in(*f.events);
  const auto events = read_contact_events(in, f.tick);
  return {events ? events->size() : 0, f.events->size()};
}

TEST(ClientConnection, FramesStayWithinTheDatagramLimitAndShareItFairly) {
  ConnectionSettings settings;
  settings.max_pending_events = 1'000'000;
  Connected p(settings);
  ClientConnection& c = p.connection();
  const Key s2c = p.client.token().server_to_client;
  std::mt19937 rng(21);
  UniformInt<std::int32_t> coordinate(-65536, 65536);
  std::map<std::uint32_t, wire::EntityState> world;
  std::uint32_t next_id = 1;
  constexpr std::size_t kFramePayload =
      kMaxDatagramBytes - kPacketOverheadBytes - kServerFrameOverheadBytes - kMaxOwnStateBytes;
  // What the version-2 struct events fitted of the share; bit-packed ones fit more.
  const std::size_t struct_slots =
      static_cast<std::size_t>(kFramePayload * kEventShareOfFrame) / kContactEventBytes;
  const auto share_bits = static_cast<std::size_t>(kFramePayload * kEventShareOfFrame) * 8;
  std::size_t max_inner = 0, max_framing = 0, most_events = 0, most_entries = 0;
  for (std::uint64_t tick = 1; tick <= 300; ++tick) {
    const double now = kStart + tick * kTickSeconds;
    // Hundreds of entities, all moving; now and then a mass removal.
    const std::size_t target = 200 + rng() % 400;
    while (world.size() < target)
      world[next_id++] = {};
    if (tick % 37 == 0) {
      for (int i = 0; i < 300 && !world.empty(); ++i)
        world.erase(std::next(world.begin(), rng() % world.size()));
    }
    SnapshotState states;
    for (auto& [id, e] : world) {
      e = wire::EntityState(id, 2, 0, static_cast<std::uint16_t>(rng()),
                            wire::QuantizedVec(coordinate(rng), coordinate(rng), coordinate(rng)));
      states.push_back(e);
    }
    std::uint32_t contacts = rng() % 40;
    for (; contacts > 0; --contacts)
      c.queue_contact(make_contact(tick, 1 + rng() % 400, rng));
    const std::size_t pending = c.events_pending();
    const std::size_t due = c.events_due();  // pending less those whose packet is still in flight
    ASSERT_LE(due, pending);

    // Every frame carries the own player's exact state (ServerFrame.own), inside the framing bound.
    const wire::OwnState own(wire::Vec3f(0.1f * float(tick), -3, 7), wire::Vec3f(320, 0, -100),
                             wire::Vec3f(0, 0, 1), 0, std::int32_t(tick), std::uint8_t(tick % 4));
    const auto frame = c.build_frame(tick, states, {}, now, &own);
    ASSERT_LE(frame.size(), kMaxDatagramBytes) << "tick " << tick;
    const OpenedMessage opened = open_test_message(frame, s2c);
    ASSERT_EQ(opened.error(), wire::ErrorCode::Ok);
    const ServerFrameMessage f = opened.frame();
    ASSERT_TRUE(f.own.has_value());
    BitReader own_bits(*f.own);
    const std::optional<OwnStateBits> own_bits_read = read_own_state(own_bits);
    ASSERT_TRUE(own_bits_read.has_value());
    const std::optional<wire::OwnState> own_read = own_bits_read->state;
    EXPECT_EQ(own_read->ground_brush(), std::int32_t(tick));
    ASSERT_TRUE(f.snapshot.has_value());
    const std::size_t block_bytes = f.snapshot->block.size();
    const std::size_t changed = entities_in_block(f);
    const auto [events, event_bytes] = events_in_frame(f);
    const std::size_t payload = block_bytes + event_bytes + f.own->size();
    max_framing = std::max(max_framing, frame.size() - payload);
    max_inner = std::max(max_inner, opened.packet.message.size() - payload);
    most_events = std::max(most_events, events);
    most_entries = std::max(most_entries, changed);
    // Neither starves the other: events get their share (all that are due, or up to the event that would
    // not fit), the snapshot the rest (to the last entry).
    EXPECT_TRUE(events == due || event_bytes * 8 + kMaxContactEventBits > share_bits)
        << events << " of " << due << " due in " << event_bytes << " bytes";
    if (!f.snapshot->complete) {
      EXPECT_GT(block_bytes * 8 + kMaxEntryBits, (kFramePayload - share_bits / 8) * 8);
    }

    // A lossy client that still applies what arrives, and acknowledges through its commands.
    if (rng() % 10 < 7) {
      ASSERT_EQ(p.client.on_datagram(frame, now), wire::ErrorCode::Ok);
    }
    const auto up = p.client.send_command(command_input(tick), static_cast<double>(tick), now);
    if (rng() % 10 < 7) {
      ASSERT_EQ(c.on_packet(up, kClientAddress, now), wire::ErrorCode::Ok);
    }
  }
  // The two reserves each hold what they reserve for, so the limit holds whatever the payload.
  EXPECT_LE(max_inner, kServerFrameOverheadBytes);
  EXPECT_LE(max_framing - max_inner, kPacketOverheadBytes);
  EXPECT_GT(most_events, struct_slots);  // bit-packed events fit more than the structs did
  EXPECT_GT(most_entries, 20u);

  // A still world, acknowledged: the snapshot is empty and events take the whole frame.
  SnapshotState still;
  for (const auto& [id, e] : world)
    still.push_back(e);
  std::size_t events = 0, still_bytes = 0;
  for (std::uint64_t tick = 301; tick <= 400; ++tick) {
    const double now = kStart + tick * kTickSeconds;
    if (tick == 301) {  // a backlog that outlasts a few frames, whatever the first phase left
      for (int i = 0; i < 2000; ++i)
        c.queue_contact(make_contact(tick, 1 + rng() % 400, rng));
    }
    const auto frame = c.build_frame(tick, still, {}, now);
    ASSERT_LE(frame.size(), kMaxDatagramBytes);
    // The fullest frame (the backlog may run dry before the phase ends).
    const auto [count, bytes] = events_in_frame(open_test_message(frame, s2c).frame());
    if (count > events) {
      events = count;
      still_bytes = bytes;
    }
    ASSERT_EQ(p.client.on_datagram(frame, now), wire::ErrorCode::Ok);
    const auto up = p.client.send_command(command_input(tick), static_cast<double>(tick), now);
    ASSERT_EQ(c.on_packet(up, kClientAddress, now), wire::ErrorCode::Ok);
  }
  EXPECT_GT(events, kFramePayload / kContactEventBytes);
  EXPECT_GT(still_bytes * 8 + kMaxContactEventBits, kFramePayload * 8);  // the frame is full
  EXPECT_EQ(p.client.counters().snapshots_skipped, 0u);
  RecordProperty("max_frame_framing_bytes", static_cast<int>(max_inner));
}

TEST(ClientConnection, SlowConsumerUnexpectedMessagesAndLyingAcks) {
  ConnectionSettings settings;
  settings.max_pending_events = 10;
  Connected p(settings);
  ClientConnection& c = p.connection();
  std::mt19937 rng(5);
  for (int i = 0; i < 10; ++i)
    c.queue_contact(make_contact(1, 2, rng));
  EXPECT_FALSE(c.closed());
  EXPECT_EQ(c.events_pending(), 10u);

  // A client acknowledging events it was never sent.
  BitWriter lie_bits;
  write_client_commands(lie_bits, {{}, 1000});
  std::vector<std::uint8_t> lie;
  write_client_frame(lie, lie_bits.bytes());
  const ConnectToken& token = p.client.token();
  const PacketHeader header{kMatch, kClient, 1000, 0, 0};
  const auto sealed = seal_packet(header, Direction::kClientToServer, token.client_to_server, lie);
  EXPECT_EQ(c.on_packet(sealed, kClientAddress, kStart), wire::ErrorCode::BadArgument);
  EXPECT_EQ(c.events_pending(), 0u);  // everything sent counts as acknowledged, nothing beyond

  // A server message sent to the server, and a client message sent to the client.
  std::vector<std::uint8_t> frame;
  write_server_frame(frame, {1, 0, std::nullopt, std::nullopt, std::nullopt});
  const auto wrong_way =
      seal_packet({kMatch, kClient, 1001, 0, 0}, Direction::kClientToServer, token.client_to_server, frame);
  EXPECT_EQ(c.on_packet(wrong_way, kClientAddress, kStart), wire::ErrorCode::UnexpectedMessage);
  const auto to_client =
      seal_packet({kMatch, kClient, 1001, 0, 0}, Direction::kServerToClient, token.server_to_client, frame);
  EXPECT_EQ(p.client.on_datagram(to_client, kStart), wire::ErrorCode::Ok);  // well formed ServerFrame: fine
  const auto client_frame =
      seal_packet({kMatch, kClient, 1002, 0, 0}, Direction::kServerToClient, token.server_to_client, lie);
  EXPECT_EQ(p.client.on_datagram(client_frame, kStart), wire::ErrorCode::UnexpectedMessage);
  const auto empty = seal_packet({kMatch, kClient, 1003, 0, 0}, Direction::kServerToClient,
                                 token.server_to_client, std::span<const std::uint8_t>());
  EXPECT_EQ(p.client.on_datagram(empty, kStart), wire::ErrorCode::Malformed);  // not even a kind byte

  for (int i = 0; i < 10; ++i)
    c.queue_contact(make_contact(1, 2, rng));
  EXPECT_FALSE(c.closed());
  c.queue_contact(make_contact(1, 2, rng));  // the eleventh unacknowledged one
  EXPECT_TRUE(c.closed());
  EXPECT_EQ(c.close_reason(), wire::ErrorCode::SlowConsumer);
  EXPECT_EQ(c.on_packet(p.client.send_command(command_input(1), 0, kStart), kClientAddress, kStart),
            wire::ErrorCode::UnknownConnection);
}

SnapshotState small_world(std::uint64_t tick) {
  SnapshotState out;
  for (std::uint32_t id = 1; id <= 5; ++id)
    out.emplace_back(id, 0, 0, 0, wire::QuantizedVec(static_cast<std::int32_t>(id * 100 + tick), 0, 0));
  return out;
}

// A server twin with the same keys believes the client holds a snapshot it never got: the client skips
// the delta built on it, counts it, and does not acknowledge the packet.
TEST(ClientConnection, SnapshotOnAMissingBaselineIsSkippedAndNotAcknowledged) {
  Connected p;
  ClientConnection& c = p.connection();
  ClientConnection twin({kMatch, kClient, p.client.token().client_to_server,
                         p.client.token().server_to_client, kClientAddress, kOwnEntity},
                        ConnectionSettings{}, kStart);
  twin.build_frame(1, small_world(1), {}, kStart);                       // sequence 1, never delivered
  const auto ack1 = p.client.send_command(command_input(1), 0, kStart);  // acks the real sequence 1
  ASSERT_EQ(twin.on_packet(ack1, kClientAddress, kStart), wire::ErrorCode::Ok);
  ASSERT_EQ(twin.acked_snapshot_tick(), 1u);
  ASSERT_EQ(p.client.on_datagram(twin.build_frame(2, small_world(2), {}, kStart), kStart),
            wire::ErrorCode::Ok);
  EXPECT_EQ(p.client.counters().snapshots_skipped, 1u);
  EXPECT_EQ(p.client.latest_snapshot_tick(), 0u);
  const auto next = p.client.send_command(command_input(2), 0, kStart);
  // Still the keep-alive, not the skipped frame (sequence 2).
  EXPECT_EQ(open_test_packet(next, Direction::kClientToServer, p.client.token().client_to_server).header.ack,
            1u);
  EXPECT_EQ(c.on_packet(next, kClientAddress, kStart), wire::ErrorCode::Ok);
}

// The client's acknowledgements stop for longer than kSnapshotHistory ticks: the server stops encoding
// against the old baseline exactly when the client may have let it go, and the client never skips.
TEST(ClientConnection, LongSilenceFallsBackToTheEmptyBaseline) {
  Connected p;
  ClientConnection& c = p.connection();
  std::uint64_t acked = 0;
  for (std::uint64_t tick = 1; tick <= 200; ++tick) {
    const double now = kStart + tick * kTickSeconds;
    const auto frame = c.build_frame(tick, small_world(tick), {}, now);
    const std::uint64_t baseline =
        open_test_message(frame, p.client.token().server_to_client).frame().snapshot->baseline_tick;
    const bool silent = tick > 10 && tick <= 150;
    if (tick > 11 && tick - acked < kSnapshotHistory) {
      EXPECT_EQ(baseline, acked) << tick;
    }
    if (tick - acked >= kSnapshotHistory) {
      EXPECT_EQ(baseline, 0u) << tick;
    }
    ASSERT_EQ(p.client.on_datagram(frame, now), wire::ErrorCode::Ok);
    ASSERT_TRUE(p.client.latest_snapshot_complete());
    ASSERT_EQ(p.client.latest_snapshot_tick(), tick);
    const auto up = p.client.send_command(command_input(tick), static_cast<double>(tick), now);
    if (!silent) {
      ASSERT_EQ(c.on_packet(up, kClientAddress, now), wire::ErrorCode::Ok);
      acked = c.acked_snapshot_tick();
      ASSERT_EQ(acked, tick);
    }
  }
  EXPECT_EQ(p.client.counters().snapshots_skipped, 0u);
}

}  // namespace
}  // namespace shiftcast
