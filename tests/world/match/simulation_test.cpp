// The fixed tick as a whole: nothing tunnels, nothing is left overlapping, riders ride, crates sleep, the
// same inputs give the same hashes. Oracles: closed-form kinematics, exact closed-form sphere–cylinder
// distances sampled densely along a projectile's path, and a brute-force overlap count over all pairs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "collision/bsp_build.hpp"
#include "tests/support/seeded_random.hpp"
#include "world/level/map_import.hpp"
#include "world/level/navmesh.hpp"
#include "world/match/simulation.hpp"

namespace shiftcast {
namespace {

// A closed room 4096 wide, floor at z = 0, ceiling at 512, plus any extra brushes.
BspTree room(std::vector<Brush> extra = {}) {
  std::vector<Brush> brushes = {
      brush_from_box({-2064, -2064, -16}, {2064, 2064, 0}),
      brush_from_box({-2064, -2064, 512}, {2064, 2064, 528}),
      brush_from_box({-2064, -2064, 0}, {-2048, 2064, 512}),
      brush_from_box({2048, -2064, 0}, {2064, 2064, 512}),
      brush_from_box({-2048, -2064, 0}, {2048, -2048, 512}),
      brush_from_box({-2048, 2048, 0}, {2048, 2064, 512}),
  };
  for (Brush& b : extra)
    brushes.push_back(std::move(b));
  BspBuildResult r = build_bsp(brushes, {});
  EXPECT_EQ(r.error, BspBuildError::kNone);
  return std::move(r.tree);
}

constexpr std::int32_t kThinWallBrush = 6;  // the first extra brush

// Exact distance between a sphere (centre c, radius r) and an upright cylinder (feet f, radius R, height h).
double sphere_cylinder_distance(Vec3d c, double r, Vec3d f, double radius, double height) {
  const double dx = c.x - f.x, dy = c.y - f.y;
  const double radial = std::max(0.0, std::sqrt(dx * dx + dy * dy) - radius);
  const double vertical = std::max({0.0, f.z - c.z, c.z - (f.z + height)});
  return std::sqrt(radial * radial + vertical * vertical) - r;
}

TEST(Simulation, ProjectilesAtTenThousandUnitsPerSecondNeverPassThroughAThinWallOrAPlayer) {
  const BspTree level = room({brush_from_box({0, -1024, 0}, {1, 1024, 512})});
  std::mt19937 rng(4);
  int wall_hits = 0, player_hits = 0, checked_misses = 0;
  for (int trial = 0; trial < 300; ++trial) {
    SimulationConfig config;
    config.tick_rate = 20;  // 500 units a tick at 10,000 units/s
    Simulation sim(level, nullptr, config);
    const Vec3 feet{uniform_float(rng, -900, -300), uniform_float(rng, -200, 200), 0};
    const EntityId player = sim.add_player(feet, 0);
    Vec3 start, aim;
    do {  // lines that stay above the floor and meet the wall (not pass its end) at its plane
      start = {uniform_float(rng, -1800, -1000), uniform_float(rng, -200, 200), uniform_float(rng, 20, 100)};
      // Aim at the player's body give or take a few radii, so some shots graze and some miss.
      aim = feet + Vec3{0, uniform_float(rng, -40, 40), uniform_float(rng, 6, 70)};
    } while (start.z + (aim.z - start.z) * (-start.x / (aim.x - start.x)) < 10 ||
             std::abs(start.y + (aim.y - start.y) * (-start.x / (aim.x - start.x))) > 1000);
    const Vec3 velocity = normalize(aim - start) * 10000.0f;
    const EntityId shot = sim.add_projectile(start, velocity, kNoEntity);
    const float radius = config.projectile_radius;

    // Oracle: does the swept sphere come within reach of the player before it reaches the wall's plane?
    double min_distance = 1e9;
    for (int k = 0; k <= 200000; ++k) {
      const Vec3d c = to_double(start) + to_double(velocity) * (double(k) * 2e-6);
      if (c.x + radius > 0 || c.z - radius < 0) break;  // reached the wall's plane or the floor
      min_distance = std::min(min_distance, sphere_cylinder_distance(c, radius, to_double(feet), 15, 56));
    }
    bool hit_player = false, hit_wall = false;
    for (int tick = 0; tick < 10 && sim.find(shot) != nullptr; ++tick) {
      sim.step();
      for (const Contact& c : sim.contacts()) {
        if (c.a != shot && c.b != shot) continue;
        if (c.phase != ContactPhase::kBegin) continue;
        if (c.b == player || c.a == player) hit_player = true;
        if (c.b == kNoEntity && c.brush == kThinWallBrush) hit_wall = true;
      }
      if (const Entity* e = sim.find(shot)) {
        ASSERT_LT(e->pose.position.x + radius, 0.0f)
            << "trial " << trial << " from " << start.x << " " << start.y << " " << start.z << " velocity "
            << velocity.x << " " << velocity.y << " " << velocity.z;
      }
    }
    ASSERT_EQ(sim.find(shot), nullptr) << "trial " << trial << ": the shot is still flying";
    EXPECT_TRUE(hit_player || hit_wall) << "trial " << trial;
    if (min_distance < -1e-3) {
      EXPECT_TRUE(hit_player) << "trial " << trial << ": passed through the player (oracle " << min_distance
                              << ")";
    }
    if (min_distance > 2 * kContactDistance) {
      EXPECT_FALSE(hit_player) << "trial " << trial << ": hit empty space (oracle " << min_distance << ")";
      ++checked_misses;
    }
    wall_hits += hit_wall;
    player_hits += hit_player;
  }
  // The sample must exercise both outcomes.
  EXPECT_GT(wall_hits, 50);
  EXPECT_GT(player_hits, 50);
  EXPECT_GT(checked_misses, 50);
}

// Exact distance between a sphere (centre c, radius r) and a box (half extents h) turned by `yaw` about
// its centre `b`.
double sphere_box_distance(Vec3d c, double r, Vec3d b, double yaw, Vec3d h) {
  const Vec3d d = c - b;
  const Vec3d local{std::cos(yaw) * d.x + std::sin(yaw) * d.y, -std::sin(yaw) * d.x + std::cos(yaw) * d.y,
                    d.z};
  const Vec3d out{std::max(0.0, std::abs(local.x) - h.x), std::max(0.0, std::abs(local.y) - h.y),
                  std::max(0.0, std::abs(local.z) - h.z)};
  return length(out) - r;
}

TEST(Simulation, ProjectilesAtTenThousandUnitsPerSecondNeverPassThroughATurnedCrate) {
  const BspTree level = room({brush_from_box({0, -1024, 0}, {1, 1024, 512})});
  std::mt19937 rng(9);
  int crate_hits = 0, checked_misses = 0;
  for (int trial = 0; trial < 200; ++trial) {
    SimulationConfig config;
    config.tick_rate = 20;
    Simulation sim(level, nullptr, config);
    const int model = sim.add_model(make_box_model("crate", {16, 16, 16}).model);
    const Vec3 centre{uniform_float(rng, -900, -300), uniform_float(rng, -200, 200), 16 + kSurfaceBackoff};
    const float yaw = uniform_float(rng, -kPi, kPi);
    const EntityId crate = sim.add_crate(model, {centre, yaw});
    Vec3 start, aim;
    do {
      start = {uniform_float(rng, -1800, -1000), uniform_float(rng, -200, 200), uniform_float(rng, 20, 100)};
      aim = centre + Vec3{0, uniform_float(rng, -30, 30), uniform_float(rng, -8, 30)};
    } while (start.z + (aim.z - start.z) * (-start.x / (aim.x - start.x)) < 10);
    const Vec3 velocity = normalize(aim - start) * 10000.0f;
    const EntityId shot = sim.add_projectile(start, velocity, kNoEntity);
    double min_distance = 1e9;
    for (int k = 0; k <= 200000; ++k) {
      const Vec3d c = to_double(start) + to_double(velocity) * (double(k) * 2e-6);
      if (c.x + config.projectile_radius > 0 || c.z - config.projectile_radius < 0) break;
      min_distance = std::min(min_distance, sphere_box_distance(c, config.projectile_radius,
                                                                to_double(centre), yaw, {16, 16, 16}));
    }
    bool hit_crate = false;
    for (int tick = 0; tick < 10 && sim.find(shot) != nullptr; ++tick) {
      sim.step();
      for (const Contact& c : sim.contacts()) {
        if (c.phase == ContactPhase::kBegin && (c.a == shot || c.b == shot) &&
            (c.a == crate || c.b == crate)) {
          hit_crate = true;
        }
      }
    }
    ASSERT_EQ(sim.find(shot), nullptr) << "trial " << trial;
    if (min_distance < -1e-3) {
      EXPECT_TRUE(hit_crate) << "trial " << trial << ": passed through the crate (oracle " << min_distance
                             << ")";
    }
    if (min_distance > 2 * kContactDistance) {
      EXPECT_FALSE(hit_crate) << "trial " << trial << ": hit empty space (oracle " << min_distance << ")";
      ++checked_misses;
    }
    crate_hits += hit_crate;
  }
  EXPECT_GT(crate_hits, 40);
  EXPECT_GT(checked_misses, 40);
}

TEST(Simulation, AnEntityFoundInsideSolidIsPutBackAtTheNearestFreeSpot) {
  // A room with a pillar; the navmesh knows where players can stand.
  Level level;
  level.brushes = {brush_from_box({-1024, -1024, -16}, {1024, 1024, 0}),
                   brush_from_box({-64, -64, 0}, {64, 64, 256})};
  level.brush_contents = {kContentsSolid, kContentsSolid};
  level.brush_surface_flags = {0, 0};
  compute_level_bounds(level);
  BspBuildResult built = build_bsp(level.brushes, {});
  ASSERT_EQ(built.error, BspBuildError::kNone);
  NavmeshBuild nav = build_navmesh(level, {});
  ASSERT_TRUE(nav.ok()) << nav.error;
  std::string error;
  const std::unique_ptr<NavMesh> mesh = NavMesh::from_data(std::move(nav.data), &error);
  ASSERT_NE(mesh, nullptr) << error;

  SimulationConfig config;
  config.level_check_period = 1;  // tests check every entity every tick, in every build
  Simulation sim(built.tree, mesh.get(), config);
  const EntityId stuck = sim.add_player({40, 0, 0}, 0);  // feet inside the pillar, 24 units from its face
  const EntityId free_player = sim.add_player({-300, 0, 0}, 0);
  sim.step();
  EXPECT_EQ(sim.counters().invariant_violations, 1u);
  EXPECT_EQ(sim.counters().replacements, 1u);
  EXPECT_EQ(sim.count_overlaps_brute_force(), 0);
  const Vec3 now = sim.find(stuck)->pose.position;
  EXPECT_FALSE(built.tree.overlap(Shape::cylinder(15, 56), now).overlap);
  // Nearest: outside the pillar's face and not much farther than a player's width beyond it.
  const float outside = std::max(std::abs(now.x), std::abs(now.y)) - 64;
  EXPECT_GE(outside, 15.0f);
  EXPECT_LE(outside, 15.0f + 64.0f);
  EXPECT_EQ(sim.find(free_player)->pose.position.x, -300.0f);
}

TEST(Simulation, ProjectileContactTimeMatchesTheClosedForm) {
  const BspTree level = room();
  SimulationConfig config;
  config.tick_rate = 64;
  Simulation sim(level, nullptr, config);
  const EntityId player = sim.add_player({0, 0, 0}, 0);
  const float speed = 3000;
  const Vec3 start{-1000, 0, 30};
  const EntityId shot = sim.add_projectile(start, {speed, 0, 0}, kNoEntity);
  // Head on: the sphere's front meets the cylinder's side when the centre is at x = −(15 + 4 + skin).
  const double travel = 1000.0 - (15.0 + config.projectile_radius + kEntitySkin);
  const double ticks = travel / speed * config.tick_rate;
  for (int tick = 0; tick < 64; ++tick) {
    sim.step();
    for (const Contact& c : sim.contacts()) {
      if (c.phase != ContactPhase::kBegin || (c.a != shot && c.b != shot)) continue;
      EXPECT_EQ(c.a == shot ? c.b : c.a, player);
      EXPECT_EQ(double(sim.tick() - 1), std::floor(ticks));
      EXPECT_NEAR(c.time, ticks - std::floor(ticks), 1e-3);
      EXPECT_NEAR(c.relative_speed, speed, 1.0);
      return;
    }
  }
  FAIL() << "no contact";
}

TEST(Simulation, CrateFallsLandsOnTheFloorAndSleeps) {
  const BspTree level = room();
  SimulationConfig config;
  config.tick_rate = 64;
  Simulation sim(level, nullptr, config);
  const int crate_model = sim.add_model(make_box_model("crate", {16, 16, 16}).model);
  const float drop = 100;
  const EntityId crate = sim.add_crate(crate_model, {{0, 0, 16 + drop}, 0});
  // Semi-implicit Euler (v first, then x) lands after the first n with sum_{k=1..n} g·k·dt² >= drop.
  int expected_landing = 0;
  for (double fallen = 0; fallen < drop;) {
    ++expected_landing;
    fallen += config.crate_gravity * expected_landing / (64.0 * 64.0);
  }
  int landed = -1;
  for (int tick = 1; tick <= 200; ++tick) {
    sim.step();
    const Entity* e = sim.find(crate);
    ASSERT_NE(e, nullptr);
    EXPECT_GE(e->pose.position.z, 16.0f);
    if (landed < 0 && e->pose.position.z < 16.5f) landed = tick;
  }
  EXPECT_EQ(landed, expected_landing);
  const Entity* e = sim.find(crate);
  EXPECT_NEAR(e->pose.position.z, 16 + kSurfaceBackoff, 1e-3);
  EXPECT_TRUE(e->asleep);
}

TEST(Simulation, LiftCarriesItsRiderAndADoorNeverOverlapsThePlayerItSwingsInto) {
  const BspTree level = room();
  SimulationConfig config;
  config.tick_rate = 64;
  Simulation sim(level, nullptr, config);
  const int lift_model = sim.add_model(make_box_model("lift", {48, 48, 4}).model);
  std::string error;
  const MoverPath lift_path =
      MoverPath::make({{{{0, 0, 4}, 0}, 0}, {{{0, 0, 132}, 0}, 2}}, PathMode::kPingPong, &error);
  ASSERT_TRUE(error.empty()) << error;
  const EntityId lift = sim.add_kinematic_prop(lift_model, lift_path);
  const EntityId rider = sim.add_player({0, 0, 8 + kSurfaceBackoff}, 0);
  for (int tick = 1; tick <= 128; ++tick) {
    sim.step();
    ASSERT_EQ(sim.count_overlaps_brute_force(), 0) << "tick " << tick;
  }
  // After 2 s the lift is at the top: its top face at 136, the rider on it.
  EXPECT_NEAR(sim.find(lift)->pose.position.z, 132, 1e-3);
  EXPECT_NEAR(sim.find(rider)->pose.position.z, 136, 0.5);
  EXPECT_TRUE(sim.motor_state(rider)->on_ground);
  EXPECT_EQ(sim.motor_state(rider)->ground_entity, lift);

  // A door swinging through a standing player next to a wall pushes it or stops; nothing ever overlaps.
  Simulation door_sim(level, nullptr, config);
  const int door_model = door_sim.add_model(make_box_model("door", {32, 2, 48}).model);
  const MoverPath swing =
      MoverPath::make({{{{2000, 0, 48}, 0}, 0}, {{{2000, 0, 48}, kPi / 2}, 1}}, PathMode::kOnce, &error);
  ASSERT_TRUE(error.empty()) << error;
  door_sim.add_kinematic_prop(door_model, swing);
  door_sim.add_player({2000, 40, 0}, 0);  // in the door's sweep, with the wall behind at x = 2048
  for (int tick = 1; tick <= 96; ++tick) {
    door_sim.step();
    ASSERT_EQ(door_sim.count_overlaps_brute_force(), 0) << "tick " << tick;
  }
}

// Seeded random play: what a busy match looks like without a navmesh.
struct BusyMatch {
  std::vector<EntityId> players;
  std::mt19937 rng{11};
  void inputs(Simulation& sim) {
    for (std::size_t i = 0; i < players.size(); ++i) {
      PlayerInput in;
      in.forward = uniform_float(rng, -1, 1);
      in.right = uniform_float(rng, -1, 1);
      in.yaw = uniform_float(rng, -kPi, kPi);
      in.pitch = uniform_float(rng, -0.3f, 0.3f);
      const std::uint32_t dice = rng();
      in.buttons =
          std::uint8_t(((dice & 15) == 0 ? kButtonJump : 0) | ((dice & 0x30) == 0 ? kButtonFire : 0));
      sim.set_input(players[i], in);
    }
  }
};

void populate(Simulation& sim, BusyMatch& match, int players, int crates) {
  const int crate_model = sim.add_model(make_box_model("crate", {16, 16, 16}).model);
  const int lift_model = sim.add_model(make_box_model("lift", {48, 48, 4}).model);
  std::string error;
  sim.add_kinematic_prop(lift_model, MoverPath::make({{{{-400, 400, 4}, 0}, 0}, {{{-400, 400, 100}, 0}, 1.5}},
                                                     PathMode::kPingPong, &error));
  for (int i = 0; i < players; ++i) {
    const float a = 2 * kPi * float(i) / float(players);
    match.players.push_back(sim.add_player({300 * std::cos(a), 300 * std::sin(a), 1}, a));
  }
  // Crates on a grid of free spots (the arena has pillars; a crate placed in one would be re-placed).
  for (int i = 0, placed = 0; placed < crates && i < 400; ++i) {
    const Vec3 p{-700.0f + 70.0f * float(i % 20), -700.0f + 70.0f * float(i / 20), 80};
    if (sim.level().overlap(Shape::box({20, 20, 20}), p).overlap) continue;
    sim.add_crate(crate_model, {p, 0});
    ++placed;
  }
}

TEST(Simulation, NothingOverlapsAfterAnyTickOfABusyMatch) {
  const LevelResult arena = import_map_file(std::string(SHIFTCAST_SOURCE_DIR) + "/configs/levels/arena.map");
  ASSERT_TRUE(arena.ok()) << arena.error.describe();
  BspBuildResult built = build_bsp(arena.level.brushes, {});
  ASSERT_EQ(built.error, BspBuildError::kNone);
  SimulationConfig config;
  config.tick_rate = 64;
  config.level_check_period = 1;
  Simulation sim(built.tree, nullptr, config);
  BusyMatch match;
  populate(sim, match, 16, 16);
  std::uint64_t contacts = 0;
  for (int tick = 1; tick <= 1500; ++tick) {
    match.inputs(sim);
    sim.step();
    ASSERT_EQ(sim.count_overlaps_brute_force(), 0) << "tick " << tick;
    contacts += sim.contacts().size();
  }
  EXPECT_EQ(sim.counters().invariant_violations, 0u);
  EXPECT_GT(sim.counters().projectiles_fired, 100u);
  EXPECT_GT(sim.counters().projectile_hits, 50u);
  EXPECT_GT(contacts, 1000u);
}

// Changed by issue 13's skin guard (world/match/entity_sweep.cpp, kEntityRestGap): players pressed against
// each other for many ticks used to wear the skin down to an overlap; now a move that would end nearer than
// half the skin to a neighbour, and nearer than it started, is blocked there, which changes trajectories.
constexpr std::uint64_t kPinnedBusyMatchHash = 0x22262c66f9510876;

TEST(Simulation, TenThousandTicksOfABusyMatchHashTheSameTwice) {
  const LevelResult arena = import_map_file(std::string(SHIFTCAST_SOURCE_DIR) + "/configs/levels/arena.map");
  ASSERT_TRUE(arena.ok());
  BspBuildResult built = build_bsp(arena.level.brushes, {});
  SimulationConfig config;
  config.tick_rate = 128;
  config.level_check_period = kReleaseLevelCheckPeriod;
  std::vector<std::uint64_t> first;
  for (int run = 0; run < 2; ++run) {
    Simulation sim(built.tree, nullptr, config);
    BusyMatch match;
    populate(sim, match, 16, 8);
    for (int tick = 0; tick < 10000; ++tick) {
      match.inputs(sim);
      sim.step();
      if (run == 0) {
        first.push_back(sim.state_hash());
      } else if (sim.state_hash() != first[std::size_t(tick)]) {
        FAIL() << "hashes differ at tick " << tick + 1;
      }
    }
  }
  // Pinned, as Box2D pins its determinism test: any change to what a tick computes changes this value.
  // A deliberate change updates it (and says why in the commit); an accidental one is caught here.
  EXPECT_EQ(first.back(), kPinnedBusyMatchHash) << std::hex << "0x" << first.back();
}

// The grid is only a cull: any cell size gives the same candidates after the exact tests, so the derived
// size (world/simulation.cpp) is free to follow speed. Oracle: the same busy match on explicit cells much
// smaller and much larger than the derived ones, state hash and contacts compared every tick.
TEST(Simulation, TheGridCellSizeChangesNoAnswer) {
  const LevelResult arena = import_map_file(std::string(SHIFTCAST_SOURCE_DIR) + "/configs/levels/arena.map");
  ASSERT_TRUE(arena.ok());
  BspBuildResult built = build_bsp(arena.level.brushes, {});
  constexpr int kTicks = 800;
  std::vector<std::uint64_t> hashes;
  std::vector<std::vector<Contact>> contacts;
  for (const float cell : {0.0f, 40.0f, 200.0f}) {  // 0: derived
    SimulationConfig config;
    config.tick_rate = 128;
    config.grid_cell = cell;
    Simulation sim(built.tree, nullptr, config);
    BusyMatch match;
    populate(sim, match, 16, 8);
    for (int tick = 0; tick < kTicks; ++tick) {
      match.inputs(sim);
      sim.step();
      const std::vector<Contact> now(sim.contacts().begin(), sim.contacts().end());
      if (cell == 0.0f) {
        hashes.push_back(sim.state_hash());
        contacts.push_back(now);
        continue;
      }
      ASSERT_EQ(sim.state_hash(), hashes[std::size_t(tick)]) << "cell " << cell << ", tick " << tick + 1;
      ASSERT_EQ(now, contacts[std::size_t(tick)]) << "cell " << cell << ", tick " << tick + 1;
    }
    EXPECT_NE(sim.grid().cell_size(), 0.0f);
  }
  std::size_t all = 0;
  for (const auto& c : contacts)
    all += c.size();
  EXPECT_GT(all, 1000u);
}

TEST(Simulation, InvalidInputsAreCountedAndIgnored) {
  const BspTree level = room();
  Simulation sim(level, nullptr, {});
  const EntityId p = sim.add_player({0, 0, 0}, 0);
  PlayerInput bad;
  bad.forward = std::nanf("");
  sim.set_input(p, bad);
  bad = {};
  bad.right = 7;
  sim.set_input(p, bad);
  sim.step();
  EXPECT_EQ(sim.counters().invalid_inputs, 2u);
  EXPECT_EQ(sim.find(p)->pose.position.x, 0.0f);
  EXPECT_EQ(sim.find(p)->pose.position.y, 0.0f);
}

TEST(Simulation, BadSpawnsAreRefusedWithAReasonAndCounted) {
  const BspTree level = room();
  Simulation sim(level, nullptr, {});
  const float nan = std::nanf("");
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(sim.add_player({nan, 0, 0}, 0), kNoEntity);
  EXPECT_EQ(sim.last_refusal(), SpawnRefusal::kNonFinite);
  EXPECT_EQ(sim.add_player({0, 0, 0}, inf), kNoEntity);
  EXPECT_EQ(sim.add_projectile({0, 0, 50}, {inf, 0, 0}, kNoEntity), kNoEntity);
  EXPECT_EQ(sim.add_model(nullptr), -1);
  EXPECT_EQ(sim.last_refusal(), SpawnRefusal::kBadModel);
  EXPECT_EQ(sim.add_crate(7, {{0, 0, 16}, 0}), kNoEntity);
  const int crate = sim.add_model(make_box_model("crate", {16, 16, 16}).model);
  EXPECT_EQ(sim.add_crate(crate, {{0, nan, 16}, 0}), kNoEntity);
  EXPECT_EQ(sim.add_kinematic_prop(crate, MoverPath{}), kNoEntity);
  EXPECT_EQ(sim.last_refusal(), SpawnRefusal::kEmptyPath);
  EXPECT_EQ(sim.counters().refused_spawns, 7u);
  // An absurd speed is slowed to the limit, not refused.
  const EntityId fast = sim.add_projectile({0, 0, 50}, {1e9f, 0, 0}, kNoEntity);
  ASSERT_NE(fast, kNoEntity);
  EXPECT_NEAR(length(sim.find(fast)->velocity), sim.config().max_speed, 1.0f);
  EXPECT_EQ(sim.counters().speed_clamps, 1u);
  EXPECT_TRUE(sim.entities().size() == 1);
  sim.step();
  EXPECT_EQ(sim.count_overlaps_brute_force(), 0);
}

TEST(Simulation, RewoundRaycastHitsWhereThePlayerWasAndMissesWhereItIsNow) {
  const BspTree level = room();
  SimulationConfig config;
  config.tick_rate = 64;
  Simulation sim(level, nullptr, config);
  const EntityId p = sim.add_player({0, 0, 0}, 0);
  for (int tick = 0; tick < 64; ++tick) {
    PlayerInput in;
    in.forward = 1;  // run along +x
    sim.set_input(p, in);
    sim.step();
  }
  const std::uint64_t then = sim.tick() - 32;
  const Vec3 was = sim.history().exact(then)->entities[0].pose.position;
  const Vec3 now = sim.find(p)->pose.position;
  ASSERT_GT(now.x - was.x, 60.0f);
  // A ray across the old position, along y, at chest height.
  const Vec3 origin{was.x, was.y - 500, 30};
  std::vector<Entity> posed;
  const RewindView view = sim.history().at(double(then));
  ASSERT_EQ(view.clamp, RewindClamp::kNone);
  view.entities(posed);
  const WorldHit rewound = world_raycast(level, posed, origin, {0, 1, 0}, 1000, {});
  EXPECT_EQ(rewound.entity, p);
  EXPECT_NEAR(rewound.trace.fraction * 1000, 500 - 15, 0.01);
  const WorldHit live = sim.raycast(origin, {0, 1, 0}, 1000, {});
  EXPECT_EQ(live.entity, kNoEntity);
}

}  // namespace
}  // namespace shiftcast
