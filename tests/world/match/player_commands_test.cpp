// Simulation::set_inputs: every command a player sends runs exactly once, one motor step each. Oracle: a
// second simulation of the same level that runs the same commands one per tick (set_input); after each
// tick of the first, the two players must agree bit for bit (pose, motor state, shots fired), on a real
// level with walls and stairs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tests/support/walled_room.hpp"
#include "world/level/compiled_level.hpp"
#include "world/level/map_import.hpp"
#include "world/match/simulation.hpp"

namespace shiftcast {
namespace {

#ifdef SHIFTCAST_SANITIZE
constexpr int kTicks = 300;
#else
constexpr int kTicks = 3000;
#endif
constexpr float kSpawnOriginAboveFeet = 24;  // as the server places players

// The real map when fetched (stairs, ramps, pillars), else the shipped arena.
struct Level {
  CompiledLevel compiled;
  Vec3 spawn{};
};
Level load_level() {
  const std::string real = std::string(SHIFTCAST_SOURCE_DIR) + "/data/openarena/maps/oa_dm1.bsp";
  const std::string path =
      std::filesystem::exists(real) ? real : std::string(SHIFTCAST_SOURCE_DIR) + "/configs/levels/arena.map";
  LevelResult imported = import_level_file(path);
  EXPECT_TRUE(imported.ok()) << path;
  CompiledLevelResult compiled = compile_level(std::move(imported.level), {}, {});
  EXPECT_TRUE(compiled.ok()) << compiled.message;
  Level out{std::move(compiled.level), {}};
  EXPECT_FALSE(out.compiled.level.spawns.empty());
  out.spawn = out.compiled.level.spawns[0].origin - Vec3{0, 0, kSpawnOriginAboveFeet};
  return out;
}

// Long stretches of running in one direction (into walls, up and down stairs), strafing, jumping and
// firing, from a fixed seed; the mapping from the generator's integers is the test's own.
std::vector<PlayerInput> commands(std::uint32_t seed, int count) {
  std::mt19937 rng(seed);
  std::vector<PlayerInput> out;
  PlayerInput in;
  for (int c = 0; c < count; ++c) {
    if (c % 48 == 0) {
      in.forward = float(int(rng() % 3) - 1);
      in.right = float(int(rng() % 3) - 1);
      in.yaw = float(int(rng() % 64)) * (6.2831853f / 64) - 3.1415926f;
    }
    in.buttons = 0;
    if (rng() % 12 == 0) in.buttons |= kButtonJump;
    if (rng() % 40 == 0) in.buttons |= kButtonFire;
    out.push_back(in);
  }
  return out;
}

void expect_same_player(const Simulation& a, EntityId pa, const Simulation& b, EntityId pb, int tick) {
  const Entity& ea = *a.find(pa);
  const Entity& eb = *b.find(pb);
  ASSERT_EQ(ea.pose.position, eb.pose.position) << "tick " << tick;
  ASSERT_EQ(ea.pose.yaw, eb.pose.yaw) << "tick " << tick;
  const MotorState& ma = *a.motor_state(pa);
  const MotorState& mb = *b.motor_state(pb);
  ASSERT_EQ(ma.velocity, mb.velocity) << "tick " << tick;
  ASSERT_EQ(ma.on_ground, mb.on_ground) << "tick " << tick;
  ASSERT_EQ(ma.ground_normal, mb.ground_normal) << "tick " << tick;
  ASSERT_EQ(ma.ground_brush, mb.ground_brush) << "tick " << tick;
  ASSERT_EQ(ma.jump_held, mb.jump_held) << "tick " << tick;
  ASSERT_EQ(a.counters().projectiles_fired, b.counters().projectiles_fired) << "tick " << tick;
}

TEST(PlayerCommands, KCommandsInOneTickEqualKTicksOfOneCommand) {
  const Level level = load_level();
  SimulationConfig config;
  Simulation bunched(level.compiled.tree, nullptr, config);  // 0..4 commands per tick
  Simulation paced(level.compiled.tree, nullptr, config);    // the oracle: one command per tick
  const EntityId a = bunched.add_player(level.spawn, 0);
  const EntityId b = paced.add_player(level.spawn, 0);
  ASSERT_NE(a, kNoEntity);
  ASSERT_NE(b, kNoEntity);

  const std::vector<PlayerInput> all = commands(11, 2 * kTicks + 8);
  std::mt19937 rng(12);
  std::size_t next = 0;
  float z_min = level.spawn.z, z_max = level.spawn.z;
  int bunched_ticks = 0, empty_ticks = 0;
  std::vector<PlayerInput> tick_commands;
  for (int t = 0; t < kTicks && next + 4 <= all.size(); ++t) {
    const std::size_t k = rng() % 5;  // 0: the client's commands were late; 2..4: they came together
    tick_commands.assign(all.begin() + std::ptrdiff_t(next), all.begin() + std::ptrdiff_t(next + k));
    bunched.set_inputs(a, tick_commands);
    bunched.step();
    for (const PlayerInput& in : tick_commands) {
      paced.set_input(b, in);
      paced.step();
    }
    next += k;
    bunched_ticks += k > 1;
    empty_ticks += k == 0;
    expect_same_player(bunched, a, paced, b, t);
    if (HasFatalFailure()) return;
    z_min = std::min(z_min, bunched.find(a)->pose.position.z);
    z_max = std::max(z_max, bunched.find(a)->pose.position.z);
  }
  EXPECT_GT(bunched_ticks, kTicks / 4);
  EXPECT_GT(empty_ticks, kTicks / 10);
  EXPECT_GT(z_max - z_min, config.motor.step_height);  // it climbed or fell: stairs, ledges
  EXPECT_GT(bunched.counters().projectiles_fired, 0u);
  EXPECT_GT(bunched.counters().contacts, 0u);  // it ran into walls
  EXPECT_EQ(bunched.count_overlaps_brute_force(), 0);
}

TEST(PlayerCommands, NoCommandsMeansNoMotorStep) {
  const Level level = load_level();
  SimulationConfig config;
  Simulation sim(level.compiled.tree, nullptr, config);
  const EntityId p = sim.add_player(level.spawn, 0);
  for (int t = 0; t < 64; ++t)
    sim.step();  // settle on the floor
  ASSERT_TRUE(sim.motor_state(p)->on_ground);
  PlayerInput run;
  run.forward = 1;
  const PlayerInput one[1] = {run};
  sim.set_inputs(p, one);
  sim.step();
  const Vec3 after_one = sim.find(p)->pose.position;
  ASSERT_GT(sim.motor_state(p)->velocity.x, 0);  // running at yaw 0

  // No command: the player stays exactly where its last command left it, tick after tick.
  for (int t = 0; t < 32; ++t) {
    sim.set_inputs(p, {});
    sim.step();
    ASSERT_EQ(sim.find(p)->pose.position, after_one) << "tick " << t;
  }
  // Without set_inputs it runs its last command again (the old contract, kept): it moves on.
  sim.step();
  EXPECT_GT(sim.find(p)->pose.position.x, after_one.x);
}

TEST(PlayerCommands, AnInvalidCommandIsCountedAndRunsAsNoInput) {
  const Level level = load_level();
  SimulationConfig config;
  Simulation bunched(level.compiled.tree, nullptr, config);
  Simulation paced(level.compiled.tree, nullptr, config);
  const EntityId a = bunched.add_player(level.spawn, 0);
  const EntityId b = paced.add_player(level.spawn, 0);
  PlayerInput run;
  run.forward = 1;
  run.yaw = 1;
  PlayerInput bad = run;
  bad.right = std::numeric_limits<float>::quiet_NaN();
  const PlayerInput three[3] = {run, bad, run};
  bunched.set_inputs(a, three);
  bunched.step();
  for (const PlayerInput& in : {run, PlayerInput{}, run}) {
    paced.set_input(b, in);
    paced.step();
  }
  EXPECT_EQ(bunched.counters().invalid_inputs, 1u);
  expect_same_player(bunched, a, paced, b, 0);
}

// The overlap the load ladder met under bunched commands (issue 13): a projectile joins where it was fired
// only after everyone moved, so when the shooter's later commands of the tick take it away and another
// player walks into the spot, the shot is inside that player. It has hit it, point-blank: one hit, one
// contact between the shot and that player, no invariant violation, no re-placement. Two players run side
// by side, B 32 units behind A; in one tick A fires with the first of four commands and B runs four:
// B's axis ends 17 units from the shot's centre, within its radius + the shot's (19).
TEST(PlayerCommands, AShotFiredWhereAnotherPlayerWalksInHitsItPointBlank) {
  const BspTree tree = walled_room({});
  SimulationConfig config;
  Simulation sim(tree, nullptr, config);
  const EntityId a = sim.add_player({0, 0, 0.5f}, 0);
  const EntityId b = sim.add_player({-32, 0, 0.5f}, 0);
  PlayerInput run;
  run.forward = 1;
  const PlayerInput one[1] = {run};
  for (int t = 0; t < 48; ++t) {  // both at run speed, still 32 apart
    sim.set_inputs(a, one);
    sim.set_inputs(b, one);
    sim.step();
  }
  ASSERT_NEAR(sim.find(a)->velocity.x, config.motor.run_speed, 1.0f);
  ASSERT_NEAR(sim.find(a)->pose.position.x - sim.find(b)->pose.position.x, 32.0f, 0.01f);
  ASSERT_EQ(sim.counters().projectiles_fired, 0u);

  PlayerInput fire = run;
  fire.buttons = kButtonFire;
  const PlayerInput shooter[4] = {fire, run, run, run};
  const PlayerInput runner[4] = {run, run, run, run};
  const float a_start = sim.find(a)->pose.position.x;
  sim.set_inputs(a, shooter);
  sim.set_inputs(b, runner);
  sim.step();
  // The closed form of the premise: the shot left from A's axis after its first command (a quarter of
  // A's displacement this tick), and B's axis is within 15 + 4 of it.
  const float step = (sim.find(a)->pose.position.x - a_start) / 4;
  const float shot_x = a_start + step;
  ASSERT_LT(shot_x - sim.find(b)->pose.position.x, config.motor.radius + config.projectile_radius);

  EXPECT_EQ(sim.counters().projectiles_fired, 1u);
  EXPECT_EQ(sim.counters().projectile_hits, 1u);
  EXPECT_EQ(sim.counters().point_blank_hits, 1u);
  EXPECT_EQ(sim.counters().invariant_violations, 0u);
  EXPECT_EQ(sim.counters().replacements, 0u);
  int hits_on_b = 0;
  for (const Contact& c : sim.contacts()) {
    if (c.a != b && c.b != b) continue;
    const EntityId other = c.a == b ? c.b : c.a;
    if (other == a || other == kNoEntity) continue;  // the other player, the floor
    ++hits_on_b;
    EXPECT_EQ(sim.find(other), nullptr);  // the shot, removed with its hit
    // The normal runs from a to b; from B the shot lies ahead, along +x.
    EXPECT_GT(c.a == b ? c.normal.x : -c.normal.x, 0.0f);
  }
  EXPECT_EQ(hits_on_b, 1);
  for (const Entity& e : sim.entities())
    EXPECT_NE(e.kind, EntityKind::kProjectile);
  EXPECT_EQ(sim.count_overlaps_brute_force(), 0);
}

}  // namespace
}  // namespace shiftcast
