// The skin guard (world/match/entity_sweep.cpp, kEntityRestGap): the mechanism behind the load ladder's rare
// player-player overlap, on its own. A player pressed against another and sliding along it with a slight
// approach (what a crease slide does tick after tick) used to lose up to ~1e-4 of gap per sweep, until
// the two overlapped; now no sweep ends nearer than min(start gap, kEntityRestGap). The oracle is the
// closed form of two upright cylinders at the same height: gap = centre distance − 2·radius.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "collision/bsp_build.hpp"
#include "collision/narrow_phase.hpp"
#include "tests/support/seeded_random.hpp"
#include "world/match/entity_sweep.hpp"
#include "world/match/simulation_state_internal.hpp"

namespace shiftcast {
namespace {

double cylinder_gap(Vec3 a, Vec3 b, double radius) {
  return std::hypot(double(a.x) - double(b.x), double(a.y) - double(b.y)) - 2 * radius;
}

struct Pair {
  BspTree level;
  SimulationConfig config;
  std::unique_ptr<SimulationState> state;
  EntityId still = kNoEntity;
  EntityId mover = kNoEntity;

  explicit Pair(float start_gap) {
    const std::vector<Brush> floor{brush_from_box({-2064, -2064, -16}, {2064, 2064, 0})};
    BspBuildResult r = build_bsp(floor, {});
    level = std::move(r.tree);
    state = std::make_unique<SimulationState>(level, nullptr, config);
    const auto player = [&](Vec3 feet) {
      Entity e;
      e.kind = EntityKind::kPlayer;
      e.shape = player_shape(config.motor);
      e.pose = {feet, 0};
      e.layer = kLayerPlayer;
      e.mask = kMaskPlayer;
      return state->add(e, {});
    };
    const float z = kSurfaceBackoff;
    still = player({0, 0, z});
    mover = player({0, -(2 * config.motor.radius + start_gap), z});
  }
  Entity& at(EntityId id) { return *state->find(id); }
};

TEST(SkinGuard, ASlideAlongANeighbourNeverWearsTheGapAway) {
  // Tangential steps of 0.02 with 1e-4 of approach: the simulation before the guard let each of them
  // through (the end gap shrinking from 1e-4 to 7e-6 in one sweep, then below zero).
  for (const float start_gap : {1e-4f, 1e-3f, kEntitySkin}) {
    Pair p(start_gap);
    const double radius = p.config.motor.radius;
    double gap = cylinder_gap(p.at(p.mover).pose.position, p.at(p.still).pose.position, radius);
    const double floor_gap = std::min(gap, double(kEntityRestGap));
    std::vector<EntityId> candidates{p.still};
    for (int step = 0; step < 200; ++step) {
      const Entity self = p.at(p.mover);
      const Vec3 from = self.pose.position;
      // Along the tangent of the still player's circle at the mover, with a slight approach.
      const Vec3 to_still = normalize(p.at(p.still).pose.position - from);
      const Vec3 tangent{-to_still.y, to_still.x, 0};
      const Vec3 to = from + tangent * 0.02f + to_still * 1e-4f;
      const SweepHit h = p.state->sweep_among(self, from, to, false, kLayerProjectile, kNoEntity, candidates);
      p.at(p.mover).pose.position = h.end;
      const double now = cylinder_gap(h.end, p.at(p.still).pose.position, radius);
      ASSERT_GE(now, 0.0) << "start gap " << start_gap << ", step " << step;
      ASSERT_GE(now, floor_gap - 1e-7) << "start gap " << start_gap << ", step " << step;
      gap = now;
    }
  }
}

// The same wear against a concave prop (a brush model: its own BSP, measured brush by brush), which the
// guard used to skip: `shiftcast-level simulate oa_dm1.bsp --players 32 --seconds 300 --seed 5
// --tick-rate 64` met "player 2 overlapped prop 218" at tick 9735, a player falling while pressed against
// the side of a descending lift (separation 5.6e-7 after the lift's push, -6.6e-6 after the player's own
// move straight down along the face). Oracle: the closed form of an upright cylinder beside the face
// y = kFaceY of an axis-aligned box brush, gap = kFaceY - (y + radius) while the cylinder is within the
// face's x and z extents.
TEST(SkinGuard, ASlideAlongAConcavePropNeverWearsTheGapAway) {
  constexpr float kFaceY = 1536.8173f;  // at the magnitude of the map's coordinates, where floats are coarse
  // An L of two boxes: concave as a whole, so the hard case and the guard go brush by brush.
  std::vector<Brush> brushes{brush_from_box({-64, 0, -256}, {64, 64, 0}),
                             brush_from_box({-64, 64, -256}, {0, 128, 0})};
  PropModelResult model = make_brush_model("ell", std::move(brushes));
  ASSERT_TRUE(model.ok()) << model.error;
  ASSERT_TRUE(model.model->concave);
  for (const Vec3 tangent : {Vec3{0, 0, -0.05f}, Vec3{-0.02f, 0, 0}, Vec3{-0.015f, 0, -0.04f}}) {
    for (const float start_gap : {5.6e-7f, 1e-4f, kEntitySkin}) {
      Pair p(kEntitySkin);  // a floor far below and two players; the still one is moved out of the way
      p.at(p.still).pose.position = {4000, 4000, kSurfaceBackoff};
      p.state->place_in_grid(p.at(p.still), p.at(p.still).pose);
      Entity prop;
      prop.kind = EntityKind::kProp;
      prop.motion = PropMotion::kKinematic;
      prop.model = model.model.get();
      prop.shape = model_shape(*model.model);
      prop.pose = {{-150, kFaceY, 0}, 0};
      prop.layer = kLayerProp;
      prop.mask = kMaskProp;
      const EntityId lift = p.state->add(prop, {});
      const double radius = p.config.motor.radius;
      Entity& mover = p.at(p.mover);
      mover.pose.position = {-180, kFaceY - float(radius) - start_gap, -120};
      const auto gap = [&](Vec3 at) { return double(kFaceY) - (double(at.y) + radius); };
      const double floor_gap = std::min(gap(mover.pose.position), double(kEntityRestGap));
      std::vector<EntityId> candidates{lift};
      for (int step = 0; step < 200; ++step) {
        const Entity self = p.at(p.mover);
        const Vec3 from = self.pose.position;
        const Vec3 to = from + tangent + Vec3{0, 1e-4f, 0};  // along the face, pressing into it
        const SweepHit h =
            p.state->sweep_among(self, from, to, false, kLayerProjectile, kNoEntity, candidates);
        p.at(p.mover).pose.position = h.end;
        const double now = gap(h.end);
        ASSERT_GE(now, 0.0) << "start gap " << start_gap << ", step " << step;
        ASSERT_GE(now, floor_gap - 1e-7) << "start gap " << start_gap << ", step " << step;
      }
    }
  }
}

TEST(SkinGuard, MovesAwayAndAlongAtTheSkinAreNotBlocked) {
  Pair p(kEntitySkin);
  std::vector<EntityId> candidates{p.still};
  const Entity self = p.at(p.mover);
  const Vec3 from = self.pose.position;
  // Straight away from the neighbour, and a pure tangent step from the skin (its end is farther).
  for (const Vec3 to : {from + Vec3{0, -5, 0}, from + Vec3{0.5f, 0, 0}}) {
    const SweepHit h = p.state->sweep_among(self, from, to, false, kLayerProjectile, kNoEntity, candidates);
    EXPECT_FALSE(h.hit);
    EXPECT_EQ(h.end, to);
  }
  EXPECT_EQ(p.state->last_tick.skin_guards, 0);
}

}  // namespace
}  // namespace shiftcast

namespace shiftcast {
namespace {

// The skin guard's cull (entity_box_gap) never says "farther" than the exact distance: over random
// cylinders, spheres and turned off-centre boxes against turned box and hull props, the box gap is at most
// the distance shape_distance computes (to its rounding), and the cull's threshold leaves a margin above it.
TEST(SkinGuardCull, TheBoxGapIsALowerBoundOnTheDistance) {
  std::mt19937 rng(4242);
  const std::vector<Vec3> hull{{-20, -10, 0},  {20, -10, 0},  {0, 25, 0},
                               {-20, -10, 30}, {20, -10, 30}, {0, 25, 30}};
  int near = 0, culled = 0;
  for (int i = 0; i < 20000; ++i) {
    Entity other;
    other.kind = EntityKind::kProp;
    other.shape =
        uniform_int(rng, 0, 1) == 0
            ? Shape::box({uniform_float(rng, 4, 40), uniform_float(rng, 4, 40), uniform_float(rng, 4, 40)},
                         {uniform_float(rng, -8, 8), uniform_float(rng, -8, 8), uniform_float(rng, 0, 20)})
            : Shape::hull(hull);
    compute_entity_bounds(other);
    const Pose other_pose{
        {uniform_float(rng, -60, 60), uniform_float(rng, -60, 60), uniform_float(rng, -30, 30)},
        uniform_float(rng, -3.2f, 3.2f)};
    const int kind = uniform_int(rng, 0, 2);
    const Shape mover = kind == 0 ? Shape::cylinder(15, 56)
                        : kind == 1
                            ? Shape::sphere(uniform_float(rng, 1, 20))
                            : Shape::box({uniform_float(rng, 2, 20), uniform_float(rng, 2, 20), 10},
                                         {uniform_float(rng, -30, 30), uniform_float(rng, -30, 30), 0});
    const Pose pose{{uniform_float(rng, -60, 60), uniform_float(rng, -60, 60), uniform_float(rng, -30, 30)},
                    uniform_float(rng, -3.2f, 3.2f)};
    const double gap = entity_box_gap(mover, pose, other, other_pose);
    const ShapeDistance d = shape_distance(mover, pose, other.shape, other_pose);
    ASSERT_EQ(d.status, QueryStatus::kOk);
    if (d.overlapping) {
      EXPECT_LE(gap, 1e-6) << "overlapping shapes with boxes apart, case " << i;
      continue;
    }
    EXPECT_LE(gap, d.distance + 1e-6) << "case " << i;
    near += d.distance < 2.0 ? 1 : 0;
    culled += gap >= double(kEntityRestGap) + double(kBoundsSlack) ? 1 : 0;
  }
  EXPECT_GT(near, 100);     // pairs close enough to matter were drawn
  EXPECT_GT(culled, 1000);  // and the cull skips many that are not
}

}  // namespace
}  // namespace shiftcast
