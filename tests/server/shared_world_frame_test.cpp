// The server quantizes its world once per snapshot tick and shares it between every client's frame
// (ClientConnection::build_frame_shared): a client whose delta carried every change keeps the shared
// world as its baseline instead of a copy. Oracle: a second connection fed the same world by value
// (build_frame, the per-client copy) in the same lossy exchange: both send the same inner frame, byte
// for byte, every tick; and each client rebuilds exactly the world whenever its snapshot was complete.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "server/client_connection.hpp"
#include "tests/support/channel_harness.hpp"

namespace shiftcast {
namespace {

using namespace channel_test;

TEST(ClientConnection, ASharedWorldSendsWhatAPerClientCopySends) {
  Connected shared_pair, copied_pair;
  ClientConnection& shared = shared_pair.connection();
  ClientConnection& copied = copied_pair.connection();
  const Key shared_key = shared_pair.client.token().server_to_client;
  const Key copied_key = copied_pair.client.token().server_to_client;
  std::mt19937 rng(33);
  std::uniform_int_distribution<std::int32_t> coordinate(-4096, 4096);
  std::map<std::uint32_t, wire::EntityState> entities;
  std::uint32_t next_id = 1;
  int complete = 0, incomplete = 0;
  for (std::uint64_t tick = 1; tick <= 400; ++tick) {
    const double now = kStart + tick * kTickSeconds;
    // Sometimes a world too large for one datagram, mostly a few dozen entities, a few of them moving.
    const std::size_t target = tick % 50 < 5 ? 150 : 30 + rng() % 10;
    while (entities.size() < target)
      entities[next_id++] = {};
    while (entities.size() > target)
      entities.erase(std::next(entities.begin(), rng() % entities.size()));
    auto world = std::make_shared<SnapshotState>();
    for (auto& [id, e] : entities) {
      if (rng() % 4 == 0 || e.id() == 0)
        e = wire::EntityState(id, 1, 0, std::uint16_t(rng()),
                              wire::QuantizedVec(coordinate(rng), coordinate(rng), coordinate(rng)));
      world->push_back(e);
    }
    const Vec3 focus{float(tick % 7), 0, 0};
    const auto a = shared.build_frame_shared(tick, world, focus, now);
    const auto b = copied.build_frame(tick, *world, focus, now);
    const OpenedPacket oa = open_test_packet(a, Direction::kServerToClient, shared_key);
    const OpenedPacket ob = open_test_packet(b, Direction::kServerToClient, copied_key);
    ASSERT_EQ(oa.error, wire::ErrorCode::Ok);
    ASSERT_EQ(ob.error, wire::ErrorCode::Ok);
    ASSERT_EQ(oa.message, ob.message) << "tick " << tick;

    // The same losses on both links, both ways.
    if (rng() % 10 < 8) {
      ASSERT_EQ(shared_pair.client.on_datagram(a, now), wire::ErrorCode::Ok);
      ASSERT_EQ(copied_pair.client.on_datagram(b, now), wire::ErrorCode::Ok);
      if (shared_pair.client.latest_snapshot_tick() == tick &&
          shared_pair.client.latest_snapshot_complete()) {
        ++complete;
        EXPECT_EQ(shared_pair.client.world_state().size(), world->size());
        EXPECT_TRUE(std::equal(world->begin(), world->end(), shared_pair.client.world_state().begin(),
                               shared_pair.client.world_state().end(), same_entity_state))
            << "tick " << tick;
      } else if (shared_pair.client.latest_snapshot_tick() == tick) {
        ++incomplete;
      }
    }
    const bool up = rng() % 10 < 8;
    const auto ua = shared_pair.client.send_command(command_input(tick), double(tick), now);
    const auto ub = copied_pair.client.send_command(command_input(tick), double(tick), now);
    if (up) {
      ASSERT_EQ(shared.on_packet(ua, kClientAddress, now), wire::ErrorCode::Ok);
      ASSERT_EQ(copied.on_packet(ub, kClientAddress, now), wire::ErrorCode::Ok);
    }
    ASSERT_EQ(shared.acked_snapshot_tick(), copied.acked_snapshot_tick());
  }
  EXPECT_GT(complete, 100);
  EXPECT_GT(incomplete, 5);
  EXPECT_EQ(shared_pair.client.counters().snapshots_skipped, 0u);
}

}  // namespace
}  // namespace shiftcast
