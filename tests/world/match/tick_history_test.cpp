// TickHistory: clamping at both ends of the kept window, interpolation against closed-form midpoints,
// spawn and removal between ticks, restarts after a gap, view lifetimes, consistency under a
// concurrent writer, and a rewound raycast that hits where the target was.
#include "world/match/tick_history.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "world/match/world_query.hpp"

namespace shiftcast {
namespace {

Entity player(EntityId id, Vec3 feet, float yaw = 0) {
  Entity e;
  e.id = id;
  e.kind = EntityKind::kPlayer;
  e.shape = Shape::cylinder(15, 56);
  e.pose = {feet, yaw};
  e.layer = kLayerPlayer;
  e.mask = kMaskPlayer;
  compute_entity_bounds(e);
  return e;
}

// A view whose entity poses are a closed-form function of the tick, so any reader can tell whether
// what it got belongs to the tick it claims: entity i (id i + 1) stands at (tick, 10·i, i) with yaw
// tick / 1000 + i, and entity 3 exists on even ticks only.
std::shared_ptr<const WorldView> encoded_view(std::uint64_t tick) {
  auto s = std::make_shared<WorldView>();
  s->tick = tick;
  for (EntityId i = 0; i < 4; ++i) {
    if (i == 3 && tick % 2 != 0) continue;
    s->entities.push_back(player(i + 1, {float(tick), 10.0f * float(i), float(i)}, float(tick) / 1000 + i));
  }
  return s;
}

bool matches_tick(const WorldView& s) {
  const std::size_t want = s.tick % 2 == 0 ? 4 : 3;
  if (s.entities.size() != want) return false;
  for (std::size_t i = 0; i < s.entities.size(); ++i) {
    const Entity& e = s.entities[i];
    if (e.id != i + 1 || e.pose.position != Vec3{float(s.tick), 10.0f * float(i), float(i)}) return false;
  }
  return true;
}

void publish_range(TickHistory& h, std::uint64_t first, std::uint64_t last) {
  for (std::uint64_t t = first; t <= last; ++t)
    h.publish(encoded_view(t));
}

TEST(TickHistory, EmptyHistoryAnswersEmpty) {
  const TickHistory h(8);
  EXPECT_EQ(h.latest(), nullptr);
  EXPECT_EQ(h.exact(0), nullptr);
  const RewindView v = h.at(3.5);
  EXPECT_EQ(v.clamp, RewindClamp::kEmpty);
  EXPECT_EQ(v.before, nullptr);
  EXPECT_EQ(v.after, nullptr);
  std::vector<Entity> out{player(9, {})};
  v.entities(out);
  EXPECT_TRUE(out.empty());
  EXPECT_STREQ(to_string(RewindClamp::kEmpty), "empty");
}

TEST(TickHistory, KeepsTheLastCapacityTicksAndClampsAtBothEnds) {
  TickHistory h(8);
  publish_range(h, 10, 29);  // keeps 22..29
  ASSERT_NE(h.latest(), nullptr);
  EXPECT_EQ(h.latest()->tick, 29u);
  EXPECT_EQ(h.capacity(), 8);
  for (std::uint64_t t = 0; t < 40; ++t) {
    const auto s = h.exact(t);
    EXPECT_EQ(s != nullptr, t >= 22 && t <= 29) << t;
    if (s != nullptr) {
      EXPECT_EQ(s->tick, t);
    }
  }

  const RewindView old = h.at(5.75);
  EXPECT_EQ(old.clamp, RewindClamp::kTooOld);
  EXPECT_EQ(old.tick_used, 22.0);
  EXPECT_EQ(old.alpha, 0.0);
  EXPECT_EQ(old.before->tick, 22u);
  EXPECT_EQ(old.after, old.before);

  const RewindView future = h.at(29.01);
  EXPECT_EQ(future.clamp, RewindClamp::kInFuture);
  EXPECT_EQ(future.tick_used, 29.0);
  EXPECT_EQ(future.before->tick, 29u);
  EXPECT_EQ(future.after->tick, 29u);

  // NaN asks for nothing in particular: the newest, flagged like a request from the future.
  EXPECT_EQ(h.at(std::nan("")).clamp, RewindClamp::kInFuture);
  EXPECT_EQ(h.at(-INFINITY).clamp, RewindClamp::kTooOld);

  // The window's own ends are not clamps.
  EXPECT_EQ(h.at(22.0).clamp, RewindClamp::kNone);
  EXPECT_EQ(h.at(29.0).clamp, RewindClamp::kNone);
  const RewindView mid = h.at(25.25);
  EXPECT_EQ(mid.clamp, RewindClamp::kNone);
  EXPECT_EQ(mid.before->tick, 25u);
  EXPECT_EQ(mid.after->tick, 26u);
  EXPECT_EQ(mid.alpha, 0.25);
  EXPECT_EQ(mid.tick_used, 25.25);
}

TEST(TickHistory, CapacityBelowOneKeepsOneTick) {
  TickHistory h(0);
  publish_range(h, 1, 5);
  EXPECT_EQ(h.capacity(), 1);
  EXPECT_EQ(h.exact(4), nullptr);
  EXPECT_EQ(h.exact(5)->tick, 5u);
  EXPECT_EQ(h.at(4.5).clamp, RewindClamp::kTooOld);
}

TEST(TickHistory, AGapRestartsTheWindowAndOldTicksAreDropped) {
  TickHistory h(16);
  publish_range(h, 1, 5);
  h.publish(encoded_view(9));
  for (std::uint64_t t = 1; t <= 8; ++t)
    EXPECT_EQ(h.exact(t), nullptr) << t;
  EXPECT_EQ(h.exact(9)->tick, 9u);
  const RewindView v = h.at(4.5);
  EXPECT_EQ(v.clamp, RewindClamp::kTooOld);
  EXPECT_EQ(v.before->tick, 9u);

  // A tick that does not move time forward is dropped.
  auto stale = std::make_shared<WorldView>();
  stale->tick = 9;
  h.publish(stale);
  h.publish(encoded_view(3));
  EXPECT_EQ(h.latest()->tick, 9u);
  EXPECT_TRUE(matches_tick(*h.exact(9)));
  h.publish(nullptr);
  EXPECT_EQ(h.latest()->tick, 9u);
}

TEST(TickHistory, ReadersKeepTheirViewsAliveAndDroppedOnesAreFreed) {
  TickHistory h(4);
  h.publish(encoded_view(1));
  h.publish(encoded_view(2));
  const std::shared_ptr<const WorldView> held = h.exact(1);
  const std::weak_ptr<const WorldView> dropped = h.exact(2);
  for (std::uint64_t t = 3; t <= 10; ++t)
    h.publish(encoded_view(t));
  EXPECT_EQ(held->tick, 1u);
  EXPECT_TRUE(matches_tick(*held));
  EXPECT_TRUE(dropped.expired());
}

// Two views with hand-placed entities: 1 and 2 in both, 3 only before (removed), 4 only after
// (spawned).
struct TwoTicks {
  TickHistory history{8};
  Entity a0 = player(1, {0, 0, 0}, 0.5f);
  Entity a1 = player(1, {10, -20, 4}, 1.5f);
  Entity b0 = player(2, {100.25f, 7, -3}, 3.0f);  // yaw 3 → −3: interpolates through 0, not through π
  Entity b1 = player(2, {-100.5f, 9, -3}, -3.0f);
  Entity gone = player(3, {50, 50, 0});
  Entity spawned = player(4, {60, 60, 0});

  TwoTicks() {
    auto s0 = std::make_shared<WorldView>();
    s0->tick = 100;
    s0->entities = {a0, b0, gone};
    auto s1 = std::make_shared<WorldView>();
    s1->tick = 101;
    s1->entities = {a1, b1, spawned};
    history.publish(s0);
    history.publish(s1);
  }
  std::vector<Entity> at(double tick) const {
    std::vector<Entity> out;
    history.at(tick).entities(out);
    return out;
  }
};

std::vector<EntityId> ids(const std::vector<Entity>& entities) {
  std::vector<EntityId> out;
  for (const Entity& e : entities)
    out.push_back(e.id);
  return out;
}

TEST(RewindView, WholeTicksReproduceTheViewsExactly) {
  const TwoTicks w;
  const std::vector<Entity> before = w.at(100);
  ASSERT_EQ(ids(before), (std::vector<EntityId>{1, 2, 3}));
  EXPECT_EQ(before[0].pose, w.a0.pose);
  EXPECT_EQ(before[1].pose, w.b0.pose);
  EXPECT_EQ(before[2].pose, w.gone.pose);
  const std::vector<Entity> after = w.at(101);
  ASSERT_EQ(ids(after), (std::vector<EntityId>{1, 2, 4}));
  EXPECT_EQ(after[0].pose, w.a1.pose);
  EXPECT_EQ(after[1].pose, w.b1.pose);
  EXPECT_EQ(after[2].pose, w.spawned.pose);
}

TEST(RewindView, PosesAreLinearInAlphaAndYawFollowsTheDifferenceAsGiven) {
  const TwoTicks w;
  // Midpoints in closed form ((a + b) / 2), and the quarter points as a + (b − a)/4, to float rounding.
  const std::vector<Entity> mid = w.at(100.5);
  ASSERT_EQ(mid.size(), 3u);
  EXPECT_FLOAT_EQ(mid[0].pose.position.x, 5.0f);
  EXPECT_FLOAT_EQ(mid[0].pose.position.y, -10.0f);
  EXPECT_FLOAT_EQ(mid[0].pose.position.z, 2.0f);
  EXPECT_FLOAT_EQ(mid[0].pose.yaw, 1.0f);
  EXPECT_FLOAT_EQ(mid[1].pose.position.x, -0.125f);
  EXPECT_FLOAT_EQ(mid[1].pose.position.y, 8.0f);
  EXPECT_NEAR(mid[1].pose.yaw, 0.0f, 1e-6f);
  const std::vector<Entity> quarter = w.at(100.25);
  EXPECT_FLOAT_EQ(quarter[0].pose.position.x, 2.5f);
  EXPECT_FLOAT_EQ(quarter[0].pose.position.y, -5.0f);
  EXPECT_FLOAT_EQ(quarter[0].pose.yaw, 0.75f);
  EXPECT_FLOAT_EQ(quarter[1].pose.yaw, 1.5f);
  // Every alpha: position on the segment between the poses, at the fraction alpha.
  for (int k = 0; k <= 64; ++k) {
    const double alpha = k / 64.0;
    const std::vector<Entity> v = w.at(100 + alpha);
    const Entity& e = v[0];
    EXPECT_NEAR(e.pose.position.x, 10 * alpha, 1e-5) << alpha;
    EXPECT_NEAR(e.pose.position.y, -20 * alpha, 1e-5) << alpha;
    EXPECT_NEAR(e.pose.yaw, 0.5 + alpha, 1e-6) << alpha;
    // The other fields are copied whole, bounds included.
    EXPECT_EQ(e.shape.kind, ShapeKind::kCylinder);
    EXPECT_EQ(e.bound_radius, w.a0.bound_radius);
  }
}

TEST(RewindView, SpawnedAndRemovedEntitiesComeFromTheNearerView) {
  const TwoTicks w;
  // Removed between the ticks: present while before is nearer (alpha < 0.5), gone from 0.5 on; spawned:
  // the other way round.
  EXPECT_EQ(ids(w.at(100.25)), (std::vector<EntityId>{1, 2, 3}));
  EXPECT_EQ(ids(w.at(100.4999)), (std::vector<EntityId>{1, 2, 3}));
  EXPECT_EQ(ids(w.at(100.5)), (std::vector<EntityId>{1, 2, 4}));
  EXPECT_EQ(ids(w.at(100.75)), (std::vector<EntityId>{1, 2, 4}));
  EXPECT_EQ(w.at(100.25)[2].pose, w.gone.pose);
  EXPECT_EQ(w.at(100.75)[2].pose, w.spawned.pose);
}

TEST(RewindView, MergesLongListsSortedById) {
  // Random presence in either view; the oracle is a lookup by id over both lists.
  std::mt19937 rng(1234);
  auto s0 = std::make_shared<WorldView>();
  auto s1 = std::make_shared<WorldView>();
  s0->tick = 7;
  s1->tick = 8;
  for (EntityId id = 1; id <= 400; ++id) {
    const unsigned r = rng() % 3;  // 0: both, 1: before only, 2: after only
    if (r != 2) s0->entities.push_back(player(id, {float(id), 0, 0}));
    if (r != 1) s1->entities.push_back(player(id, {float(id), 8, 0}));
  }
  TickHistory h(4);
  h.publish(s0);
  h.publish(s1);
  for (const double alpha : {0.125, 0.875}) {
    std::vector<Entity> out;
    h.at(7 + alpha).entities(out);
    std::size_t k = 0;
    int checked = 0;
    for (EntityId id = 1; id <= 400; ++id) {
      const bool in0 =
          std::any_of(s0->entities.begin(), s0->entities.end(), [&](const Entity& e) { return e.id == id; });
      const bool in1 =
          std::any_of(s1->entities.begin(), s1->entities.end(), [&](const Entity& e) { return e.id == id; });
      const bool want = (in0 && in1) || (in0 && alpha < 0.5) || (in1 && alpha >= 0.5);
      if (!want) continue;
      ASSERT_LT(k, out.size());
      ASSERT_EQ(out[k].id, id);
      const float y = in0 && in1 ? float(8 * alpha) : (in0 ? 0.0f : 8.0f);
      EXPECT_FLOAT_EQ(out[k].pose.position.y, y);
      ++k;
      ++checked;
    }
    EXPECT_EQ(k, out.size());
    EXPECT_GT(checked, 200);
  }
}

// One writer publishing thousands of ticks (with occasional gaps) while readers ask latest, exact and
// at: every view a reader gets carries the tick it was asked for and the content of that tick, and
// what latest() returns never goes backwards. Fixed iteration counts, no timing.
TEST(TickHistory, ConcurrentReadersAlwaysSeeConsistentViews) {
  // A small ring, and requests near its old end, so the writer often refills a slot a reader is loading.
  constexpr int kCapacity = 4;
  constexpr std::uint64_t kTicks = 20000;
  constexpr int kReads = 30000;
  TickHistory h(kCapacity);
  h.publish(encoded_view(1));

  struct ReaderResult {
    int inconsistent = 0;
    int backwards = 0;
    int views = 0;
    int clamped = 0;
  };
  const auto reader = [&h](std::uint32_t seed, ReaderResult& r) {
    std::mt19937 rng(seed);
    std::uint64_t last = 0;
    std::vector<Entity> posed;
    for (int i = 0; i < kReads; ++i) {
      const auto latest = h.latest();
      if (latest == nullptr || !matches_tick(*latest)) ++r.inconsistent;
      if (latest != nullptr) {
        if (latest->tick < last) ++r.backwards;
        last = latest->tick;
        const std::uint64_t ask = latest->tick - std::min<std::uint64_t>(latest->tick, rng() % 6);
        const auto s = h.exact(ask);
        if (s != nullptr && (s->tick != ask || !matches_tick(*s))) ++r.inconsistent;
        const double when = double(latest->tick) - double(rng() % 600) / 100.0;
        const RewindView v = h.at(when);
        ++r.views;
        if (v.clamp != RewindClamp::kNone) ++r.clamped;
        const bool ok = v.before != nullptr && v.after != nullptr && matches_tick(*v.before) &&
                        matches_tick(*v.after) && double(v.before->tick) == std::floor(v.tick_used) &&
                        double(v.after->tick) == std::ceil(v.tick_used) &&
                        v.alpha == v.tick_used - std::floor(v.tick_used) &&
                        (v.clamp != RewindClamp::kNone || v.tick_used == when);
        if (!ok) {
          ++r.inconsistent;
          continue;
        }
        // The interpolated x of entity 1 is the time used, to float rounding.
        v.entities(posed);
        if (posed.empty() || std::abs(posed[0].pose.position.x - v.tick_used) > 1e-3 * v.tick_used) {
          ++r.inconsistent;
        }
      }
    }
  };
  ReaderResult r1;
  ReaderResult r2;
  std::thread t1(reader, 11u, std::ref(r1));
  std::thread t2(reader, 22u, std::ref(r2));
  std::uint64_t tick = 1;
  for (std::uint64_t i = 0; i < kTicks; ++i) {
    tick += i % 5000 == 4999 ? 3 : 1;  // a gap now and then restarts the window
    h.publish(encoded_view(tick));
  }
  t1.join();
  t2.join();
  for (const ReaderResult* r : {&r1, &r2}) {
    EXPECT_EQ(r->inconsistent, 0);
    EXPECT_EQ(r->backwards, 0);
    EXPECT_EQ(r->views, kReads);
  }
  EXPECT_EQ(h.latest()->tick, tick);
}

// Lag compensation: the target ran across the line of fire between ticks 10 and 20. A shot rewound to
// tick 10 hits where the target was then; the same shot now misses; at tick 10.5 it hits the target's
// interpolated position, whose cylinder the ray meets in closed form.
TEST(Rewind, RaycastAtAPastTickHitsWhereTheTargetWas) {
  TickHistory h(64);
  constexpr EntityId kShooter = 1;
  constexpr EntityId kTarget = 2;
  for (std::uint64_t t = 0; t <= 20; ++t) {
    auto s = std::make_shared<WorldView>();
    s->tick = t;
    const float y = t <= 10 ? 0.0f : 20.0f * float(t - 10);  // 20 units per tick after tick 10
    s->entities = {player(kShooter, {-500, 0, 0}), player(kTarget, {0, y, 0})};
    h.publish(s);
  }
  const BspTree level;  // no level: only the entities matter here
  const Vec3 eye{-500, 0, 40};
  const Vec3 dir{1, 0, 0};
  const QueryFilter filter{.mask = kLayerPlayer, .ignore = kShooter};

  std::vector<Entity> now;
  h.at(20).entities(now);
  EXPECT_FALSE(world_raycast(level, now, eye, dir, 8192, filter).trace.hit);

  std::vector<Entity> then;
  h.at(10).entities(then);
  const WorldHit hit = world_raycast(level, then, eye, dir, 8192, filter);
  ASSERT_TRUE(hit.trace.hit);
  EXPECT_EQ(hit.entity, kTarget);
  EXPECT_NEAR(hit.trace.fraction * 8192, 500 - 15, 1e-3);
  EXPECT_NEAR(hit.trace.normal.x, -1, 1e-6);

  // At 10.5 the target's axis is at y = 10: the ray y = 0 meets its side at x = −sqrt(15² − 10²).
  std::vector<Entity> between;
  h.at(10.5).entities(between);
  const WorldHit mid = world_raycast(level, between, eye, dir, 8192, filter);
  ASSERT_TRUE(mid.trace.hit);
  EXPECT_EQ(mid.entity, kTarget);
  EXPECT_NEAR(mid.trace.fraction * 8192, 500 - std::sqrt(15.0 * 15 - 10 * 10), 1e-3);
  // At 10.75 (y = 15) the ray only grazes the side: touching is not a hit.
  h.at(10.75).entities(between);
  EXPECT_FALSE(world_raycast(level, between, eye, dir, 8192, filter).trace.hit);
  // Without the ignore, the shooter's own cylinder (the eye is inside it) is hit first, start_solid.
  h.at(10).entities(then);
  const WorldHit self = world_raycast(level, then, eye, dir, 8192, {.mask = kLayerPlayer});
  EXPECT_EQ(self.entity, kShooter);
  EXPECT_TRUE(self.trace.start_solid);
}

}  // namespace
}  // namespace shiftcast
