// The input acknowledgement between snapshots (ClientConnection::build_input_ack): due exactly when a
// command ran (take_commands, once per server tick) since the last frame, and read by the real ClientSession
// as an acknowledgement with no snapshot and no events. The oracle is the commands sent and the frames
// delivered: each command is acknowledged by the first frame after it that arrives, snapshot or not, and
// never twice.
#include <gtest/gtest.h>

#include <vector>

#include "server/client_connection.hpp"
#include "tests/support/channel_harness.hpp"

namespace shiftcast {
namespace {

using namespace channel_test;

constexpr std::uint64_t kTicks = 121;  // the last server datagram (the 121st) arrives
// Times here are unix seconds near 1.7e9: a double resolves them to about 2.4e-7 s.
constexpr double kUnixTimeResolution = 1e-6;

// One server tick's command run; returns how many ran.
std::size_t run_tick(ClientConnection& c) {
  std::vector<PlayerInput> run;
  c.take_commands(run);
  return run.size();
}

std::vector<wire::EntityState> one_entity(std::uint64_t tick) {
  return {wire::EntityState(kOwnEntity, 0, 0, 0, wire::QuantizedVec(static_cast<std::int32_t>(tick), 0, 0))};
}

TEST(InputAckFrame, DueOnlyAfterANewCommandAndReadAsAnAcknowledgement) {
  Connected p;
  ClientConnection& c = p.connection();
  EXPECT_FALSE(c.input_ack_due());

  const double sent = kStart + 1;
  const auto command = p.client.send_command(command_input(1), 0, sent);
  ASSERT_EQ(c.on_packet(command, kClientAddress, sent), wire::ErrorCode::Ok);
  EXPECT_FALSE(c.input_ack_due());  // received, not yet run
  ASSERT_EQ(run_tick(c), 1u);
  EXPECT_TRUE(c.input_ack_due());

  const double acked = sent + kTickSeconds;
  const auto frame = c.build_input_ack(3, acked);
  EXPECT_FALSE(c.input_ack_due());  // sent: nothing new since
  ASSERT_EQ(p.client.on_datagram(frame, acked), wire::ErrorCode::Ok);
  EXPECT_EQ(p.client.input_ack(), 1u);
  const std::vector<CommandAck> acks = p.client.take_command_acks();
  ASSERT_EQ(acks.size(), 1u);
  EXPECT_EQ(acks[0].sequence, 1u);
  EXPECT_EQ(acks[0].sent_at, sent);
  EXPECT_EQ(acks[0].acked_at, acked);
  EXPECT_EQ(p.client.counters().snapshots_received, 0u);
  EXPECT_EQ(p.client.latest_snapshot_tick(), 0u);
  EXPECT_TRUE(p.client.take_events().empty());

  // A redundant copy of command 1 (in the frame of command 2, which is lost) changes nothing; a snapshot
  // frame carries the acknowledgement as well and clears what was due.
  const auto second = p.client.send_command(command_input(2), 0, acked);
  (void)second;                // lost
  EXPECT_EQ(run_tick(c), 0u);  // a tick with nothing to run
  EXPECT_FALSE(c.input_ack_due());
  const auto third = p.client.send_command(command_input(3), 0, acked + kTickSeconds);
  ASSERT_EQ(c.on_packet(third, kClientAddress, acked + kTickSeconds), wire::ErrorCode::Ok);
  EXPECT_EQ(c.input_ack(), 3u);
  EXPECT_FALSE(c.input_ack_due());
  EXPECT_EQ(run_tick(c), 2u);  // the credit the idle tick left runs both
  EXPECT_TRUE(c.input_ack_due());
  const auto snapshot = c.build_frame(4, one_entity(4), {}, acked + 2 * kTickSeconds);
  EXPECT_FALSE(c.input_ack_due());
  ASSERT_EQ(p.client.on_datagram(snapshot, acked + 2 * kTickSeconds), wire::ErrorCode::Ok);
  EXPECT_EQ(p.client.input_ack(), 3u);
  EXPECT_EQ(p.client.take_command_acks().size(), 2u);  // 2 and 3, each once
  EXPECT_EQ(p.client.latest_snapshot_tick(), 4u);
}

// Every other tick is a snapshot tick; between them the server acknowledges what arrived. Over a lossy
// schedule (every third server datagram lost), each command is acknowledged by the first frame that
// arrives after the server received it: at most one tick later when that frame arrives, and by the next
// arriving frame otherwise.
TEST(InputAckFrame, EachCommandIsAcknowledgedByTheFirstFrameThatArrivesAfterIt) {
  Connected p;
  ClientConnection& c = p.connection();
  std::uint64_t server_datagrams = 0;
  std::uint64_t acked_so_far = 0;
  for (std::uint64_t tick = 1; tick <= kTicks; ++tick) {
    const double now = kStart + double(tick) * kTickSeconds;
    const auto command = p.client.send_command(command_input(tick), 0, now);
    ASSERT_EQ(c.on_packet(command, kClientAddress, now), wire::ErrorCode::Ok);
    ASSERT_EQ(run_tick(c), 1u);
    const double at = now + kTickSeconds / 2;  // the server's tick, half a period after the command
    std::vector<std::uint8_t> datagram;
    if (tick % 2 == 0) {
      datagram = c.build_frame(tick, one_entity(tick), {}, at);
    } else {
      ASSERT_TRUE(c.input_ack_due());
      datagram = c.build_input_ack(tick, at);
    }
    ASSERT_FALSE(c.input_ack_due());
    if (++server_datagrams % 3 == 0) continue;  // lost
    ASSERT_EQ(p.client.on_datagram(datagram, at), wire::ErrorCode::Ok);
    for (const CommandAck& a : p.client.take_command_acks()) {
      EXPECT_EQ(a.sequence, ++acked_so_far);  // once each, in order
      EXPECT_EQ(a.acked_at, at);
      // A frame lost costs exactly one tick: the next one carries the acknowledgement.
      EXPECT_LE(a.acked_at - a.sent_at, 1.5 * kTickSeconds + kUnixTimeResolution);
    }
    EXPECT_EQ(p.client.input_ack(), tick);
  }
  EXPECT_EQ(acked_so_far, kTicks);
}

// recent_loss: set by the first acknowledgement that skips one of the server's packets, for
// kRecentLossSeconds after the last such one; never on a link that loses nothing. Oracle: the script's
// own choice of which frames the client receives, and the time.
TEST(InputAckFrame, ALinkIsLossyForAWhileAfterAnAcknowledgementSkipsAFrame) {
  Connected p;
  ClientConnection& c = p.connection();
  double now = kStart;
  // One server frame and one client command per tick; `lose` frames are not delivered.
  const auto exchange = [&](std::uint64_t tick, bool lose) {
    now = kStart + double(tick) * kTickSeconds;
    const auto frame = c.build_input_ack(tick, now);
    if (!lose) {
      ASSERT_EQ(p.client.on_datagram(frame, now), wire::ErrorCode::Ok);
    }
    const auto command = p.client.send_command(command_input(tick), 0, now);
    ASSERT_EQ(c.on_packet(command, kClientAddress, now), wire::ErrorCode::Ok);
    ASSERT_EQ(run_tick(c), 1u);
  };
  std::uint64_t tick = 1;
  for (; tick <= 100; ++tick) {
    exchange(tick, false);
    ASSERT_FALSE(c.recent_loss(now)) << tick;
  }
  exchange(tick++, true);  // lost: nothing newer acknowledged yet
  EXPECT_FALSE(c.recent_loss(now));
  exchange(tick++, false);  // the next one arrives, and its acknowledgement skips the lost one
  EXPECT_TRUE(c.recent_loss(now));
  EXPECT_EQ(c.counters().frames_missed, 1u);
  // Whole ticks strictly inside kRecentLossSeconds of the tick the loss was seen at.
  const int lossy_ticks = static_cast<int>(kRecentLossSeconds / kTickSeconds) - 1;
  for (int i = 0; i < lossy_ticks; ++i) {
    exchange(tick++, false);
    ASSERT_TRUE(c.recent_loss(now)) << tick;
  }
  for (int i = 0; i < 4; ++i)
    exchange(tick++, false);
  EXPECT_FALSE(c.recent_loss(now));  // kRecentLossSeconds after the loss was seen, and no other since
  EXPECT_EQ(c.counters().frames_missed, 1u);
}

}  // namespace
}  // namespace shiftcast
