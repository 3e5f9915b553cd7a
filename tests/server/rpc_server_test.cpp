// RpcServer over real loopback TCP, against a real arena match (tests/support/stepped_match_directory.hpp):
// pipelined queries come back in request order with the answers world_raycast / world_overlap give on
// the snapshot each reply names; batches; the rate limit with a clock the test drives (closed-form
// retry_after_ms); the connection limit; stop() flushing queued replies; the admin calls, with connect
// tokens opened by the protocol's own open_connect_token.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "protocol/connect_token.hpp"
#include "tests/support/query_requests.hpp"
#include "tests/support/rpc_harness.hpp"

namespace shiftcast::rpc_test {
namespace {

using namespace shiftcast::query_test;

constexpr char kAdminKey[] = "rpc-test-admin-key";
constexpr char kPublicAddress[] = "127.0.0.1:40000";
constexpr std::uint64_t kUnixNow = 1'700'000'000;

RpcSettings test_settings() {
  RpcSettings s;
  s.admin_key = kAdminKey;
  s.open_reads = true;  // reads and their keys are hostile_rpc_test.cpp's
  s.keys.token_key.fill(7);
  s.public_address = kPublicAddress;
  s.token_valid_seconds = 45;
  s.unix_now = [] { return kUnixNow; };
  return s;
}

class RpcServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { arena_ = new ArenaMatch(8, 12, 9, 80); }
  static void TearDownTestSuite() {
    delete arena_;
    arena_ = nullptr;
  }
  static inline ArenaMatch* arena_ = nullptr;
  const std::uint32_t match_id_ = arena_->id;
};

const wire::RpcError* error_of(const Frame& f) {
  return f.envelope()->message_as_RpcError();
}

TEST_F(RpcServerTest, PipelinedRaycastsComeBackInRequestOrderWithTheWorldsAnswers) {
  RpcHarness rpc(arena_->directory, test_settings());
  LoopbackClient client(rpc.port());
  ASSERT_TRUE(client.connected());
  std::mt19937 rng(21);
  const std::vector<Entity> entities = arena_->entities_at(arena_->latest());
  struct Ray {
    Vec3 origin, dir;
    float distance;
    QueryFilter filter;
  };
  std::vector<Ray> rays;
  std::vector<std::uint8_t> stream;
  for (int i = 0; i < 100; ++i) {
    const Vec3 aim = near_entity(rng, entities, 20);
    const Vec3 origin =
        aim + Vec3{uniform_float(rng, -300, 300), uniform_float(rng, -300, 300), uniform_float(rng, 0, 150)};
    const Ray r{origin, aim - origin, length(aim - origin) + 100, random_filter(rng, entities)};
    rays.push_back(r);
    flatbuffers::FlatBufferBuilder fbb;
    const auto frame =
        request_frame(fbb, wire::Message::RaycastRequest,
                      add_raycast(fbb, match_id_, r.origin, r.dir, r.distance, r.filter), 5000 + 3 * i);
    stream.insert(stream.end(), frame.begin(), frame.end());
  }
  ASSERT_TRUE(client.send(stream));
  // The match keeps ticking while the queries run: each reply names the tick it used.
  for (int t = 0; t < 5; ++t)
    arena_->stepped()->step();
  int entity_hits = 0;
  for (int i = 0; i < 100; ++i) {
    const std::optional<Frame> f = client.read_frame();
    ASSERT_TRUE(f.has_value()) << "reply " << i;
    const wire::Envelope* e = f->envelope();
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->request_id(), std::uint64_t(5000 + 3 * i));
    const wire::RaycastReply* reply = e->message_as_RaycastReply();
    ASSERT_NE(reply, nullptr) << "reply " << i;
    EXPECT_EQ(reply->rewind()->clamp(), wire::RewindClamp::None);
    const auto tick = std::uint64_t(reply->rewind()->tick_used());
    EXPECT_EQ(double(tick), reply->rewind()->tick_used());
    const Ray& r = rays[std::size_t(i)];
    const WorldHit want = world_raycast(arena_->stepped()->level_tree(), arena_->entities_at(tick), r.origin,
                                        r.dir, r.distance, r.filter);
    expect_hit(reply->hit(), want, i);
    entity_hits += want.entity != kNoEntity;
  }
  EXPECT_GT(entity_hits, 8);
  EXPECT_EQ(rpc.registry.counter("shiftcast_rpc_requests_total", "", {{"kind", "raycast"}}).value(), 100u);
  EXPECT_EQ(rpc.registry.histogram("shiftcast_rpc_seconds", "", {{"kind", "raycast"}}).count(), 100u);
}

TEST_F(RpcServerTest, BatchesAnswerEveryQueryOverTheWire) {
  RpcHarness rpc(arena_->directory, test_settings());
  LoopbackClient client(rpc.port());
  std::mt19937 rng(22);
  const std::uint64_t tick = arena_->latest();
  const std::vector<Entity> entities = arena_->entities_at(tick);
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<wire::BatchQuery>> queries;
  std::vector<WorldHit> rays;
  std::vector<WorldOverlap> overlaps;
  for (int i = 0; i < 40; ++i) {
    const Vec3 from = random_point(rng);
    const Vec3 aim = near_entity(rng, entities, 20);
    const AsOfArg at{wire::AsOfKind::Tick, double(tick)};
    if (i % 2 == 0) {
      queries.push_back(
          wire::CreateBatchQuery(fbb, add_raycast(fbb, match_id_, from, aim - from, 4000, {}, at)));
      rays.push_back(world_raycast(arena_->stepped()->level_tree(), entities, from, aim - from, 4000, {}));
    } else {
      const ShapeArg sphere{wire::ShapeKind::Sphere, 30};
      queries.push_back(wire::CreateBatchQuery(fbb, 0, 0, add_overlap(fbb, match_id_, sphere, aim, {}, at)));
      overlaps.push_back(
          world_overlap(arena_->stepped()->level_tree(), entities, Shape::sphere(30), {aim}, {}));
    }
  }
  ASSERT_TRUE(client.send(request_frame(fbb, wire::Message::BatchRequest,
                                        wire::CreateBatchRequest(fbb, fbb.CreateVector(queries)), 99)));
  const std::optional<Frame> f = client.read_frame();
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->envelope()->request_id(), 99u);
  const wire::BatchReply* reply = f->envelope()->message_as_BatchReply();
  ASSERT_NE(reply, nullptr);
  ASSERT_EQ(reply->results()->size(), 40u);
  int with_entities = 0;
  for (int i = 0; i < 40; ++i) {
    const wire::BatchResult* r = reply->results()->Get(flatbuffers::uoffset_t(i));
    EXPECT_EQ(r->error(), nullptr);
    if (i % 2 == 0) {
      ASSERT_NE(r->raycast(), nullptr);
      EXPECT_EQ(r->raycast()->rewind()->tick_used(), double(tick));
      expect_hit(r->raycast()->hit(), rays[std::size_t(i / 2)], i);
    } else {
      ASSERT_NE(r->overlap(), nullptr);
      const WorldOverlap& want = overlaps[std::size_t(i / 2)];
      EXPECT_EQ(r->overlap()->brush(), want.brush);
      EXPECT_EQ(std::vector<EntityId>(r->overlap()->entities()->begin(), r->overlap()->entities()->end()),
                want.entities);
      with_entities += !want.entities.empty();
    }
  }
  EXPECT_GT(with_entities, 3);
}

TEST_F(RpcServerTest, TheRateLimitPassesExactlyTheBurstAndSaysWhenToRetry) {
  constexpr double kRate = 8;   // tokens per second: 1/8 s is one token, exact in binary
  constexpr double kBurst = 8;  // four sweeps (cost 2 each)
  auto clock = std::make_shared<std::atomic<double>>(100.0);
  RpcSettings s = test_settings();
  s.rate = kRate;
  s.burst = kBurst;
  s.now = [clock] { return clock->load(); };
  RpcHarness rpc(arena_->directory, s);
  LoopbackClient client(rpc.port());
  // retry_after_ms closed form: the missing tokens at the refill rate, rounded up to a millisecond.
  const auto retry_ms = [&](double cost, double available) {
    return std::uint32_t(std::ceil((cost - available) / kRate * 1000.0));
  };
  const ShapeArg sphere{wire::ShapeKind::Sphere, 10};
  const auto sweep = [&](std::uint64_t id) {
    flatbuffers::FlatBufferBuilder fbb;
    return request_frame(fbb, wire::Message::SweepRequest,
                         add_sweep(fbb, match_id_, sphere, {0, 0, 100}, {50, 0, 100}), id);
  };
  const auto raycast = [&](std::uint64_t id) {
    flatbuffers::FlatBufferBuilder fbb;
    return request_frame(fbb, wire::Message::RaycastRequest,
                         add_raycast(fbb, match_id_, {0, 0, 100}, {1, 0, 0}, 50), id);
  };
  // Expects the next reply to be id's answer (refused: RateLimited after retry_after_ms).
  const auto expect = [&](std::uint64_t id, bool passes, std::uint32_t retry = 0) {
    const std::optional<Frame> f = client.read_frame();
    ASSERT_TRUE(f.has_value()) << "request " << id;
    EXPECT_EQ(f->envelope()->request_id(), id);
    const wire::RpcError* e = error_of(*f);
    EXPECT_EQ(e == nullptr, passes) << "request " << id;
    if (e != nullptr) {
      EXPECT_EQ(e->code(), wire::ErrorCode::RateLimited);
      EXPECT_EQ(e->retry_after_ms(), retry) << "request " << id;
    }
  };

  for (std::uint64_t id = 1; id <= 6; ++id)
    ASSERT_TRUE(client.send(sweep(id)));
  for (std::uint64_t id = 1; id <= 4; ++id)
    expect(id, true);
  expect(5, false, retry_ms(2, 0));  // 250 ms
  expect(6, false, retry_ms(2, 0));

  clock->store(100.125);  // one token back
  ASSERT_TRUE(client.send(sweep(7)));
  expect(7, false, retry_ms(2, 1));  // 125 ms
  clock->store(100.25);              // two
  ASSERT_TRUE(client.send(sweep(8)));
  ASSERT_TRUE(client.send(sweep(9)));
  ASSERT_TRUE(client.send(raycast(10)));
  expect(8, true);
  expect(9, false, retry_ms(2, 0));
  expect(10, false, retry_ms(1, 0));  // 125 ms

  clock->store(200);  // long idle: the bucket holds its burst, never more
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<wire::BatchQuery>> queries;
  for (int i = 0; i < 4; ++i)
    queries.push_back(wire::CreateBatchQuery(fbb, add_raycast(fbb, match_id_, {0, 0, 100}, {1, 0, 0}, 50)));
  for (int i = 0; i < 2; ++i)
    queries.push_back(
        wire::CreateBatchQuery(fbb, 0, add_sweep(fbb, match_id_, sphere, {0, 0, 100}, {5, 0, 100})));
  ASSERT_TRUE(client.send(request_frame(fbb, wire::Message::BatchRequest,
                                        wire::CreateBatchRequest(fbb, fbb.CreateVector(queries)), 11)));
  ASSERT_TRUE(client.send(raycast(12)));
  expect(11, true);  // 4 + 2·2 = 8: exactly the burst
  expect(12, false, retry_ms(1, 0));
  EXPECT_EQ(rpc.rejections.count(wire::ErrorCode::RateLimited), 6u);
}

// A ListMatches round trip: proves the connection was accepted and is served.
bool served(LoopbackClient& c, std::uint64_t id) {
  flatbuffers::FlatBufferBuilder fbb;
  if (!c.send(request_frame(fbb, wire::Message::ListMatches, wire::CreateListMatches(fbb), id))) return false;
  const std::optional<Frame> f = c.read_frame();
  return f && f->envelope()->message_as_ListMatchesReply() != nullptr && f->envelope()->request_id() == id;
}

TEST_F(RpcServerTest, ConnectionsOverTheLimitAreToldAndClosed) {
  RpcSettings s = test_settings();
  s.max_connections = 2;
  RpcHarness rpc(arena_->directory, s);
  auto first = std::make_unique<LoopbackClient>(rpc.port());
  LoopbackClient second(rpc.port());
  ASSERT_TRUE(served(*first, 1));
  ASSERT_TRUE(served(second, 2));
  LoopbackClient third(rpc.port());
  const std::optional<Frame> f = third.read_frame();
  ASSERT_TRUE(f.has_value());
  ASSERT_NE(error_of(*f), nullptr);
  EXPECT_EQ(error_of(*f)->code(), wire::ErrorCode::TooManyConnections);
  EXPECT_EQ(f->envelope()->request_id(), 0u);
  EXPECT_TRUE(third.closed_by_server());
  EXPECT_EQ(rpc.rejections.count(wire::ErrorCode::TooManyConnections), 1u);
  EXPECT_TRUE(served(second, 3));  // the others are unaffected

  // Once one leaves, a newcomer is served (the server notices the close asynchronously: retry a bounded
  // number of times, each a real round trip).
  first.reset();
  bool admitted = false;
  for (int attempt = 0; attempt < 200 && !admitted; ++attempt) {
    LoopbackClient next(rpc.port());
    admitted = served(next, 4);
  }
  EXPECT_TRUE(admitted);
}

TEST_F(RpcServerTest, StopWritesTheQueuedRepliesThenCloses) {
  RpcHarness rpc(arena_->directory, test_settings());
  LoopbackClient client(rpc.port());
  std::vector<std::uint8_t> stream;
  for (int i = 0; i < 50; ++i) {
    flatbuffers::FlatBufferBuilder fbb;
    const auto frame = request_frame(fbb, wire::Message::RaycastRequest,
                                     add_raycast(fbb, match_id_, {0, 0, 100}, {1, 0.5f, 0}, 3000), 100 + i);
    stream.insert(stream.end(), frame.begin(), frame.end());
  }
  ASSERT_TRUE(client.send(stream));
  const std::optional<Frame> first = client.read_frame();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->envelope()->request_id(), 100u);
  rpc.server->stop();
  // Every request the server had read is answered, in order and whole; then the stream ends.
  std::uint64_t next = 101;
  while (const std::optional<Frame> f = client.read_frame()) {
    EXPECT_EQ(f->envelope()->request_id(), next++);
    EXPECT_NE(f->envelope()->message_as_RaycastReply(), nullptr);
  }
  EXPECT_TRUE(client.eof());
  LoopbackClient late(rpc.port());
  EXPECT_TRUE(!late.connected() || late.closed_by_server());
}

}  // namespace
}  // namespace shiftcast::rpc_test
