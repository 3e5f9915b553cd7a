// QueryService against its oracle: world_raycast / world_sweep / world_overlap called directly on the
// entities of the snapshot the reply says it used, on a real level (configs/levels/arena.map) with a real
// match (navmesh bots, projectiles, props) stepped by the test. Every field of every reply must equal the
// direct answer, and rewinds must use the tick asked for (history().exact) or say how they were clamped.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "collision/turned_shape.hpp"
#include "server/query_service.hpp"
#include "tests/support/query_requests.hpp"

namespace shiftcast::query_test {
namespace {

constexpr int kWarmTicks = 100;  // more than the one second (65 ticks) of history the match keeps

using QueryServiceTest = ArenaQueryTest<8, 12, 3, kWarmTicks>;

TEST_F(QueryServiceTest, RaycastsEqualTheWorldQueryOnTheSnapshotUsed) {
  std::mt19937 rng(11);
  const std::uint64_t latest = history().latest()->tick;
  const std::vector<Entity> entities = entities_at(latest);
  ASSERT_GE(entities.size(), 10u);
  int entity_hits = 0, level_hits = 0, misses = 0;
  for (int i = 0; i < 600; ++i) {
    const Vec3 origin = random_point(rng);
    const Vec3 aim = near_entity(rng, entities, 20);
    const Vec3 dir = (aim - origin) * uniform_float(rng, 0.1f, 5);
    const float distance = length(aim - origin) * uniform_float(rng, 0.5f, 2) + 1;
    const QueryFilter filter = random_filter(rng, entities);
    flatbuffers::FlatBufferBuilder req_fbb;
    const auto& req = root(req_fbb, add_raycast(req_fbb, match_id_, origin, dir, distance, filter));
    Reply reply;
    run(reply, [&](auto& fbb) { return answer_raycast(directory_, req, scratch_, fbb); });
    ASSERT_TRUE(reply.error.ok()) << reply.error.detail;
    const wire::RaycastReply* r = reply.envelope->message_as_RaycastReply();
    ASSERT_NE(r, nullptr);
    ASSERT_NE(r->rewind(), nullptr);
    EXPECT_EQ(r->rewind()->tick_used(), double(latest));
    EXPECT_EQ(r->rewind()->clamp(), wire::RewindClamp::None);
    const WorldHit want = world_raycast(match().level_tree(), entities, origin, dir, distance, filter);
    expect_hit(r->hit(), want, i);
    entity_hits += want.entity != kNoEntity;
    level_hits += want.trace.hit && want.entity == kNoEntity;
    misses += !want.trace.hit;
  }
  EXPECT_GT(entity_hits, 30);
  EXPECT_GT(level_hits, 60);
  EXPECT_GT(misses, 30);
}

TEST_F(QueryServiceTest, SweepsEqualTheWorldQueryOnTheSnapshotUsed) {
  std::mt19937 rng(12);
  const std::uint64_t latest = history().latest()->tick;
  const std::vector<Entity> entities = entities_at(latest);
  int entity_hits = 0, level_hits = 0, misses = 0, turned_boxes = 0;
  for (int i = 0; i < 400; ++i) {
    const ShapeArg shape = random_shape(rng);
    const Vec3 from = random_point(rng);
    const Vec3 aim = near_entity(rng, entities, 30);
    const Vec3 to = from + (aim - from) * uniform_float(rng, 0.3f, 1.8f);
    const QueryFilter filter = random_filter(rng, entities);
    flatbuffers::FlatBufferBuilder req_fbb;
    const auto& req = root(req_fbb, add_sweep(req_fbb, match_id_, shape, from, to, filter));
    Reply reply;
    run(reply, [&](auto& fbb) { return answer_sweep(directory_, req, scratch_, fbb); });
    ASSERT_TRUE(reply.error.ok()) << reply.error.detail;
    const wire::SweepReply* r = reply.envelope->message_as_SweepReply();
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->rewind()->tick_used(), double(latest));
    // A box swept at a yaw keeps it: the hull of its turned corners (collision/turned_shape.hpp).
    const TurnedShape turned(oracle_shape(shape), shape.kind == wire::ShapeKind::Box ? shape.yaw : 0.0f);
    turned_boxes += shape.kind == wire::ShapeKind::Box;
    const WorldHit want = world_sweep(match().level_tree(), entities, turned.shape(), from, to, filter);
    expect_hit(r->hit(), want, i);
    entity_hits += want.entity != kNoEntity;
    level_hits += want.trace.hit && want.entity == kNoEntity;
    misses += !want.trace.hit;
  }
  EXPECT_GT(entity_hits, 15);
  EXPECT_GT(level_hits, 30);
  EXPECT_GT(misses, 20);
  EXPECT_GT(turned_boxes, 50);
}

TEST_F(QueryServiceTest, OverlapsEqualTheWorldQueryOnTheSnapshotUsed) {
  std::mt19937 rng(13);
  const std::uint64_t latest = history().latest()->tick;
  const std::vector<Entity> entities = entities_at(latest);
  int with_entities = 0, with_brush = 0, empty = 0;
  for (int i = 0; i < 400; ++i) {
    const ShapeArg shape = random_shape(rng);
    const Vec3 position = near_entity(rng, entities, 25);
    const QueryFilter filter = random_filter(rng, entities);
    flatbuffers::FlatBufferBuilder req_fbb;
    const auto& req = root(req_fbb, add_overlap(req_fbb, match_id_, shape, position, filter));
    Reply reply;
    run(reply, [&](auto& fbb) { return answer_overlap(directory_, req, scratch_, fbb); });
    ASSERT_TRUE(reply.error.ok()) << reply.error.detail;
    const wire::OverlapReply* r = reply.envelope->message_as_OverlapReply();
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->rewind()->tick_used(), double(latest));
    const WorldOverlap want =
        world_overlap(match().level_tree(), entities, oracle_shape(shape), Pose{position, shape.yaw}, filter);
    EXPECT_EQ(r->brush(), want.brush) << "query " << i;
    ASSERT_NE(r->entities(), nullptr);
    const std::vector<EntityId> got(r->entities()->begin(), r->entities()->end());
    EXPECT_EQ(got, want.entities) << "query " << i;
    with_entities += !want.entities.empty();
    with_brush += want.brush != kNoBrush;
    empty += want.entities.empty() && want.brush == kNoBrush;
  }
  EXPECT_GT(with_entities, 40);
  EXPECT_GT(with_brush, 10);
  EXPECT_GT(empty, 40);
}

TEST_F(QueryServiceTest, RewoundQueriesUseTheTickAskedFor) {
  std::mt19937 rng(14);
  const std::uint64_t latest = history().latest()->tick;
  int differs_from_now = 0;
  for (int i = 0; i < 200; ++i) {
    const std::uint64_t tick = latest - 1 - rng() % 40;
    const std::vector<Entity> then = entities_at(tick);
    // Aim at an entity as it was then: the rewound answer hits it where it stood.
    const Vec3 aim = near_entity(rng, then, 4);
    const Vec3 origin =
        aim + Vec3{uniform_float(rng, -300, 300), uniform_float(rng, -300, 300), uniform_float(rng, 10, 200)};
    const float distance = length(aim - origin) + 50;
    flatbuffers::FlatBufferBuilder req_fbb;
    const auto& req = root(req_fbb, add_raycast(req_fbb, match_id_, origin, aim - origin, distance,
                                                {.level = false}, {wire::AsOfKind::Tick, double(tick)}));
    Reply reply;
    run(reply, [&](auto& fbb) { return answer_raycast(directory_, req, scratch_, fbb); });
    ASSERT_TRUE(reply.error.ok()) << reply.error.detail;
    const wire::RaycastReply* r = reply.envelope->message_as_RaycastReply();
    EXPECT_EQ(r->rewind()->tick_used(), double(tick));
    EXPECT_EQ(r->rewind()->clamp(), wire::RewindClamp::None);
    const WorldHit want =
        world_raycast(match().level_tree(), then, origin, aim - origin, distance, {.level = false});
    expect_hit(r->hit(), want, i);
    const WorldHit now = world_raycast(match().level_tree(), entities_at(latest), origin, aim - origin,
                                       distance, {.level = false});
    differs_from_now += now.entity != want.entity || now.trace.fraction != want.trace.fraction;
  }
  // The world moved in between: rewinding must matter for a good share of these rays.
  EXPECT_GT(differs_from_now, 20);
}

TEST_F(QueryServiceTest, FractionalTicksAndClientViewsInterpolate) {
  std::mt19937 rng(15);
  const std::uint64_t latest = history().latest()->tick;
  const double tick = double(latest) - 10.25;
  match().set_client_view_tick(77, tick);
  // The oracle: each entity in both snapshots at the linear blend of its two poses.
  const std::vector<Entity> before = entities_at(latest - 11), after = entities_at(latest - 10);
  std::vector<Entity> posed;
  for (const Entity& b : before) {
    for (const Entity& a : after) {
      if (a.id != b.id) continue;
      Entity e = b;
      e.pose = lerp_pose(b.pose, a.pose, 0.75f);
      posed.push_back(e);
    }
  }
  int hits = 0;
  for (int i = 0; i < 100; ++i) {
    const Vec3 aim = near_entity(rng, posed, 3);
    const Vec3 origin =
        aim + Vec3{uniform_float(rng, -200, 200), uniform_float(rng, -200, 200), uniform_float(rng, 10, 100)};
    const bool by_client = i % 2 == 0;
    const AsOfArg as_of =
        by_client ? AsOfArg{wire::AsOfKind::ClientView, 0, 77} : AsOfArg{wire::AsOfKind::Tick, tick};
    flatbuffers::FlatBufferBuilder req_fbb;
    const auto& req =
        root(req_fbb, add_raycast(req_fbb, match_id_, origin, aim - origin, 1000, {.level = false}, as_of));
    Reply reply;
    run(reply, [&](auto& fbb) { return answer_raycast(directory_, req, scratch_, fbb); });
    ASSERT_TRUE(reply.error.ok()) << reply.error.detail;
    const wire::RaycastReply* r = reply.envelope->message_as_RaycastReply();
    EXPECT_EQ(r->rewind()->tick_used(), tick);
    EXPECT_EQ(r->rewind()->clamp(), wire::RewindClamp::None);
    const WorldHit want =
        world_raycast(match().level_tree(), posed, origin, aim - origin, 1000, {.level = false});
    // Interpolation rounds in float either way; the entity hit and the distance agree closely.
    EXPECT_EQ(r->hit()->entity(), want.entity) << "query " << i;
    EXPECT_NEAR(r->hit()->fraction(), want.trace.fraction, 1e-4) << "query " << i;
    hits += want.entity != kNoEntity;
  }
  EXPECT_GT(hits, 50);
}

TEST_F(QueryServiceTest, RewindsOutsideTheKeptSecondAreClamped) {
  const std::uint64_t latest = history().latest()->tick;
  const std::uint64_t oldest = latest - std::uint64_t(history().capacity()) + 1;
  ASSERT_NE(history().exact(oldest), nullptr);
  ASSERT_EQ(history().exact(oldest - 1), nullptr);
  struct Case {
    double asked;
    double used;
    wire::RewindClamp clamp;
  };
  for (const Case& c : {Case{double(latest) + 5, double(latest), wire::RewindClamp::InFuture},
                        Case{double(oldest) - 0.5, double(oldest), wire::RewindClamp::TooOld},
                        Case{0, double(oldest), wire::RewindClamp::TooOld},
                        Case{-1e300, double(oldest), wire::RewindClamp::TooOld},
                        Case{double(oldest), double(oldest), wire::RewindClamp::None}}) {
    flatbuffers::FlatBufferBuilder req_fbb;
    const auto& req = root(req_fbb, add_overlap(req_fbb, match_id_, {wire::ShapeKind::Sphere, 2000},
                                                {0, 0, 100}, {}, {wire::AsOfKind::Tick, c.asked}));
    Reply reply;
    run(reply, [&](auto& fbb) { return answer_overlap(directory_, req, scratch_, fbb); });
    ASSERT_TRUE(reply.error.ok()) << reply.error.detail;
    const wire::OverlapReply* r = reply.envelope->message_as_OverlapReply();
    EXPECT_EQ(r->rewind()->tick_used(), c.used) << "asked " << c.asked;
    EXPECT_EQ(r->rewind()->clamp(), c.clamp) << "asked " << c.asked;
    // The whole arena: every entity of the snapshot used is in the answer.
    const std::vector<Entity> used = entities_at(std::uint64_t(c.used));
    EXPECT_EQ(r->entities()->size(), used.size()) << "asked " << c.asked;
  }
}

}  // namespace
}  // namespace shiftcast::query_test
