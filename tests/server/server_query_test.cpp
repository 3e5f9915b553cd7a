// End to end over loopback: raycasts through the real server's TCP RPC answer exactly what the world
// query answers in-process on the same level (the oracle), rewound raycasts hit a player where it was at
// the tick asked for and miss where it is now, batches answer in order, and a flood of queries leaves
// every match's tick schedule untouched.
#include <gtest/gtest.h>

#include <random>

#include "protocol/snapshot_delta.hpp"
#include "tests/support/rpc_raycast.hpp"
#include "tests/support/seeded_random.hpp"
#include "tests/support/server_fixture.hpp"
#include "world/level/compiled_level.hpp"
#include "world/match/character_motor.hpp"
#include "world/match/world_query.hpp"

namespace shiftcast {
namespace {

CompiledLevel compile_arena() {
  LevelResult imported = import_level_file(std::string(SHIFTCAST_SOURCE_DIR) + "/configs/levels/arena.map");
  EXPECT_TRUE(imported.ok());
  CompiledLevelResult compiled = compile_level(std::move(imported.level), {}, {});
  EXPECT_TRUE(compiled.ok());
  return std::move(compiled.level);
}

class ServerQueryTest : public ServerTest {};

TEST_F(ServerQueryTest, RaycastsOverRpcEqualTheWorldQueryOnTheSameLevel) {
  start();
  const CompiledLevel arena = compile_arena();
  RpcTestClient rpc(server_.ports().rpc);
  std::mt19937 rng(20261121);
  UniformReal<float> coord(-1000, 1000), height(1, 500), dir(-1, 1);
  for (int i = 0; i < 200; ++i) {
    const Vec3 o{coord(rng), coord(rng), height(rng)};
    Vec3 d{dir(rng), dir(rng), dir(rng)};
    if (length(d) < 0.1f) d = {1, 0, 0};
    const RayReply got = raycast(rpc, 1, o, d, 4000, 0);
    ASSERT_EQ(got.error, wire::ErrorCode::Ok);
    const WorldHit want = world_raycast(arena.tree, {}, o, d, 4000, {.mask = 0});
    ASSERT_EQ(got.hit, want.trace.hit) << i;
    EXPECT_EQ(got.fraction, want.trace.fraction) << i;
    EXPECT_EQ(got.end, want.trace.end_position) << i;
    EXPECT_EQ(got.brush, want.trace.brush) << i;
    if (want.trace.hit) {
      EXPECT_EQ(got.normal, want.trace.normal) << i;
    }
  }
  EXPECT_EQ(server_.stop(), 0);
}

TEST_F(ServerQueryTest, RewoundRaycastHitsWhereThePlayerWasAndMissesWhereItIsNow) {
  start();
  UdpTestClient c(server_.ports().udp, token(11));
  ASSERT_TRUE(c.connect());
  // Wait for a complete snapshot with the player standing on the floor.
  ASSERT_TRUE(c.pump_until([&] {
    return c.session().own_entity() != 0 && c.session().latest_snapshot_complete() &&
           c.session().latest_snapshot_tick() > 32;
  }));
  const std::uint32_t me = c.session().own_entity();
  const std::uint64_t then_tick = c.session().latest_snapshot_tick();
  Vec3 then{};
  for (const wire::EntityState& e : c.session().world_state())
    if (e.id() == me)
      then = {dequantize_position(e.position()).x(), dequantize_position(e.position()).y(),
              dequantize_position(e.position()).z()};
  // Run forward for 24 ticks (well inside the one second of history): more than a player's width.
  for (int i = 0; i < 24; ++i) {
    PlayerInput input;
    input.forward = 1;
    c.send_command(input, double(then_tick));
    const std::uint64_t sent = c.session().last_command_sequence();
    ASSERT_TRUE(c.pump_until([&] { return c.session().input_ack() >= sent; }));
  }
  RpcTestClient rpc(server_.ports().rpc);
  // Straight down onto the player's head as it stood at then_tick (its reference point is its feet).
  const Vec3 above = then + Vec3{0, 0, 100};
  const RayReply past =
      raycast(rpc, 1, above, {0, 0, -1}, 200, kLayerAll, wire::AsOfKind::Tick, double(then_tick));
  ASSERT_EQ(past.error, wire::ErrorCode::Ok);
  EXPECT_EQ(past.clamp, wire::RewindClamp::None);
  EXPECT_EQ(past.tick_used, double(then_tick));
  EXPECT_TRUE(past.hit);
  EXPECT_EQ(past.entity, me);
  EXPECT_NEAR(past.end.z, then.z + MotorConfig{}.height, 0.5f);

  const RayReply now = raycast(rpc, 1, above, {0, 0, -1}, 200, kLayerAll);
  ASSERT_EQ(now.error, wire::ErrorCode::Ok);
  EXPECT_GT(now.tick_used, double(then_tick) + 20);
  EXPECT_NE(now.entity, me);
  EXPECT_TRUE(now.hit);  // the floor
  EXPECT_EQ(now.entity, 0u);

  // Asked for a tick more than the kept second ago: clamped to the oldest, and the reply says so.
  const RayReply old = raycast(rpc, 1, above, {0, 0, -1}, 200, kLayerAll, wire::AsOfKind::Tick, 1);
  EXPECT_EQ(old.clamp, wire::RewindClamp::TooOld);
  EXPECT_GT(old.tick_used, 1.0);
  EXPECT_EQ(server_.stop(), 0);
}

TEST_F(ServerQueryTest, PipelinedAndBatchedRaycastsAnswerInOrder) {
  start();
  const CompiledLevel arena = compile_arena();
  RpcTestClient rpc(server_.ports().rpc);
  constexpr int kPipelined = 100;
  std::vector<Vec3> origins;
  for (int i = 0; i < kPipelined; ++i)
    origins.push_back({-900.0f + 18 * i, -50, 40});
  for (int i = 0; i < kPipelined; ++i) {
    flatbuffers::FlatBufferBuilder fbb;
    finish_envelope(fbb, wire::Message::RaycastRequest,
                    build_ray(fbb, 1, origins[i], {0, 1, 0}, 4000, 0, wire::AsOfKind::Now, 0).Union(),
                    1000 + i);
    ASSERT_TRUE(rpc.send(fbb));
  }
  for (int i = 0; i < kPipelined; ++i) {
    const auto bytes = rpc.receive();
    ASSERT_TRUE(bytes.has_value());
    const EnvelopeView v = verify_envelope(*bytes, kMaxRpcFrameBytes);
    ASSERT_EQ(v.error, wire::ErrorCode::Ok);
    EXPECT_EQ(v.envelope->request_id(), std::uint64_t(1000 + i));
    const auto* r = v.envelope->message_as_RaycastReply();
    ASSERT_NE(r, nullptr);
    const WorldHit want = world_raycast(arena.tree, {}, origins[i], {0, 1, 0}, 4000, {.mask = 0});
    EXPECT_EQ(read_ray(r).fraction, want.trace.fraction);
  }

  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<wire::BatchQuery>> queries;
  for (int i = 0; i < kPipelined; ++i)
    queries.push_back(wire::CreateBatchQuery(
        fbb, build_ray(fbb, 1, origins[i], {0, -1, 0}, 4000, 0, wire::AsOfKind::Now, 0)));
  const std::string key = dev_service_key();
  finish_envelope(fbb, wire::Message::BatchRequest,
                  wire::CreateBatchRequestDirect(fbb, &queries, key.c_str()).Union(), 77);
  ASSERT_TRUE(rpc.send(fbb));
  const auto bytes = rpc.receive();
  ASSERT_TRUE(bytes.has_value());
  const EnvelopeView v = verify_envelope(*bytes, kMaxRpcFrameBytes);
  ASSERT_EQ(v.error, wire::ErrorCode::Ok);
  EXPECT_EQ(v.envelope->request_id(), 77u);
  const auto* batch = v.envelope->message_as_BatchReply();
  ASSERT_NE(batch, nullptr);
  ASSERT_EQ(batch->results()->size(), std::size_t(kPipelined));
  for (int i = 0; i < kPipelined; ++i) {
    const WorldHit want = world_raycast(arena.tree, {}, origins[i], {0, -1, 0}, 4000, {.mask = 0});
    const auto* r = batch->results()->Get(i)->raycast();
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(read_ray(r).fraction, want.trace.fraction) << i;
    EXPECT_EQ(read_ray(r).brush, want.trace.brush) << i;
  }
  EXPECT_EQ(server_.stop(), 0);
}

}  // namespace
}  // namespace shiftcast
