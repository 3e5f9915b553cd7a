// The headless match: BotDriver against closed forms (a kinematic "perfect motor" stands in for the
// character motor, so a bot's path following can be checked against the path polyline it chose),
// MatchScene's placement against an independent overlap test (GJK between posed prop pieces and the
// brush oracle's polytopes, never the BSP that placed them), and the real `shiftcast-level simulate`
// end to end: figures in range and consistent with each other, closed-form tick counts and landing
// windows, determinism of the state hash, and the exit statuses.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collision/narrow_phase.hpp"
#include "tests/support/brush_oracle.hpp"
#include "tests/support/tool_process.hpp"
#include "world/bot_driver.hpp"
#include "world/compiled_level.hpp"
#include "world/match_scene.hpp"
#include "world/procedural_level.hpp"

namespace shiftcast {
namespace {

const std::string kArena = std::string(SHIFTCAST_SOURCE_DIR) + "/configs/levels/arena.map";

struct TestLevel {
  CompiledLevel compiled;
  std::unique_ptr<NavMesh> navmesh;
};

TestLevel* compile_test_level(Level level) {
  CompiledLevelResult compiled = compile_level(std::move(level), {}, {});
  EXPECT_TRUE(compiled.ok()) << compiled.message;
  auto out = std::make_unique<TestLevel>();
  out->compiled = std::move(compiled.level);
  std::string error;
  out->navmesh = NavMesh::from_data(out->compiled.navmesh, &error);
  EXPECT_NE(out->navmesh, nullptr) << error;
  return out->navmesh ? out.release() : nullptr;
}

// The arena, and a cramped procedural level (thin walls at any yaw, ramps, wedges, pillars on a quarter
// of the default area) where placement has to refuse spots, compiled once for the in-process tests.
class ArenaTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    LevelResult imported = import_level_file(kArena);
    ASSERT_TRUE(imported.ok()) << imported.error.describe();
    arena_ = compile_test_level(std::move(imported.level));
    ProceduralLevel p = make_procedural_level({.seed = 7, .target_brushes = 240, .half_extent = 1024});
    Level level;
    level.name = "procedural";
    level.brushes = std::move(p.brushes);
    level.brush_contents.assign(level.brushes.size(), kContentsSolid);
    level.brush_surface_flags.assign(level.brushes.size(), 0);
    compute_level_bounds(level);
    procedural_ = compile_test_level(std::move(level));
  }
  static void TearDownTestSuite() {
    delete arena_;
    delete procedural_;
  }
  void SetUp() override {
    ASSERT_NE(arena_, nullptr);
    ASSERT_NE(procedural_, nullptr);
    level_ = &arena_->compiled;
    navmesh_ = arena_->navmesh.get();
  }
  static TestLevel* arena_;
  static TestLevel* procedural_;
  const CompiledLevel* level_ = nullptr;
  const NavMesh* navmesh_ = nullptr;
};
TestLevel* ArenaTest::arena_ = nullptr;
TestLevel* ArenaTest::procedural_ = nullptr;

// ------------------------------------------------------------------------------------------ BotDriver

constexpr int kTickRate = 64;
constexpr float kRunSpeed = 320;

// The wish direction an input asks for, in world space: forward along the view yaw, right to its right.
Vec3 wish_direction(const PlayerInput& in) {
  const float c = std::cos(in.yaw);
  const float s = std::sin(in.yaw);
  return Vec3{in.forward * c + in.right * s, in.forward * s - in.right * c, 0};
}

float distance_xy(Vec3 a, Vec3 b) {
  return std::hypot(a.x - b.x, a.y - b.y);
}

// Horizontal distance from p to the polyline.
float distance_to_polyline(Vec3 p, std::span<const Vec3> line) {
  float best = line.empty() ? INFINITY : distance_xy(p, line[0]);
  for (std::size_t i = 1; i < line.size(); ++i) {
    const Vec3 a = line[i - 1];
    const Vec3 d = line[i] - a;
    const float len2 = d.x * d.x + d.y * d.y;
    const float t = len2 > 0 ? std::clamp(((p.x - a.x) * d.x + (p.y - a.y) * d.y) / len2, 0.0f, 1.0f) : 0;
    best = std::min(best, distance_xy(p, a + d * t));
  }
  return best;
}

// Moves feet the way an ideal motor would: the wish direction at run speed in xy (nothing blocks it), the
// height taken from the navmesh within a step up or down, so the feet climb ramps and stairs.
constexpr Vec3 kSnapHalfExtents{4, 4, 24};
Vec3 perfect_motor(NavQuery& nav, Vec3 feet, const PlayerInput& in) {
  Vec3 next = feet + normalize(wish_direction(in)) * (kRunSpeed / kTickRate);
  if (const std::optional<Vec3> on = nav.nearest_point(next, kSnapHalfExtents)) next.z = on->z;
  return next;
}

TEST_F(ArenaTest, BotsAreDeterministicPerSeedAndIndex) {
  NavQuery nav(*navmesh_);
  const BotConfig config{.tick_rate = kTickRate};
  BotDriver a(config, 5, 3), b(config, 5, 3), other_index(config, 5, 4), other_seed(config, 6, 3);
  Vec3 fa{0, 0, 0}, fo{0, 0, 0}, fs{0, 0, 0};
  int index_differs = 0, seed_differs = 0;
  for (int t = 0; t < 600; ++t) {
    const PlayerInput ia = a.think(nav, {.feet = fa});
    const PlayerInput ib = b.think(nav, {.feet = fa});
    ASSERT_EQ(ia, ib) << "tick " << t;
    ASSERT_TRUE(input_valid(ia)) << "tick " << t;
    const PlayerInput io = other_index.think(nav, {.feet = fo});
    const PlayerInput is = other_seed.think(nav, {.feet = fs});
    index_differs += io == ia ? 0 : 1;
    seed_differs += is == ia ? 0 : 1;
    fa = perfect_motor(nav, fa, ia);
    fo = perfect_motor(nav, fo, io);
    fs = perfect_motor(nav, fs, is);
  }
  EXPECT_GT(index_differs, 300);
  EXPECT_GT(seed_differs, 300);
  EXPECT_GT(a.jumps(), 0u);
  EXPECT_GT(a.fire_presses(), 0u);
  EXPECT_EQ(bot_seed(5, 3), bot_seed(5, 3));
  EXPECT_NE(bot_seed(5, 3), bot_seed(5, 4));
  EXPECT_NE(bot_seed(5, 3), bot_seed(6, 3));
}

// With nothing random but the goals, a bot on a perfect motor walks its Detour paths: it never strays
// from the polyline by more than a corner radius plus one tick's run, and every path it finishes ends
// with the bot within that distance of the path's last corner.
TEST_F(ArenaTest, BotsFollowTheirPathsToTheGoal) {
  NavQuery nav(*navmesh_);
  const BotConfig config{
      .tick_rate = kTickRate, .jump_per_second = 0, .strafe_per_second = 0, .fire_per_second = 0};
  const float slack = config.corner_radius + kRunSpeed / kTickRate;
  int finished = 0;
  for (std::uint32_t index = 0; index < 4; ++index) {
    BotDriver bot(config, 11, index);
    std::uint32_t start_rng = index;
    Vec3 feet = *nav.random_point(start_rng);
    std::vector<Vec3> path;
    std::uint64_t repaths = 0;
    for (int t = 0; t < 20 * kTickRate; ++t) {
      const PlayerInput in = bot.think(nav, {.feet = feet});
      if (bot.repaths() != repaths) {
        if (!path.empty()) {
          EXPECT_LE(distance_xy(feet, path.back()), slack) << "bot " << index << " tick " << t;
          ++finished;
        }
        repaths = bot.repaths();
        path.assign(bot.path().begin(), bot.path().end());
        ASSERT_GE(path.size(), 1u) << "bot " << index << " tick " << t;
        // The first step heads for the first corner out of reach, in closed form.
        std::size_t c = 0;
        while (c + 1 < path.size() && distance_xy(feet, path[c]) < config.corner_radius)
          ++c;
        const Vec3 want = normalize(Vec3{path[c].x - feet.x, path[c].y - feet.y, 0});
        if (distance_xy(feet, path[c]) >= config.corner_radius) {
          EXPECT_NEAR(dot(normalize(wish_direction(in)), want), 1.0f, 1e-4f)
              << "bot " << index << " tick " << t;
        }
      }
      EXPECT_LE(distance_to_polyline(feet, path), slack) << "bot " << index << " tick " << t;
      feet = perfect_motor(nav, feet, in);
    }
    EXPECT_EQ(bot.failed_paths(), 0u) << "bot " << index;
  }
  EXPECT_GE(finished, 8);  // arena paths take a few seconds: 4 bots x 20 s finish many
}

// Aim in closed form: yaw and pitch from the eye to the nearest other player's middle; the run direction
// stays the path's whatever the view; a target behind the floor is not aimed at.
TEST_F(ArenaTest, BotsAimAtTheNearestVisiblePlayer) {
  NavQuery nav(*navmesh_);
  const BotConfig config{
      .tick_rate = kTickRate, .jump_per_second = 0, .strafe_per_second = 0, .fire_per_second = 1000};
  BotDriver bot(config, 2, 0), twin(config, 2, 0);
  const Vec3 feet{-512, -256, 0.03125f};
  const std::vector<Vec3> players{{300, 200, 0}, feet, {-400, -300, 40}, {-600, -250, 0}};
  const PlayerInput in =
      bot.think(nav, {.feet = feet, .players = players, .self = 1, .level = &level_->tree});
  ASSERT_TRUE(in.buttons & kButtonFire);
  const Vec3 eye = feet + Vec3{0, 0, config.eye_height};
  const Vec3 d = players[3] + Vec3{0, 0, config.aim_height} - eye;  // |d| ≈ 88: nearer than [2] (≈ 132)
  EXPECT_NEAR(in.yaw, std::atan2(d.y, d.x), 1e-5f);
  EXPECT_NEAR(in.pitch, std::atan2(d.z, std::hypot(d.x, d.y)), 1e-5f);
  // The same bot with nobody in range runs the same way: the wish direction does not depend on the view.
  const PlayerInput alone =
      twin.think(nav, {.feet = feet, .players = std::span<const Vec3>(&feet, 1), .self = 0});
  EXPECT_NEAR(dot(normalize(wish_direction(in)), normalize(wish_direction(alone))), 1.0f, 1e-5f);
  EXPECT_EQ(alone.pitch, 0.0f);

  BotDriver blocked(config, 2, 0);
  const std::vector<Vec3> under{feet, {-500, -250, -100}};  // below the arena floor
  const PlayerInput none =
      blocked.think(nav, {.feet = feet, .players = under, .self = 0, .level = &level_->tree});
  EXPECT_EQ(none.pitch, 0.0f);
  EXPECT_NEAR(dot(normalize(wish_direction(none)), normalize(wish_direction(alone))), 1.0f, 1e-5f);
}

// ----------------------------------------------------------------------------------------- MatchScene

// A prop's solid pieces as convex shapes in its frame: the shape itself, or a concave model's brushes.
std::vector<Shape> prop_pieces(const Entity& e) {
  if (e.model == nullptr || !e.model->concave) return {e.shape};
  std::vector<Shape> pieces;
  for (const std::vector<Vec3>& corners : e.model->brush_vertices)
    pieces.push_back(Shape::hull(corners));
  return pieces;
}

// The level's brushes as float hulls of the oracle's vertices (computed from the planes by brute force).
struct OracleBrushes {
  explicit OracleBrushes(const Level& level) : oracle(level.brushes) {
    for (std::int32_t i = 0; i < oracle.brush_count(); ++i) {
      std::vector<Vec3> v;
      for (const Vec3d& p : oracle.polytope(i).vertices)
        v.push_back(to_float(p));
      vertices.push_back(std::move(v));
    }
  }
  // The first brush an entity's pieces overlap (GJK: interiors meet), or -1.
  int overlapped_by(const Entity& e) const {
    const Aabb box = world_box(e, e.pose);
    for (std::size_t i = 0; i < vertices.size(); ++i) {
      const Aabbd& b = oracle.polytope(std::int32_t(i)).bounds;
      if (b.min.x > box.max.x || b.max.x < box.min.x || b.min.y > box.max.y || b.max.y < box.min.y ||
          b.min.z > box.max.z || b.max.z < box.min.z || vertices[i].empty())
        continue;
      for (const Shape& piece : prop_pieces(e)) {
        if (shape_distance(piece, e.pose, Shape::hull(vertices[i]), {}).overlapping) return int(i);
      }
    }
    return -1;
  }
  BrushOracle oracle;
  std::vector<std::vector<Vec3>> vertices;
};

bool pieces_overlap(const Entity& a, const Entity& b) {
  for (const Shape& pa : prop_pieces(a)) {
    for (const Shape& pb : prop_pieces(b)) {
      if (shape_distance(pa, a.pose, pb, b.pose).overlapping) return true;
    }
  }
  return false;
}

// Movers are exempt from the tick's level check by design, so placement alone keeps them out of walls:
// checked over two of their periods with GJK against the brush oracle, plus the world's own brute-force
// overlap count for everything else.
void expect_movers_stay_clear(const TestLevel& level, const MatchSceneConfig& config) {
  MatchSceneResult made = MatchScene::create(level.compiled.tree, level.compiled.level, level.navmesh.get(),
                                             {.tick_rate = kTickRate}, config);
  ASSERT_TRUE(made.ok()) << made.error;
  MatchScene& scene = *made.scene;
  const SceneCounts& c = scene.counts();
  EXPECT_EQ(c.players, config.players);
  EXPECT_EQ(c.players_at_spawns, std::min(config.players, int(level.compiled.level.spawns.size())));
  EXPECT_EQ(c.lifts + c.platforms + c.doors + c.cradles + c.crates + c.props_skipped, config.props);
  EXPECT_LE(c.props_skipped, config.props / 10);
  EXPECT_GE(c.doors, 1);
  EXPECT_GE(c.cradles, 1);
  EXPECT_EQ(scene.simulation().count_overlaps_brute_force(), 0);

  const OracleBrushes brushes(level.compiled.level);
  int kinematic = 0;
  for (int t = 0; t < 6 * kTickRate; ++t) {
    scene.step();
    const std::span<const Entity> all = scene.simulation().entities();
    for (std::size_t i = 0; i < all.size(); ++i) {
      if (all[i].motion != PropMotion::kKinematic) continue;
      kinematic += t == 0 ? 1 : 0;
      ASSERT_EQ(brushes.overlapped_by(all[i]), -1) << all[i].model->name << " " << all[i].id << " tick " << t;
      for (std::size_t j = i + 1; j < all.size(); ++j) {
        if (all[j].motion == PropMotion::kKinematic) {
          ASSERT_FALSE(pieces_overlap(all[i], all[j])) << all[i].id << " " << all[j].id << " tick " << t;
        }
      }
    }
  }
  EXPECT_EQ(kinematic, c.lifts + c.platforms + c.doors + c.cradles);
}

TEST_F(ArenaTest, MatchSceneKeepsMoversClearOfTheLevelAndEachOther) {
  expect_movers_stay_clear(*arena_, {.players = 12, .projectiles = 0, .props = 40, .seed = 9});
  expect_movers_stay_clear(*procedural_, {.players = 12, .projectiles = 0, .props = 60, .seed = 9});
}

// Blow's worst case: every player falls the same height onto a structure, so the landed count jumps from
// none to all in one tick, the window lasts the free fall of 64–128 units (closed form, a tick either
// way), and each player ends standing on a prop.
TEST_F(ArenaTest, LandingSceneDropsEveryoneOntoPropsAtOnce) {
  const MatchSceneConfig config{
      .kind = SceneKind::kLanding, .players = 16, .projectiles = 0, .props = 24, .seed = 4};
  MatchSceneResult made =
      MatchScene::create(level_->tree, level_->level, navmesh_, {.tick_rate = kTickRate}, config);
  ASSERT_TRUE(made.ok()) << made.error;
  MatchScene& scene = *made.scene;
  const float gravity = scene.simulation().config().motor.gravity;
  const int shortest = int(std::floor(std::sqrt(2 * 64 / gravity) * kTickRate)) - 1;
  const int longest = int(std::ceil(std::sqrt(2 * 128 / gravity) * kTickRate)) + 1;
  int window = 0;
  int first_landing_tick = -1;
  for (int t = 0; t < 2 * kTickRate; ++t) {
    scene.step();
    ASSERT_EQ(scene.simulation().count_overlaps_brute_force(), 0) << "tick " << t;
    if (!scene.in_landing_window()) break;
    ++window;
    if (first_landing_tick < 0 && scene.landed_players() > 0) {
      first_landing_tick = window;
      EXPECT_EQ(scene.landed_players(), scene.dropped_players()) << "not all landed in the same tick";
    }
  }
  EXPECT_EQ(scene.drops(), 1);
  EXPECT_EQ(scene.dropped_players(), 16);
  EXPECT_EQ(first_landing_tick, window);
  EXPECT_GE(window, shortest);
  EXPECT_LE(window, longest);
  for (EntityId id : scene.players()) {
    const MotorState* m = scene.simulation().motor_state(id);
    ASSERT_NE(m, nullptr);
    EXPECT_TRUE(m->on_ground);
    const Entity* ground = scene.simulation().find(m->ground_entity);
    ASSERT_NE(ground, nullptr) << "player " << id << " landed on the level, not on a prop";
    EXPECT_EQ(ground->kind, EntityKind::kProp);
  }
}

TEST(SummarizeTickTimes, NearestRankPercentiles) {
  std::vector<double> ms;
  for (int i = 200; i >= 1; --i)
    ms.push_back(i);  // 1..200, reversed
  const TickTimeSummary s = summarize_tick_times(ms);
  EXPECT_EQ(s.count, 200u);
  EXPECT_EQ(s.p50, 100);  // ceil(0.5 · 200) = 100th smallest
  EXPECT_EQ(s.p99, 198);  // ceil(0.99 · 200) = 198th
  EXPECT_EQ(s.max, 200);
  EXPECT_DOUBLE_EQ(s.mean, 100.5);
  EXPECT_EQ(summarize_tick_times({7}).p99, 7);
  EXPECT_EQ(summarize_tick_times({}).count, 0u);
}

// ------------------------------------------------------------------------------------ the real binary

#ifdef SHIFTCAST_LEVEL_TOOL

// The number after the keys, each searched after the previous one ({"tick_ms", "p50"} finds the p50
// inside tick_ms); nullopt when a key is missing or its value is not a number.
std::optional<double> json_number(const std::string& json, std::initializer_list<std::string_view> keys) {
  std::size_t at = 0;
  for (std::string_view key : keys) {
    std::string needle = "\"";
    needle += key;
    needle += "\":";
    at = json.find(needle, at);
    if (at == std::string::npos) return std::nullopt;
    at += key.size() + 3;
  }
  const char* start = json.c_str() + at;
  char* end = nullptr;
  const double v = std::strtod(start, &end);
  if (end == start) return std::nullopt;
  return v;
}

std::string hash_line(const std::string& out) {
  const std::size_t at = out.find("state hash 0x");
  return at == std::string::npos ? "" : out.substr(at, out.find('\n', at) - at);
}

class SimulateCommandTest : public ToolProcessTest {
 protected:
  ToolRun run(const std::string& arguments) const {
    return ToolProcessTest::run(SHIFTCAST_LEVEL_TOOL, arguments);
  }
};

const std::string kSmallMatch = " --players 8 --projectiles 16 --props 8 --tick-rate 64 --seconds 5";

TEST_F(SimulateCommandTest, SmallMatchOnTheArenaReportsConsistentFigures) {
  const ToolRun r = run("simulate '" + kArena + "'" + kSmallMatch + " --seed 7 --json " + path("run.json"));
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  const std::string json = read_file(dir_ / "run.json");
  ASSERT_FALSE(json.empty());
  EXPECT_FALSE(std::filesystem::exists(dir_ / "run.json.tmp"));

  EXPECT_EQ(json_number(json, {"invariant_violations"}), 0.0) << r.out;
  EXPECT_EQ(json_number(json, {"ticks"}), 5.0 * 64);
  EXPECT_EQ(json_number(json, {"players"}), 8.0);
  const std::optional<double> p50 = json_number(json, {"tick_ms", "p50"});
  const std::optional<double> p99 = json_number(json, {"tick_ms", "p99"});
  const std::optional<double> max = json_number(json, {"tick_ms", "max"});
  ASSERT_TRUE(p50 && p99 && max) << json;
  EXPECT_GT(*p50, 0);
  EXPECT_LE(*p50, *p99);
  EXPECT_LE(*p99, *max);
  EXPECT_GT(json_number(json, {"contacts_per_second"}).value_or(0), 0) << json;
  const double fired = json_number(json, {"projectiles_fired"}).value_or(0);
  EXPECT_GT(fired, 0);
  EXPECT_EQ(fired, json_number(json, {"projectiles_fired_by_bots"}).value_or(-1) +
                       json_number(json, {"projectile_top_ups"}).value_or(-1));
  EXPECT_GT(json_number(json, {"projectiles_fired_by_bots"}).value_or(0), 0) << "bots never fired";
  EXPECT_LE(json_number(json, {"projectile_hits"}).value_or(-1), fired + 16);

  // Blow's cascade: every stage tests what the previous one left undecided; the hard case decides all.
  double left = -1;
  for (const char* stage : {"spheres", "boxes", "plane", "hard"}) {
    const std::optional<double> tests = json_number(json, {"filters", stage, "tests"});
    const std::optional<double> definitive = json_number(json, {"filters", stage, "definitive"});
    ASSERT_TRUE(tests && definitive) << stage << "\n" << json;
    if (left >= 0) {
      EXPECT_EQ(*tests, left) << stage;
    }
    EXPECT_LE(*definitive, *tests) << stage;
    left = *tests - *definitive;
  }
  EXPECT_EQ(left, 0);
  EXPECT_EQ(json_number(json, {"filters", "spheres", "mean_us"}), std::nullopt)
      << "timed without --filter-timing";

  // The printed hash is the JSON's, and stdout carries the tables.
  const std::size_t at = json.find("\"state_hash\": \"0x");
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(hash_line(r.out), "state hash " + json.substr(at + 15, 18));
  for (const char* line :
       {"tick ms ", "contacts ", "bounding spheres", "hard case", "invariant violations 0"}) {
    EXPECT_NE(r.out.find(line), std::string::npos) << line << " missing:\n" << r.out;
  }
}

TEST_F(SimulateCommandTest, StateHashIsDeterministicPerSeed) {
  const ToolRun imported = run("import '" + kArena + "' -o " + path("arena.level"));
  ASSERT_EQ(imported.status, 0) << imported.err;
  const std::string level = path("arena.level");
  const ToolRun a = run("simulate " + level + kSmallMatch + " --seed 3");
  const ToolRun b = run("simulate " + level + kSmallMatch + " --seed 3");
  const ToolRun c = run("simulate " + level + kSmallMatch + " --seed 4");
  const ToolRun source = run("simulate '" + kArena + "'" + kSmallMatch + " --seed 3");
  for (const ToolRun* r : {&a, &b, &c, &source})
    ASSERT_EQ(r->status, 0) << r->err;
  ASSERT_NE(hash_line(a.out), "");
  EXPECT_EQ(hash_line(a.out), hash_line(b.out));
  EXPECT_NE(hash_line(a.out), hash_line(c.out));
  // The compiled file and the source it came from are the same level: the same match.
  EXPECT_EQ(hash_line(a.out), hash_line(source.out));
}

TEST_F(SimulateCommandTest, LandingSceneReportsItsWindow) {
  const ToolRun r =
      run("simulate '" + kArena +
          "' --scene landing --players 12 --props 20 --projectiles 8 --tick-rate 64 --seconds 1.5 "
          "--filter-timing --json " +
          path("landing.json"));
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  const std::string json = read_file(dir_ / "landing.json");
  EXPECT_EQ(json_number(json, {"invariant_violations"}), 0.0) << r.out;
  EXPECT_EQ(json_number(json, {"landing", "drops"}), 1.0);
  // One drop of 64–128 units at 800 u/s² lasts sqrt(2h/g): 25.6 to 36.2 ticks at 64 Hz, a tick either way.
  const double window = json_number(json, {"landing", "window_ticks"}).value_or(0);
  EXPECT_GE(window, 24);
  EXPECT_LE(window, 38);
  EXPECT_LE(json_number(json, {"landing", "tick_ms", "p99"}).value_or(1e9),
            json_number(json, {"tick_ms", "max"}).value_or(0));
  EXPECT_NE(json_number(json, {"filters", "hard", "mean_us"}), std::nullopt) << "--filter-timing not applied";
}

TEST_F(SimulateCommandTest, BadArgumentsExitTwoWithUsage) {
  const std::string level = "'" + kArena + "'";
  for (const std::string& args :
       {std::string("simulate"), "simulate " + level + " --players -1", "simulate " + level + " --players 8x",
        "simulate " + level + " --players 99999", "simulate " + level + " --tick-rate 10",
        "simulate " + level + " --tick-rate 129", "simulate " + level + " --seconds 0",
        "simulate " + level + " --seconds nan", "simulate " + level + " --seconds 0.001",
        "simulate " + level + " --scene brawl", "simulate " + level + " --seed -3",
        "simulate " + level + " --json", "simulate " + level + " --frobnicate",
        "simulate " + level + " " + level}) {
    const ToolRun r = run(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find("usage: shiftcast-level simulate"), std::string::npos) << args << "\n" << r.err;
    EXPECT_EQ(r.out, "") << args;
  }
}

TEST_F(SimulateCommandTest, BadLevelsExitOne) {
  std::ofstream(dir_ / "garbage.level", std::ios::binary) << "not a level at all, just some bytes";
  std::ofstream(dir_ / "broken.map", std::ios::binary) << "{\n\"classname\" \"worldspawn\"\n{\n( 0 0 0 ) (";
  for (const char* file : {"missing.level", "missing.map", "garbage.level", "broken.map"}) {
    const std::string name = file;
    const ToolRun r = run("simulate " + path(name) + kSmallMatch);
    EXPECT_EQ(r.status, 1) << name << "\n" << r.err;
    EXPECT_NE(r.err.find(name), std::string::npos) << name << "\n" << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir_ / (name + ".json")));
  }
}

#endif  // SHIFTCAST_LEVEL_TOOL

}  // namespace
}  // namespace shiftcast
