// MovementCheck and LevelMotorWorld without a server. Oracles: the server's own Simulation (a lone player
// moved by it must be predicted bit for bit), and synthetic authoritative trajectories made by the same
// motor with a known offset injected at one command, whose samples are then known exactly.
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
#include "world/level/compiled_level.hpp"
#include "world/match/bot_driver.hpp"
#include "world/match/simulation.hpp"

namespace shiftcast {
namespace {

constexpr int kTickRate = 64;
constexpr float kDt = 1.0f / kTickRate;
constexpr int kCommands = 480;
// Sums of floats a few hundred units large: a few ulps.
constexpr float kFloatNoise = 1e-4f;
// The injected error: horizontal and vertical, 13 units in all.
const Vec3 kOffset{3, -4, 12};
constexpr float kOffsetLength = 13;
constexpr std::uint64_t kInjectedAt = 200;  // an acknowledged sequence (the snapshots ack even ones)
constexpr std::uint64_t kAckLag = 2;        // commands in flight when a snapshot arrives

// A room: floor, four walls and a block to run into, so the trajectory slides along walls too.
BspTree room() {
  return walled_room({brush_from_box({200, -100, 0}, {300, 100, 96})});
}

// Running, turning, strafing and jumping, from a fixed seed.
std::vector<PlayerInput> inputs(std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<PlayerInput> out(kCommands + 1);
  float yaw = 0;
  float right = 0;
  for (int s = 1; s <= kCommands; ++s) {
    if (s % 24 == 0) right = float(int(rng() % 3) - 1);
    yaw += float(int(rng() % 7) - 3) * 0.02f;
    PlayerInput& in = out[std::size_t(s)];
    in.forward = 1;
    in.right = right;
    in.yaw = std::remainder(yaw, 6.2831853f);
    in.buttons = rng() % 16 == 0 ? kButtonJump : 0;
  }
  return out;
}

struct Sample {
  std::uint64_t acked;
  float error;
};

// The server's trajectory (the same motor, kOffset added after command `inject`), and the client's
// samples when every second command a snapshot acknowledges the command kAckLag behind it.
std::vector<Sample> run_check(const LevelMotorWorld& world, std::uint64_t inject, bool quantized,
                              MovementCheck* out_check = nullptr) {
  const std::vector<PlayerInput> in = inputs(7);
  const Vec3 start{0, 0, kSurfaceBackoff};
  const MotorConfig config;
  std::vector<Vec3> server(kCommands + 1);
  Vec3 feet = start;
  MotorState state;
  for (std::size_t s = 1; s <= kCommands; ++s) {
    feet = move_character(config, world, feet, state, in[s], kDt).position;
    if (s == inject) feet += kOffset;
    server[s] = feet;
  }
  MovementCheck local(config, world, kDt);
  MovementCheck& check = out_check != nullptr ? *out_check : local;
  check.start(start, 0);
  std::vector<Sample> samples;
  for (std::uint64_t s = 1; s <= kCommands; ++s) {
    check.predict(s, in[s]);
    if (s % 2 != 0 || s <= kAckLag) continue;
    const std::uint64_t acked = s - kAckLag;
    Vec3 p = server[acked];
    if (quantized) {
      const wire::Vec3f q = dequantize_position(quantize_position(wire::Vec3f(p.x, p.y, p.z)));
      p = {q.x(), q.y(), q.z()};
    }
    if (const std::optional<float> e = check.on_authoritative(acked, p)) samples.push_back({acked, *e});
  }
  return samples;
}

TEST(MovementCheck, SamplesAreZeroExceptTheInjectedOffset) {
  const BspTree tree = room();
  const LevelMotorWorld world(tree, {});
  MovementCheck check({}, world, kDt);
  const std::vector<Sample> samples = run_check(world, kInjectedAt, false, &check);
  ASSERT_EQ(samples.size(), std::size_t((kCommands - kAckLag) / 2));
  int injected = 0;
  for (const Sample& s : samples) {
    if (s.acked == kInjectedAt) {
      ++injected;
      EXPECT_NEAR(s.error, kOffsetLength, kFloatNoise);
    } else {
      EXPECT_LE(s.error, kFloatNoise) << "acked " << s.acked;
    }
  }
  EXPECT_EQ(injected, 1);
  EXPECT_EQ(check.corrections(), 1u);  // only the offset is corrected; exact agreement needs nothing
}

TEST(MovementCheck, WithoutAnOffsetNothingIsCorrected) {
  const BspTree tree = room();
  const LevelMotorWorld world(tree, {});
  MovementCheck check({}, world, kDt);
  for (const Sample& s : run_check(world, 0, false, &check))
    EXPECT_EQ(s.error, 0.0f) << "acked " << s.acked;
  EXPECT_EQ(check.corrections(), 0u);
}

TEST(MovementCheck, QuantizedSnapshotsStayWithinQuantization) {
  const BspTree tree = room();
  const LevelMotorWorld world(tree, {});
  for (const Sample& s : run_check(world, kInjectedAt, true)) {
    if (s.acked == kInjectedAt) {
      EXPECT_NEAR(s.error, kOffsetLength, kSnapshotQuantizationError);
    } else {
      // Before the offset only the snapshot's rounding; after the correction to a rounded position, the
      // rounding of that position too.
      EXPECT_LE(s.error, (s.acked < kInjectedAt ? 1 : 2) * kSnapshotQuantizationError) << "acked " << s.acked;
    }
  }
}

TEST(MovementCheck, OnlyNewerAcknowledgementsGiveSamples) {
  const BspTree tree = room();
  const LevelMotorWorld world(tree, {});
  const MotorConfig config;
  MovementCheck check(config, world, kDt);
  const Vec3 start{0, 0, kSurfaceBackoff};
  check.start(start, 10);  // commands up to 10 were sent before the first snapshot
  PlayerInput run;
  run.forward = 1;
  const Vec3 after_11 = check.predict(11, run);
  check.predict(12, run);

  EXPECT_FALSE(check.on_authoritative(10, start));     // from before the prediction started
  EXPECT_FALSE(check.on_authoritative(13, after_11));  // never sent
  const std::optional<float> e = check.on_authoritative(11, after_11 + Vec3{0, 2, 0});
  ASSERT_TRUE(e);
  EXPECT_NEAR(*e, 2.0f, kFloatNoise);
  EXPECT_FALSE(check.on_authoritative(11, after_11));  // the same acknowledgement again
  // The correction moved command 12's prediction by the same 2 units (open floor, same velocity).
  MotorState state;
  Vec3 feet = move_character(config, world, start, state, run, kDt).position + Vec3{0, 2, 0};
  feet = move_character(config, world, feet, state, run, kDt).position;
  EXPECT_EQ(check.feet(), feet);
}

TEST(MovementCheck, AcknowledgementOlderThanTheHistoryTakesTheServersPosition) {
  const BspTree tree = room();
  const LevelMotorWorld world(tree, {});
  MovementCheck check({}, world, kDt);
  check.start({0, 0, kSurfaceBackoff}, 0);
  PlayerInput idle;
  for (std::uint64_t s = 1; s <= kPredictionHistory + 5; ++s)
    check.predict(s, idle);
  const Vec3 server{100, 50, kSurfaceBackoff};
  EXPECT_FALSE(check.on_authoritative(2, server));  // overwritten in the history
  EXPECT_EQ(check.feet(), server);
  EXPECT_EQ(check.corrections(), 1u);
}

// Outside the prediction sample the check runs no motor: it steers by the newest state the server sent,
// never older, and gives no sample however far the server's position is from the last one.
TEST(MovementCheck, AClientThatDoesNotPredictFollowsTheServer) {
  const BspTree tree = room();
  const LevelMotorWorld world(tree, {});
  MovementCheck check({}, world, kDt);
  check.set_predicting(false);
  const Vec3 start{0, 0, kSurfaceBackoff};
  check.start(start, 10);
  PlayerInput run;
  run.forward = 1;
  EXPECT_EQ(check.predict(11, run), start);  // a predicting check would have moved
  check.predict(12, run);
  check.predict(13, run);
  EXPECT_EQ(check.last_sequence(), 13u);
  MotorState server;
  server.velocity = {320, 0, 0};
  server.on_ground = true;
  server.ground_normal = {0, 0, 1};
  const Vec3 at_12{40, 7, kSurfaceBackoff};
  EXPECT_FALSE(check.on_authoritative(12, at_12, server));
  EXPECT_EQ(check.feet(), at_12);
  EXPECT_EQ(check.motor().velocity, server.velocity);
  EXPECT_TRUE(check.motor().on_ground);
  EXPECT_FALSE(check.on_authoritative(11, start, MotorState{}));  // a late frame's older state
  EXPECT_EQ(check.feet(), at_12);
  const Vec3 at_13{45, 7, kSurfaceBackoff};
  EXPECT_FALSE(check.on_authoritative(13, at_13));  // a snapshot's position alone: the feet follow
  EXPECT_EQ(check.feet(), at_13);
  EXPECT_EQ(check.motor().velocity, server.velocity);
  EXPECT_EQ(check.corrections(), 0u);
  EXPECT_EQ(check.replayed_commands(), 0u);

  // The same calls on a predicting check: it moves and samples (what the flag turns off).
  MovementCheck predicting({}, world, kDt);
  predicting.start(start, 10);
  EXPECT_NE(predicting.predict(11, run), start);
  predicting.predict(12, run);
  EXPECT_TRUE(predicting.on_authoritative(12, at_12, server));
}

TEST(MovementCheck, PositionRoundedIntoTheFloorIsLiftedOut) {
  const BspTree tree = room();
  const LevelMotorWorld world(tree, {});
  const MotorConfig config;
  MovementCheck check(config, world, kDt);
  check.start({0, 0, kSurfaceBackoff}, 0);
  PlayerInput run;
  run.forward = 1;
  const Vec3 predicted = check.predict(1, run);
  // A snapshot a little to the side and 1/64 into the floor (what rounding can do to a position the
  // server held 1/32 above a floor that is not on the quantum grid).
  const Vec3 in_floor{predicted.x, predicted.y + 1, -1.0f / 64};
  ASSERT_FALSE(world.free(in_floor));
  ASSERT_TRUE(check.on_authoritative(1, in_floor));
  EXPECT_TRUE(world.free(check.feet()));
  EXPECT_LE(length(check.feet() - in_floor), kPositionQuantum);
  const Vec3 before = check.feet();
  check.predict(2, run);
  EXPECT_GT(check.feet().x, before.x);  // moving again: not stuck
}

// The oracle is the server's simulation itself: one player alone in the arena, driven by a bot, must be
// predicted by the level-only motor world exactly, tick after tick.
TEST(LevelMotorWorld, PredictsALonePlayerOfTheSimulationBitForBit) {
  LevelResult imported = import_level_file(std::string(SHIFTCAST_SOURCE_DIR) + "/configs/levels/arena.map");
  ASSERT_TRUE(imported.ok());
  CompiledLevelResult compiled = compile_level(std::move(imported.level), {}, {});
  ASSERT_TRUE(compiled.ok()) << compiled.message;
  std::string error;
  const std::unique_ptr<NavMesh> mesh = NavMesh::from_data(compiled.level.navmesh, &error);
  ASSERT_NE(mesh, nullptr) << error;
  const BspTree& tree = compiled.level.tree;
  ASSERT_FALSE(compiled.level.level.spawns.empty());

  SimulationConfig config;
  config.tick_rate = kTickRate;
  Simulation sim(tree, mesh.get(), config);
  constexpr float kSpawnOriginAboveFeet = 24;  // as the server places players
  const Vec3 spawn = compiled.level.level.spawns[0].origin - Vec3{0, 0, kSpawnOriginAboveFeet};
  const EntityId id = sim.add_player(spawn, 0);
  ASSERT_NE(id, kNoEntity);
  sim.step();  // settle onto the floor without input, as before a client's first command

  const LevelMotorWorld world(tree, config.motor);
  MovementCheck check(config.motor, world, kDt);
  check.start(sim.find(id)->pose.position, 0);
  NavQuery nav(*mesh);
  BotDriver bot(BotConfig{.tick_rate = kTickRate}, 3, 0);
  int jumps = 0;
  for (std::uint64_t s = 1; s <= 20 * kTickRate; ++s) {
    const Vec3 feet[1] = {check.feet()};
    const PlayerInput input = bot.think(
        nav, {.feet = check.feet(), .motor = &check.motor(), .players = feet, .self = 0, .level = &tree});
    jumps += (input.buttons & kButtonJump) != 0;
    PlayerInput no_fire = input;
    no_fire.buttons &= std::uint8_t(~kButtonFire);  // projectiles would be entities near the player
    const Vec3 predicted = check.predict(s, no_fire);
    sim.set_input(id, no_fire);
    sim.step();
    ASSERT_EQ(predicted, sim.find(id)->pose.position) << "command " << s;
    const std::optional<float> e = check.on_authoritative(s, sim.find(id)->pose.position);
    ASSERT_TRUE(e);
    ASSERT_EQ(*e, 0.0f);
  }
  EXPECT_GT(bot.repaths(), 1u);  // it went places
  EXPECT_GT(jumps, 0);
  EXPECT_EQ(check.corrections(), 0u);
}

}  // namespace
}  // namespace shiftcast
