// ServerFrame.own: the own player's exact state after the acknowledged command, built by the server
// (own_state_on_wire, ClientConnection::build_frame / build_input_ack) and read back by the real
// ClientSession and the load tester's reader (exact_own_state). The oracle is the state put in: every
// float comes back bit for bit (no quantization), every flag and id unchanged, and the state always
// belongs to the acknowledgement that came with it.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "client-sim/own_state.hpp"
#include "protocol/connected_message.hpp"
#include "protocol/own_state_codec.hpp"
#include "server/client_connection.hpp"
#include "server/own_state_wire.hpp"
#include "tests/support/channel_harness.hpp"
#include "tests/support/seeded_random.hpp"

namespace shiftcast {
namespace {

using namespace channel_test;

bool same_bits(float a, float b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}
bool same_bits(Vec3 a, Vec3 b) {
  return same_bits(a.x, b.x) && same_bits(a.y, b.y) && same_bits(a.z, b.z);
}

// Coordinates no quantum represents: a random float mantissa at every position.
ExactOwnState random_state(std::mt19937& rng) {
  UniformReal<float> coordinate(-4000, 4000);
  UniformReal<float> speed(-600, 600);
  ExactOwnState s;
  s.feet = {coordinate(rng), coordinate(rng), coordinate(rng)};
  s.motor.velocity = {speed(rng), speed(rng), speed(rng)};
  s.motor.on_ground = rng() % 2 == 0;
  s.motor.jump_held = rng() % 2 == 0;
  s.motor.ground_normal = s.motor.on_ground ? normalize(Vec3{speed(rng), speed(rng), 600}) : Vec3{};
  s.motor.ground_entity = rng() % 3 == 0 ? EntityId(1 + rng() % 5000) : kNoEntity;
  s.motor.ground_brush = rng() % 3 == 0 ? kNoBrush : std::int32_t(rng() % 100000);
  return s;
}

void expect_same(const ExactOwnState& got, const ExactOwnState& want) {
  EXPECT_TRUE(same_bits(got.feet, want.feet));
  EXPECT_TRUE(same_bits(got.motor.velocity, want.motor.velocity));
  EXPECT_TRUE(same_bits(got.motor.ground_normal, want.motor.ground_normal));
  EXPECT_EQ(got.motor.on_ground, want.motor.on_ground);
  EXPECT_EQ(got.motor.jump_held, want.motor.jump_held);
  EXPECT_EQ(got.motor.ground_entity, want.motor.ground_entity);
  EXPECT_EQ(got.motor.ground_brush, want.motor.ground_brush);
}

std::size_t run_tick(ClientConnection& c) {
  std::vector<PlayerInput> run;
  c.take_commands(run);
  return run.size();
}

TEST(OwnStateFrame, SnapshotAndInputAckFramesCarryTheExactStateBitForBit) {
  Connected p;
  ClientConnection& c = p.connection();
  std::mt19937 rng(13);
  EXPECT_FALSE(p.client.own_state().has_value());
  for (std::uint64_t tick = 1; tick <= 200; ++tick) {
    const double now = kStart + double(tick) * kTickSeconds;
    const auto up = p.client.send_command(command_input(tick), double(tick), now);
    ASSERT_EQ(c.on_packet(up, kClientAddress, now), wire::ErrorCode::Ok);
    ASSERT_EQ(run_tick(c), 1u);
    const ExactOwnState sent = random_state(rng);
    const wire::OwnState own = own_state_on_wire(sent.feet, sent.motor);
    // Odd ticks snapshot, even ticks only acknowledge: both carry the state. In a snapshot frame the
    // coordinates go relative to the own entity (protocol version 6): every tick fourth one at the feet
    // quantized (all three), the others at z 0 (z far from it goes whole).
    const float entity_z = tick % 4 == 1 ? sent.feet.z : 0.0f;
    const std::vector<wire::EntityState> world = {wire::EntityState(
        kOwnEntity, 0, 0, 0, quantize_position(wire::Vec3f(sent.feet.x, sent.feet.y, entity_z)))};
    const auto frame =
        tick % 2 == 1 ? c.build_frame(tick, world, sent.feet, now, &own) : c.build_input_ack(tick, now, &own);
    ASSERT_LE(frame.size(), kMaxDatagramBytes);
    ASSERT_EQ(p.client.on_datagram(frame, now), wire::ErrorCode::Ok);
    ASSERT_EQ(p.client.input_ack(), tick);
    ASSERT_TRUE(p.client.own_state().has_value()) << "tick " << tick;
    expect_same(exact_own_state(*p.client.own_state()), sent);
    // The own section against what the whole form would take: smaller by the closed form's margin when
    // relative (a coordinate of 32 bits becomes at most 1 + 25), the same size otherwise.
    const ReadMessage read = read_connected_message(p.client.last_packet_message());
    ASSERT_TRUE(read.message.server_frame.own.has_value());
    BitWriter whole;
    write_own_state(whole, own);
    const std::size_t own_bytes = read.message.server_frame.own->size();
    if (tick % 4 == 1) {
      EXPECT_LE(own_bytes + 2, whole.byte_count()) << "tick " << tick;
    } else if (tick % 2 == 0) {
      EXPECT_EQ(own_bytes, whole.byte_count()) << "tick " << tick;
    }
  }
  EXPECT_EQ(p.client.counters().own_states_unresolved, 0u);
}

TEST(OwnStateFrame, TheStateBelongsToItsAcknowledgement) {
  Connected p;
  ClientConnection& c = p.connection();
  std::mt19937 rng(5);
  auto command_run = [&](std::uint64_t s, double now) {
    const auto up = p.client.send_command(command_input(s), double(s), now);
    ASSERT_EQ(c.on_packet(up, kClientAddress, now), wire::ErrorCode::Ok);
    ASSERT_EQ(run_tick(c), 1u);
  };
  command_run(1, kStart);
  const ExactOwnState first = random_state(rng);
  const wire::OwnState first_wire = own_state_on_wire(first.feet, first.motor);
  const auto older = c.build_input_ack(1, kStart, &first_wire);
  command_run(2, kStart + kTickSeconds);
  const ExactOwnState second = random_state(rng);
  const wire::OwnState second_wire = own_state_on_wire(second.feet, second.motor);
  const auto newer = c.build_input_ack(2, kStart + kTickSeconds, &second_wire);

  // Reordered: the newer acknowledgement first; the older frame that arrives after it changes nothing.
  ASSERT_EQ(p.client.on_datagram(newer, kStart + 0.1), wire::ErrorCode::Ok);
  ASSERT_EQ(p.client.on_datagram(older, kStart + 0.1), wire::ErrorCode::Ok);
  EXPECT_EQ(p.client.input_ack(), 2u);
  ASSERT_TRUE(p.client.own_state().has_value());
  expect_same(exact_own_state(*p.client.own_state()), second);

  // A newer acknowledgement without the state (an older server): no state rather than a stale one.
  command_run(3, kStart + 2 * kTickSeconds);
  ASSERT_EQ(p.client.on_datagram(c.build_input_ack(3, kStart + 0.2), kStart + 0.2), wire::ErrorCode::Ok);
  EXPECT_EQ(p.client.input_ack(), 3u);
  EXPECT_FALSE(p.client.own_state().has_value());
}

}  // namespace
}  // namespace shiftcast
