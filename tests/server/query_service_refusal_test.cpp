// QueryService's refusals and batches: NaN, infinite, oversized and missing arguments are refused with
// BadArgument naming the field; a batch answers each query on its own (refusals inside it, in order),
// each answer equal to the direct world query on the same snapshot; empty and oversized batches are
// refused whole.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "collision/turned_shape.hpp"
#include "server/query_service.hpp"
#include "tests/support/query_requests.hpp"

namespace shiftcast::query_test {
namespace {

using QueryRefusalTest = ArenaQueryTest<6, 8, 5, 10>;

void expect_refused(const Reply& reply, wire::ErrorCode code, const std::string& detail_part) {
  EXPECT_EQ(reply.error.code, code) << reply.error.detail;
  EXPECT_NE(reply.error.detail.find(detail_part), std::string::npos)
      << "detail '" << reply.error.detail << "' should name '" << detail_part << "'";
  EXPECT_EQ(reply.envelope, nullptr);
}

TEST_F(QueryRefusalTest, BadRaycastArgumentsAreRefused) {
  struct Case {
    Vec3 origin, dir;
    float distance;
    AsOfArg as_of;
    std::string names;
  };
  const std::vector<Case> cases = {
      {{kNaN, 0, 0}, {1, 0, 0}, 100, {}, "origin.x"},
      {{0, kInf, 0}, {1, 0, 0}, 100, {}, "origin.y"},
      {{0, 0, -2e6f}, {1, 0, 0}, 100, {}, "origin.z"},
      {{0, 0, 0}, {1, kNaN, 0}, 100, {}, "direction.y"},
      {{0, 0, 0}, {0, 0, -kInf}, 100, {}, "direction.z"},
      {{0, 0, 0}, {0, 0, 0}, 100, {}, "direction is zero"},
      {{0, 0, 0}, {1e-9f, 0, 0}, 100, {}, "direction is zero"},
      {{0, 0, 0}, {1, 0, 0}, 0, {}, "max_distance"},
      {{0, 0, 0}, {1, 0, 0}, -5, {}, "max_distance"},
      {{0, 0, 0}, {1, 0, 0}, kNaN, {}, "max_distance"},
      {{0, 0, 0}, {1, 0, 0}, kInf, {}, "max_distance"},
      {{0, 0, 0}, {1, 0, 0}, 5e6f, {}, "max_distance"},
      {{0, 0, 0}, {1, 0, 0}, 100, {wire::AsOfKind::Tick, std::nan("")}, "as_of.tick"},
      {{0, 0, 0}, {1, 0, 0}, 100, {wire::AsOfKind::ClientView, 0, 12345}, "unknown client"},
      {{0, 0, 0}, {1, 0, 0}, 100, {wire::AsOfKind(9)}, "as_of.kind"},
  };
  for (const Case& c : cases) {
    flatbuffers::FlatBufferBuilder req_fbb;
    const auto& req =
        root(req_fbb, add_raycast(req_fbb, match_id_, c.origin, c.dir, c.distance, {}, c.as_of));
    Reply reply;
    run(reply, [&](auto& fbb) { return answer_raycast(directory_, req, scratch_, fbb); });
    expect_refused(reply, wire::ErrorCode::BadArgument, c.names);
  }
  flatbuffers::FlatBufferBuilder missing_fbb;
  const auto& missing = root(missing_fbb, wire::CreateRaycastRequest(missing_fbb, match_id_));
  Reply reply;
  run(reply, [&](auto& fbb) { return answer_raycast(directory_, missing, scratch_, fbb); });
  expect_refused(reply, wire::ErrorCode::BadArgument, "origin is missing");

  flatbuffers::FlatBufferBuilder unknown_fbb;
  const auto& unknown = root(unknown_fbb, add_raycast(unknown_fbb, 999, {0, 0, 0}, {1, 0, 0}, 100));
  Reply refused;
  run(refused, [&](auto& fbb) { return answer_raycast(directory_, unknown, scratch_, fbb); });
  expect_refused(refused, wire::ErrorCode::UnknownMatch, "999");
}

TEST_F(QueryRefusalTest, BadShapesAndPositionsAreRefused) {
  struct Case {
    ShapeArg shape;
    Vec3 at;
    std::string names;
  };
  const std::vector<Case> cases = {
      {{wire::ShapeKind::Sphere, kNaN}, {0, 0, 0}, "shape.radius"},
      {{wire::ShapeKind::Sphere, -1}, {0, 0, 0}, "shape.radius"},
      {{wire::ShapeKind::Sphere, 0}, {0, 0, 0}, "shape.radius"},
      {{wire::ShapeKind::Sphere, 5000}, {0, 0, 0}, "shape.radius"},
      {{wire::ShapeKind::Cylinder, 15, kInf}, {0, 0, 0}, "shape.height"},
      {{wire::ShapeKind::Cylinder, 15, 0}, {0, 0, 0}, "shape.height"},
      {{wire::ShapeKind::Box, 0, 0, {1, 1, kNaN}}, {0, 0, 0}, "shape.half_extents.z"},
      {{wire::ShapeKind::Box, 0, 0, {1, -1, 1}}, {0, 0, 0}, "shape.half_extents.y"},
      {{wire::ShapeKind::Box, 0, 0, {1, 1, 1}, kInf}, {0, 0, 0}, "shape.yaw"},
      {{wire::ShapeKind(17)}, {0, 0, 0}, "shape.kind"},
      {{wire::ShapeKind::Point}, {kNaN, 0, 0}, ".x"},
      {{wire::ShapeKind::Point}, {0, 3e6f, 0}, ".y"},
  };
  for (const Case& c : cases) {
    flatbuffers::FlatBufferBuilder sweep_fbb;
    const auto& sweep = root(sweep_fbb, add_sweep(sweep_fbb, match_id_, c.shape, c.at, {10, 0, 0}));
    Reply s;
    run(s, [&](auto& fbb) { return answer_sweep(directory_, sweep, scratch_, fbb); });
    expect_refused(s, wire::ErrorCode::BadArgument, c.names);
    flatbuffers::FlatBufferBuilder overlap_fbb;
    const auto& overlap = root(overlap_fbb, add_overlap(overlap_fbb, match_id_, c.shape, c.at));
    Reply o;
    run(o, [&](auto& fbb) { return answer_overlap(directory_, overlap, scratch_, fbb); });
    expect_refused(o, wire::ErrorCode::BadArgument, c.names);
  }
  flatbuffers::FlatBufferBuilder no_shape_fbb;
  const wire::Vec3f p{0, 0, 0};
  const auto& no_shape = root(no_shape_fbb, wire::CreateSweepRequest(no_shape_fbb, match_id_, 0, &p, &p));
  Reply reply;
  run(reply, [&](auto& fbb) { return answer_sweep(directory_, no_shape, scratch_, fbb); });
  expect_refused(reply, wire::ErrorCode::BadArgument, "shape is missing");
}

// What one query of a batch must answer: the direct world query, or a refusal.
struct Expected {
  wire::ErrorCode error = wire::ErrorCode::Ok;
  int kind = 0;  // 0 raycast, 1 sweep, 2 overlap
  WorldHit hit;
  WorldOverlap overlap;
};

// The cost model of server/query_cost.hpp written out again: a length factor per 4096 units (at most 16, a
// NaN length the most) and a size factor per 128 units of the shape's largest dimension.
double length_factor(double length) {
  return std::isnan(length) ? 16.0 : std::max(1.0, std::min(length, 65536.0) / 4096.0);
}
double size_factor(const ShapeArg& s) {
  double extent = 0;
  if (s.kind == wire::ShapeKind::Sphere) extent = 2.0 * s.radius;
  if (s.kind == wire::ShapeKind::Cylinder) extent = std::max(2.0 * s.radius, double(s.height));
  if (s.kind == wire::ShapeKind::Box)
    extent = 2.0 * std::max({double(s.half.x), double(s.half.y), double(s.half.z)});
  return std::max(1.0, extent / 128.0);
}

TEST_F(QueryRefusalTest, BatchesAnswerEachQueryIndependentlyInOrder) {
  std::mt19937 rng(16);
  const std::uint64_t latest = history().latest()->tick;
  const std::vector<Entity> entities = entities_at(latest);
  const BspTree& level = match().level_tree();
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<wire::BatchQuery>> queries;
  std::vector<Expected> expected;
  double cost = 0;
  for (int i = 0; i < 90; ++i) {
    Expected want;
    want.kind = i % 3;
    const bool bad_argument = i % 7 == 3;
    const std::uint32_t match = i % 11 == 5 ? 4242 : match_id_;
    const Vec3 from = bad_argument ? Vec3{kNaN, 0, 0} : random_point(rng);
    const Vec3 aim = near_entity(rng, entities, 20);
    const ShapeArg shape = random_shape(rng);
    const QueryFilter filter = random_filter(rng, entities);
    const wire::Vec3f a = wv(from), b = wv(aim), d = wv(aim - from);
    const auto f = make_filter(fbb, filter);
    const auto now = wire::CreateAsOf(fbb);
    if (want.kind == 0) {
      const auto r = wire::CreateRaycastRequest(fbb, match, &a, &d, 3000, f, now);
      queries.push_back(wire::CreateBatchQuery(fbb, r));
      want.hit = world_raycast(level, entities, from, aim - from, 3000, filter);
      cost += 1;
    } else if (want.kind == 1) {
      const auto s = make_shape(fbb, shape);
      const auto r = wire::CreateSweepRequest(fbb, match, s, &a, &b, f, now);
      queries.push_back(wire::CreateBatchQuery(fbb, 0, r));
      const TurnedShape turned(oracle_shape(shape), shape.yaw);
      want.hit = world_sweep(level, entities, turned.shape(), from, aim, filter);
      const double dx = double(aim.x) - from.x, dy = double(aim.y) - from.y, dz = double(aim.z) - from.z;
      cost += 2 * length_factor(std::sqrt(dx * dx + dy * dy + dz * dz)) * size_factor(shape);
    } else {
      const auto s = make_shape(fbb, shape);
      const auto r = wire::CreateOverlapRequest(fbb, match, s, bad_argument ? &a : &b, f, now);
      queries.push_back(wire::CreateBatchQuery(fbb, 0, 0, r));
      want.overlap = world_overlap(level, entities, oracle_shape(shape), Pose{aim, shape.yaw}, filter);
      cost += 2 * size_factor(shape);
    }
    // The match is looked up before the arguments are read.
    if (bad_argument) want.error = wire::ErrorCode::BadArgument;
    if (match != match_id_) want.error = wire::ErrorCode::UnknownMatch;
    expected.push_back(want);
  }
  // A query with no member and one with two: refused alone, and each costs one raycast.
  queries.push_back(wire::CreateBatchQuery(fbb));
  expected.push_back({wire::ErrorCode::BadArgument});
  {
    const wire::Vec3f o{0, 0, 100}, d{1, 0, 0};
    const auto r = wire::CreateRaycastRequest(fbb, match_id_, &o, &d, 10);
    const auto r2 = wire::CreateRaycastRequest(fbb, match_id_, &o, &d, 10);
    const auto s = wire::CreateSweepRequest(fbb, match_id_);
    queries.push_back(wire::CreateBatchQuery(fbb, r, s));
    expected.push_back({wire::ErrorCode::BadArgument});
    queries.push_back(wire::CreateBatchQuery(fbb, r2));
    expected.push_back(
        {wire::ErrorCode::Ok, 0, world_raycast(level, entities, {0, 0, 100}, {1, 0, 0}, 10, {})});
  }
  cost += 3;
  fbb.Finish(wire::CreateBatchRequest(fbb, fbb.CreateVector(queries)));
  const wire::BatchRequest& request = *flatbuffers::GetRoot<wire::BatchRequest>(fbb.GetBufferPointer());
  EXPECT_NEAR(batch_cost(request), cost, 1e-9 * cost);

  Reply reply;
  run(reply, [&](auto& out) { return answer_batch(directory_, request, 4096, scratch_, out); });
  ASSERT_TRUE(reply.error.ok()) << reply.error.detail;
  const wire::BatchReply* r = reply.envelope->message_as_BatchReply();
  ASSERT_NE(r, nullptr);
  ASSERT_EQ(r->results()->size(), expected.size());
  int answered = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const wire::BatchResult* got = r->results()->Get(flatbuffers::uoffset_t(i));
    const Expected& want = expected[i];
    if (want.error != wire::ErrorCode::Ok) {
      ASSERT_NE(got->error(), nullptr) << "query " << i;
      EXPECT_EQ(got->error()->code(), want.error) << "query " << i;
      EXPECT_EQ(got->raycast(), nullptr);
      EXPECT_EQ(got->sweep(), nullptr);
      EXPECT_EQ(got->overlap(), nullptr);
      continue;
    }
    ++answered;
    EXPECT_EQ(got->error(), nullptr) << "query " << i;
    if (want.kind == 0) {
      ASSERT_NE(got->raycast(), nullptr) << "query " << i;
      expect_hit(got->raycast()->hit(), want.hit, int(i));
      EXPECT_EQ(got->raycast()->rewind()->tick_used(), double(latest));
    } else if (want.kind == 1) {
      ASSERT_NE(got->sweep(), nullptr) << "query " << i;
      expect_hit(got->sweep()->hit(), want.hit, int(i));
    } else {
      ASSERT_NE(got->overlap(), nullptr) << "query " << i;
      EXPECT_EQ(got->overlap()->brush(), want.overlap.brush) << "query " << i;
      const std::vector<EntityId> ids(got->overlap()->entities()->begin(), got->overlap()->entities()->end());
      EXPECT_EQ(ids, want.overlap.entities) << "query " << i;
    }
  }
  EXPECT_GT(answered, 60);
}

TEST_F(QueryRefusalTest, EmptyAndOversizedBatchesAreRefusedWhole) {
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(
      wire::CreateBatchRequest(fbb, fbb.CreateVector(std::vector<flatbuffers::Offset<wire::BatchQuery>>{})));
  Reply empty;
  run(empty, [&](auto& out) {
    return answer_batch(directory_, *flatbuffers::GetRoot<wire::BatchRequest>(fbb.GetBufferPointer()), 4096,
                        scratch_, out);
  });
  expect_refused(empty, wire::ErrorCode::BadArgument, "empty batch");

  flatbuffers::FlatBufferBuilder absent;
  absent.Finish(wire::CreateBatchRequest(absent));
  Reply none;
  run(none, [&](auto& out) {
    return answer_batch(directory_, *flatbuffers::GetRoot<wire::BatchRequest>(absent.GetBufferPointer()),
                        4096, scratch_, out);
  });
  expect_refused(none, wire::ErrorCode::BadArgument, "empty batch");

  flatbuffers::FlatBufferBuilder big;
  std::vector<flatbuffers::Offset<wire::BatchQuery>> queries;
  const wire::Vec3f o{0, 0, 100}, d{1, 0, 0};
  for (int i = 0; i < 11; ++i)
    queries.push_back(wire::CreateBatchQuery(big, wire::CreateRaycastRequest(big, match_id_, &o, &d, 10)));
  big.Finish(wire::CreateBatchRequest(big, big.CreateVector(queries)));
  const auto& request = *flatbuffers::GetRoot<wire::BatchRequest>(big.GetBufferPointer());
  Reply over;
  run(over, [&](auto& out) { return answer_batch(directory_, request, 10, scratch_, out); });
  expect_refused(over, wire::ErrorCode::BadArgument, "limit of 10");
  Reply at_limit;
  run(at_limit, [&](auto& out) { return answer_batch(directory_, request, 11, scratch_, out); });
  EXPECT_TRUE(at_limit.error.ok()) << at_limit.error.detail;
}

}  // namespace
}  // namespace shiftcast::query_test
