// The skin guard (world/match/entity_sweep.cpp, kEntityRestGap): the mechanism behind the load ladder's rare
// player-player overlap, on its own. A player pressed against another and sliding along it with a slight
// approach (what a crease slide does tick after tick) used to lose up to ~1e-4 of gap per sweep, until
// the two overlapped; now no sweep ends nearer than min(start gap, kEntityRestGap). The oracle is the
// closed form of two upright cylinders at the same height: gap = centre distance − 2·radius.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "collision/bsp_build.hpp"
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
