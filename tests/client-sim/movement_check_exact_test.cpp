// MovementCheck corrected from the server's exact state (ServerFrame.own) rather than a quantized
// snapshot position. Oracles: the server's trajectory computed by a second, independent run of the
// character motor (from the same start, or from a state forced to differ at one command), which an exact
// correction must reproduce bit for bit; and the quantized fallback on the same run, which cannot.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "client-sim/level_motor_world.hpp"
#include "client-sim/movement_check.hpp"
#include "collision/brush.hpp"
#include "collision/bsp_build.hpp"
#include "protocol/snapshot_delta.hpp"
#include "tests/support/walled_room.hpp"

namespace shiftcast {
namespace {

constexpr float kDt = 1.0f / 64;
constexpr std::uint64_t kCommands = 480;
constexpr std::uint64_t kForcedAt = 200;  // an acknowledged sequence (acks come for even ones)
constexpr std::uint64_t kAckLag = 6;      // commands in flight when an acknowledgement arrives

BspTree room() {
  return walled_room(
      {brush_from_box({200, -100, 0}, {300, 100, 96}), brush_from_box({-400, 300, 0}, {-300, 400, 40})});
}

std::vector<PlayerInput> inputs(std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<PlayerInput> out(kCommands + 1);
  float yaw = 0.3f, right = 0;
  for (std::uint64_t s = 1; s <= kCommands; ++s) {
    if (s % 24 == 0) right = float(int(rng() % 3) - 1);
    yaw += float(int(rng() % 7) - 3) * 0.03f;
    PlayerInput& in = out[s];
    in.forward = rng() % 10 == 0 ? 0.0f : 1.0f;
    in.right = right;
    in.yaw = std::remainder(yaw, 6.2831853f);
    in.buttons = rng() % 16 == 0 ? kButtonJump : 0;
  }
  return out;
}

struct ServerRun {
  std::vector<Vec3> feet;
  std::vector<MotorState> state;
};

// The server's trajectory: move_character from `start`; with `force`, the state after command kForcedAt
// is replaced (a shove the client could not predict: position, velocity, airborne, jump held).
ServerRun server_run(const LevelMotorWorld& world, const std::vector<PlayerInput>& in, bool force) {
  const MotorConfig config;
  ServerRun r{std::vector<Vec3>(kCommands + 1), std::vector<MotorState>(kCommands + 1)};
  Vec3 feet{0, 0, kSurfaceBackoff};
  MotorState state;
  for (std::uint64_t s = 1; s <= kCommands; ++s) {
    feet = move_character(config, world, feet, state, in[s], kDt).position;
    if (force && s == kForcedAt) {
      feet += Vec3{-9.3f, 4.7f, 21.1f};
      state.velocity = {-250.5f, 140.25f, 180.75f};
      state.on_ground = false;
      state.ground_normal = {};
      state.ground_brush = kNoBrush;
      state.jump_held = true;
    }
    r.feet[s] = feet;
    r.state[s] = state;
  }
  return r;
}

struct Sample {
  std::uint64_t acked;
  float error;
};

// The client predicts every command; every second command an acknowledgement of the command kAckLag
// behind arrives, with the exact state (or, `quantized`, only the snapshot's quantized position).
std::vector<Sample> run_client(MovementCheck& check, const std::vector<PlayerInput>& in,
                               const ServerRun& server, bool quantized, Vec3* feet_after_forced = nullptr) {
  check.start({0, 0, kSurfaceBackoff}, 0);
  std::vector<Sample> samples;
  for (std::uint64_t s = 1; s <= kCommands; ++s) {
    check.predict(s, in[s]);
    if (s % 2 != 0 || s <= kAckLag) continue;
    const std::uint64_t acked = s - kAckLag;
    std::optional<float> e;
    if (quantized) {
      const Vec3 p = server.feet[acked];
      const wire::Vec3f q = dequantize_position(quantize_position(wire::Vec3f(p.x, p.y, p.z)));
      e = check.on_authoritative(acked, {q.x(), q.y(), q.z()});
    } else {
      e = check.on_authoritative(acked, server.feet[acked], server.state[acked]);
    }
    if (e) samples.push_back({acked, *e});
    if (acked == kForcedAt && feet_after_forced != nullptr) *feet_after_forced = check.feet();
  }
  return samples;
}

TEST(MovementCheckExact, AgreementReportsZeroNotQuantization) {
  const BspTree tree = room();
  const LevelMotorWorld world(tree, {});
  const std::vector<PlayerInput> in = inputs(11);
  const ServerRun server = server_run(world, in, false);
  MovementCheck check({}, world, kDt);
  const std::vector<Sample> samples = run_client(check, in, server, false);
  ASSERT_EQ(samples.size(), std::size_t((kCommands - kAckLag) / 2));
  for (const Sample& s : samples)
    EXPECT_EQ(s.error, 0.0f) << "acked " << s.acked;
  EXPECT_EQ(check.corrections(), 0u);

  // The same run through quantized snapshots does report quantization: the exact samples are not it.
  MovementCheck fallback({}, world, kDt);
  float largest = 0;
  for (const Sample& s : run_client(fallback, in, server, true))
    largest = std::max(largest, s.error);
  EXPECT_GT(largest, 0.0f);
  EXPECT_LE(largest, kSnapshotQuantizationError);
}

TEST(MovementCheckExact, CorrectionReplaysToExactlyASecondMotorRunFromTheServersState) {
  const BspTree tree = room();
  const LevelMotorWorld world(tree, {});
  const std::vector<PlayerInput> in = inputs(11);
  const ServerRun server = server_run(world, in, true);
  MovementCheck check({}, world, kDt);
  Vec3 feet_after{};
  const std::vector<Sample> samples = run_client(check, in, server, false, &feet_after);
  // Right after the correction the replay of the kAckLag unacknowledged commands is the server's own
  // trajectory to the bit.
  const Vec3 want = server.feet[kForcedAt + kAckLag];
  EXPECT_EQ(feet_after.x, want.x);
  EXPECT_EQ(feet_after.y, want.y);
  EXPECT_EQ(feet_after.z, want.z);
  int forced = 0;
  for (const Sample& s : samples) {
    if (s.acked == kForcedAt) {
      ++forced;
      EXPECT_GT(s.error, 20.0f);  // the forced miss is reported in full
    } else {
      EXPECT_EQ(s.error, 0.0f) << "acked " << s.acked;  // before it and after the correction
    }
  }
  EXPECT_EQ(forced, 1);
  EXPECT_EQ(check.corrections(), 1u);
  EXPECT_EQ(check.motor().velocity.x, server.state[kCommands].velocity.x);
  EXPECT_EQ(check.feet().z, server.feet[kCommands].z);

  // The quantized fallback moves the feet only and keeps the predicted velocity: it misses again after
  // its correction, which is what the exact state removes.
  MovementCheck fallback({}, world, kDt);
  float after = 0;
  for (const Sample& s : run_client(fallback, in, server, true))
    if (s.acked > kForcedAt) after = std::max(after, s.error);
  EXPECT_GT(after, 1.0f);
}

TEST(MovementCheckExact, AMissInTheMotorStateAloneIsCorrected) {
  // Same feet, different velocity: the position sample is 0, yet the prediction restarts from the
  // server's state, so the next acknowledgement agrees.
  const BspTree tree = room();
  const LevelMotorWorld world(tree, {});
  MovementCheck check({}, world, kDt);
  check.start({0, 0, kSurfaceBackoff}, 0);
  PlayerInput run;
  run.forward = 1;
  for (std::uint64_t s = 1; s <= 10; ++s)
    check.predict(s, run);
  MotorState server = check.motor();
  const Vec3 feet_at_6 = [&] {
    MovementCheck probe({}, world, kDt);
    probe.start({0, 0, kSurfaceBackoff}, 0);
    for (std::uint64_t s = 1; s <= 6; ++s)
      probe.predict(s, run);
    server = probe.motor();
    return probe.feet();
  }();
  server.velocity.x = -server.velocity.x;
  const std::optional<float> e = check.on_authoritative(6, feet_at_6, server);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(*e, 0.0f);
  EXPECT_EQ(check.corrections(), 1u);
  // Oracle: the motor run from that state over commands 7..10.
  Vec3 feet = feet_at_6;
  MotorState state = server;
  for (int s = 7; s <= 10; ++s)
    feet = move_character({}, world, feet, state, run, kDt).position;
  EXPECT_EQ(check.feet().x, feet.x);
  EXPECT_EQ(check.feet().y, feet.y);
  EXPECT_EQ(check.motor().velocity.x, state.velocity.x);
}

}  // namespace
}  // namespace shiftcast
