// MatchSetup's placement against an independent overlap test (GJK between posed prop pieces and the brush
// oracle's polytopes, never the BSP that placed them), Blow's landing scene against the free-fall closed
// form, and the tick-time summary's nearest-rank percentiles.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "collision/narrow_phase.hpp"
#include "tests/support/brush_oracle.hpp"
#include "tests/world/match/arena_test.hpp"
#include "world/match/match_setup.hpp"

namespace shiftcast {
namespace {

// ----------------------------------------------------------------------------------------- MatchSetup

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
void expect_movers_stay_clear(const TestLevel& level, const MatchSetupConfig& config) {
  MatchSetupResult made = MatchSetup::create(level.compiled.tree, level.compiled.level, level.navmesh.get(),
                                             {.tick_rate = kTickRate}, config);
  ASSERT_TRUE(made.ok()) << made.error;
  MatchSetup& scene = *made.scene;
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

TEST_F(ArenaTest, MatchSetupKeepsMoversClearOfTheLevelAndEachOther) {
  expect_movers_stay_clear(*arena_, {.players = 12, .projectiles = 0, .props = 40, .seed = 9});
  expect_movers_stay_clear(*procedural_, {.players = 12, .projectiles = 0, .props = 60, .seed = 9});
}

// Blow's worst case: every player falls the same height onto a structure, so the landed count jumps from
// none to all in one tick, the window lasts the free fall of 64–128 units (closed form, a tick either
// way), and each player ends standing on a prop.
TEST_F(ArenaTest, LandingSceneDropsEveryoneOntoPropsAtOnce) {
  const MatchSetupConfig config{
      .kind = SceneKind::kLanding, .players = 16, .projectiles = 0, .props = 24, .seed = 4};
  MatchSetupResult made =
      MatchSetup::create(level_->tree, level_->level, navmesh_, {.tick_rate = kTickRate}, config);
  ASSERT_TRUE(made.ok()) << made.error;
  MatchSetup& scene = *made.scene;
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

}  // namespace
}  // namespace shiftcast
