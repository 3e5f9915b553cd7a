// Helpers of the RPC query tests (tests/server/query_service_*_test.cpp, rpc_server_*_test.cpp): request
// tables built as a client builds them, the tests' own reading of ShapeSpec for the oracle, random queries
// over arena.map, and a field-by-field comparison of a wire QueryHit with a WorldHit.
//
//   flatbuffers::FlatBufferBuilder fbb;
//   const wire::RaycastRequest& req = root(fbb, add_raycast(fbb, match, origin, dir, 1000));
//   expect_hit(reply->hit(), world_raycast(level, entities, origin, dir, 1000, {}), i);
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "protocol/envelope.hpp"
#include "protocol/shiftcast_generated.h"
#include "protocol/wire_constants.hpp"
#include "server/match_directory.hpp"
#include "server/query_service.hpp"
#include "tests/support/seeded_random.hpp"
#include "tests/support/stepped_match_directory.hpp"
#include "world/match/world_query.hpp"

namespace shiftcast::query_test {

inline constexpr float kInf = std::numeric_limits<float>::infinity();
inline constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
// Arena's playable volume (configs/levels/arena.map: outer walls at ±1024, floor at 0, ceiling at 512).
inline constexpr float kArenaHalf = 1000;
inline constexpr float kArenaTop = 500;

inline std::string arena_path() {
  return std::string(SHIFTCAST_SOURCE_DIR) + "/configs/levels/arena.map";
}

// One arena match in its own directory, stepped `ticks` times by the constructing thread.
struct ArenaMatch {
  SteppedMatchDirectory directory;
  std::uint32_t id = 0;

  ArenaMatch(int players, int props, std::uint32_t seed, int ticks, SteppedMatchOptions options = {})
      : directory({{"arena", arena_path()}}, options) {
    const CreatedMatch created =
        directory.create({.level = "arena", .max_players = players, .props = props, .seed = seed});
    EXPECT_EQ(created.error, wire::ErrorCode::Ok) << created.detail;
    id = created.match_id;
    for (int i = 0; i < ticks && stepped() != nullptr; ++i)
      stepped()->step();
  }
  std::shared_ptr<SteppedMatch> stepped() const { return directory.stepped(id); }
  std::vector<Entity> entities_at(std::uint64_t tick) const {
    const auto s = stepped()->history().exact(tick);
    EXPECT_NE(s, nullptr) << "tick " << tick;
    return s ? s->entities : std::vector<Entity>{};
  }
  std::uint64_t latest() const { return stepped()->history().latest()->tick; }
};

// A suite fixture over one ArenaMatch shared by every test of the suite: building the arena's navmesh and
// settling the scene is the slow part.
template <int kPlayers, int kProps, std::uint32_t kSeed, int kTicks>
class ArenaQueryTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { arena_ = new ArenaMatch(kPlayers, kProps, kSeed, kTicks); }
  static void TearDownTestSuite() {
    delete arena_;
    arena_ = nullptr;
  }

  SteppedMatch& match() { return *arena_->stepped(); }
  const TickHistory& history() { return match().history(); }
  std::vector<Entity> entities_at(std::uint64_t tick) { return arena_->entities_at(tick); }

  static inline ArenaMatch* arena_ = nullptr;
  const std::uint32_t match_id_ = arena_->id;
  const MatchDirectory& directory_ = arena_->directory;
  QueryScratch scratch_;
};

inline Vec3 random_point(std::mt19937& rng) {
  return {uniform_float(rng, -kArenaHalf, kArenaHalf), uniform_float(rng, -kArenaHalf, kArenaHalf),
          uniform_float(rng, 1, kArenaTop)};
}

struct AsOfArg {
  wire::AsOfKind kind = wire::AsOfKind::Now;
  double tick = 0;
  std::uint64_t client = 0;
};

struct ShapeArg {
  wire::ShapeKind kind = wire::ShapeKind::Point;
  float radius = 0;
  float height = 0;
  Vec3 half{};
  float yaw = 0;
};

inline wire::Vec3f wv(Vec3 v) {
  return {v.x, v.y, v.z};
}

inline flatbuffers::Offset<wire::QueryFilter> make_filter(flatbuffers::FlatBufferBuilder& fbb,
                                                          const QueryFilter& f) {
  return wire::CreateQueryFilter(fbb, f.mask, f.ignore, f.level);
}
inline flatbuffers::Offset<wire::ShapeSpec> make_shape(flatbuffers::FlatBufferBuilder& fbb,
                                                       const ShapeArg& s) {
  const wire::Vec3f half = wv(s.half);
  return wire::CreateShapeSpec(fbb, s.kind, s.radius, s.height, &half, s.yaw);
}
inline flatbuffers::Offset<wire::AsOf> make_as_of(flatbuffers::FlatBufferBuilder& fbb, const AsOfArg& a) {
  return wire::CreateAsOf(fbb, a.kind, a.tick, a.client);
}

inline flatbuffers::Offset<wire::RaycastRequest> add_raycast(flatbuffers::FlatBufferBuilder& fbb,
                                                             std::uint32_t match, Vec3 origin, Vec3 dir,
                                                             float distance, const QueryFilter& filter = {},
                                                             const AsOfArg& as_of = {}) {
  const wire::Vec3f o = wv(origin), d = wv(dir);
  const auto f = make_filter(fbb, filter);
  const auto a = make_as_of(fbb, as_of);
  return wire::CreateRaycastRequest(fbb, match, &o, &d, distance, f, a);
}

inline flatbuffers::Offset<wire::SweepRequest> add_sweep(flatbuffers::FlatBufferBuilder& fbb,
                                                         std::uint32_t match, const ShapeArg& shape,
                                                         Vec3 from, Vec3 to, const QueryFilter& filter = {},
                                                         const AsOfArg& as_of = {}) {
  const wire::Vec3f a0 = wv(from), a1 = wv(to);
  const auto s = make_shape(fbb, shape);
  const auto f = make_filter(fbb, filter);
  const auto a = make_as_of(fbb, as_of);
  return wire::CreateSweepRequest(fbb, match, s, &a0, &a1, f, a);
}

inline flatbuffers::Offset<wire::OverlapRequest> add_overlap(flatbuffers::FlatBufferBuilder& fbb,
                                                             std::uint32_t match, const ShapeArg& shape,
                                                             Vec3 position, const QueryFilter& filter = {},
                                                             const AsOfArg& as_of = {}) {
  const wire::Vec3f p = wv(position);
  const auto s = make_shape(fbb, shape);
  const auto f = make_filter(fbb, filter);
  const auto a = make_as_of(fbb, as_of);
  return wire::CreateOverlapRequest(fbb, match, s, &p, f, a);
}

// Finishes `fbb` with `table` as its root and reads it back as the server would.
template <typename T>
const T& root(flatbuffers::FlatBufferBuilder& fbb, flatbuffers::Offset<T> table) {
  fbb.Finish(table);
  return *flatbuffers::GetRoot<T>(fbb.GetBufferPointer());
}

// The tests' own reading of ShapeSpec (the schema's comment): sphere about the position, cylinder standing
// on it, box about it. A box's yaw is applied by the caller (a Pose for overlaps, a TurnedShape for sweeps).
inline Shape oracle_shape(const ShapeArg& s) {
  switch (s.kind) {
    case wire::ShapeKind::Sphere:
      return Shape::sphere(s.radius);
    case wire::ShapeKind::Cylinder:
      return Shape::cylinder(s.radius, s.height);
    case wire::ShapeKind::Box:
      return Shape::box(s.half);
    default:
      return Shape::point();
  }
}

inline void expect_hit(const wire::QueryHit* got, const WorldHit& want, int i) {
  ASSERT_NE(got, nullptr) << "query " << i;
  EXPECT_EQ(want.trace.status, QueryStatus::kOk) << "query " << i;
  EXPECT_EQ(got->hit(), want.trace.hit) << "query " << i;
  EXPECT_EQ(got->fraction(), want.trace.fraction) << "query " << i;
  ASSERT_NE(got->end_position(), nullptr);
  EXPECT_EQ(got->end_position()->x(), want.trace.end_position.x) << "query " << i;
  EXPECT_EQ(got->end_position()->y(), want.trace.end_position.y) << "query " << i;
  EXPECT_EQ(got->end_position()->z(), want.trace.end_position.z) << "query " << i;
  ASSERT_NE(got->normal(), nullptr);
  EXPECT_EQ(got->normal()->x(), want.trace.normal.x) << "query " << i;
  EXPECT_EQ(got->normal()->y(), want.trace.normal.y) << "query " << i;
  EXPECT_EQ(got->normal()->z(), want.trace.normal.z) << "query " << i;
  EXPECT_EQ(got->start_solid(), want.trace.start_solid) << "query " << i;
  EXPECT_EQ(got->all_solid(), want.trace.all_solid) << "query " << i;
  EXPECT_EQ(got->brush(), want.trace.brush) << "query " << i;
  EXPECT_EQ(got->entity(), want.entity) << "query " << i;
}

inline QueryFilter random_filter(std::mt19937& rng, const std::vector<Entity>& entities) {
  QueryFilter f;
  const std::uint32_t masks[] = {kLayerAll, kLayerPlayer, kLayerProp, kLayerProjectile,
                                 kLayerPlayer | kLayerProp};
  f.mask = masks[rng() % 5];
  if (rng() % 4 == 0 && !entities.empty()) f.ignore = entities[rng() % entities.size()].id;
  f.level = rng() % 5 != 0;
  return f;
}

inline ShapeArg random_shape(std::mt19937& rng) {
  ShapeArg s;
  switch (rng() % 4) {
    case 0:
      s.kind = wire::ShapeKind::Point;
      break;
    case 1:
      s.kind = wire::ShapeKind::Sphere;
      s.radius = uniform_float(rng, 1, 40);
      break;
    case 2:
      s.kind = wire::ShapeKind::Cylinder;
      s.radius = uniform_float(rng, 4, 30);
      s.height = uniform_float(rng, 8, 80);
      break;
    default:
      s.kind = wire::ShapeKind::Box;
      s.half = {uniform_float(rng, 2, 40), uniform_float(rng, 2, 40), uniform_float(rng, 2, 40)};
      s.yaw = uniform_float(rng, -kPi, kPi);
  }
  return s;
}

// A point near a random entity (so queries meet entities, not only the level), or anywhere in the arena.
inline Vec3 near_entity(std::mt19937& rng, const std::vector<Entity>& entities, float spread) {
  if (entities.empty() || rng() % 3 == 0) return random_point(rng);
  const Entity& e = entities[rng() % entities.size()];
  const Vec3 c = world_center(e, e.pose);
  return c + Vec3{uniform_float(rng, -spread, spread), uniform_float(rng, -spread, spread),
                  uniform_float(rng, -spread, spread)};
}

// An answer finished into an Envelope and verified, as a client receives it.
struct Reply {
  flatbuffers::FlatBufferBuilder fbb;
  QueryError error;
  const wire::Envelope* envelope = nullptr;
};

template <typename F>
void run(Reply& r, F answer) {
  QueryAnswer a = answer(r.fbb);
  r.error = a.error;
  if (!a.error.ok()) return;
  finish_envelope(r.fbb, a.type, a.reply, 7);
  const EnvelopeView v = verify_envelope({r.fbb.GetBufferPointer(), r.fbb.GetSize()}, kMaxRpcFrameBytes);
  ASSERT_EQ(v.error, wire::ErrorCode::Ok);
  r.envelope = v.envelope;
}

}  // namespace shiftcast::query_test
