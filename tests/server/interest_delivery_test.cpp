// What interest management hands the reliable machinery, and that the machinery delivers it. Oracles:
// the routing rule written out directly over a random grid set (tests/server/interest_grid.hpp); the
// filtered world itself, which the client must hold after every complete snapshot while entities leave
// and re-enter its set over a lossy link; the routed events, which must arrive in order without gaps.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "server/interest_filter.hpp"
#include "tests/server/interest_grid.hpp"
#include "tests/support/channel_harness.hpp"

namespace shiftcast {
namespace {

using namespace channel_test;
using interest_test::GridSet;
using interest_test::make_grid_set;

constexpr float kCell = 256;

Entity player_at(EntityId id, Vec3 feet) {
  Entity e;
  e.id = id;
  e.shape = Shape::cylinder(15, 56);
  e.pose = Pose{feet, 0};
  compute_entity_bounds(e);
  return e;
}

ContactRecord contact(std::uint64_t tick, EntityId a, std::uint8_t a_kind, EntityId b, std::uint8_t b_kind,
                      ContactPhase phase, Vec3 point) {
  ContactRecord r;
  r.contact.tick = tick;
  r.contact.a = a;
  r.contact.b = b;
  r.contact.phase = phase;
  r.contact.point = point;
  r.a_kind = a_kind;
  r.b_kind = b_kind;
  return r;
}

constexpr auto kPlayerKind = static_cast<std::uint8_t>(EntityKind::kPlayer);
constexpr auto kProjectileKind = static_cast<std::uint8_t>(EntityKind::kProjectile);

// A client's own contacts go to it in every phase but persist, unless persist_events asks for those too.
class InterestRoutingRule : public ::testing::TestWithParam<int> {};

TEST_P(InterestRoutingRule, ContactsGoToTheirPlayersAndToThoseWhoSeeThePoint) {
  const GridSet g = make_grid_set(6, 5, kCell, 0.3, 21);
  InterestSettings settings;
  settings.radius = 200;
  settings.persist_events = GetParam();
  InterestFilter filter(settings, g.set);
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> x(-100, 6 * kCell + 100), y(-100, 5 * kCell + 100);
  std::vector<Entity> players;
  for (EntityId id = 1; id <= 12; ++id)
    players.push_back(player_at(id, {x(rng), y(rng), 0}));
  std::vector<InterestViewer> viewers;
  for (const Entity& p : players)
    viewers.push_back(filter.viewer(p.id, &p));
  std::vector<std::uint32_t> to;
  std::size_t own = 0, seen = 0, suppressed = 0;
  for (int i = 0; i < 3000; ++i) {
    const EntityId a = 1 + rng() % 16;  // ids above 12: projectiles and props nobody controls
    const EntityId b = rng() % 4 == 0 ? kNoEntity : 1 + rng() % 16;
    const std::uint8_t a_kind = a <= 12 ? kPlayerKind : kProjectileKind;
    const std::uint8_t b_kind = b == kNoEntity ? kKindLevel : b <= 12 ? kPlayerKind : kProjectileKind;
    const auto phase = ContactPhase(rng() % 3);
    const Vec3 point{x(rng), y(rng), 20};
    const ContactRecord r = contact(1, a, a_kind, b, b_kind, phase, point);
    to.clear();
    const ContactRoute route = filter.route_contact(r, viewers, to);
    std::vector<std::uint32_t> expected;
    std::size_t expected_suppressed = 0;
    const bool observed = phase == ContactPhase::kBegin && b != kNoEntity && (a <= 12 || b <= 12);
    for (std::size_t v = 0; v < players.size(); ++v) {
      const Vec3 eye = players[v].pose.position + Vec3{0, 0, kInterestEyeHeight};
      const bool mine = (players[v].id == a || players[v].id == b) &&
                        (phase != ContactPhase::kPersist || settings.persist_events != 0);
      const double dx = double(eye.x) - point.x, dy = double(eye.y) - point.y, dz = double(eye.z) - point.z;
      const double d2 = dx * dx + dy * dy + dz * dz;
      const std::int32_t from = g.cell_of(eye.x, eye.y), at = g.cell_of(point.x, point.y);
      const bool sees = d2 <= settings.radius * settings.radius || from == kNoCluster || at == kNoCluster ||
                        g.may_see(from, at);
      if (mine || (observed && sees)) {
        expected.push_back(std::uint32_t(v));
        mine ? ++own : ++seen;
      } else if (observed) {
        ++expected_suppressed;
      }
    }
    ASSERT_EQ(to, expected) << "contact " << i;
    EXPECT_EQ(route.routed, expected.size());
    EXPECT_EQ(route.suppressed, expected_suppressed);
    suppressed += route.suppressed;
  }
  EXPECT_GT(own, 500u);
  EXPECT_GT(seen, 500u);
  EXPECT_GT(suppressed, 500u);
}

INSTANTIATE_TEST_SUITE_P(PersistEvents, InterestRoutingRule, ::testing::Values(0, 1));

TEST(InterestRouting, AFarUnseenContactDoesNotReachAClientItsOwnAlwaysDoInOrder) {
  // Two cells that cannot see each other (probability 0: each cell sees itself only).
  const GridSet g = make_grid_set(4, 1, kCell, 0.0, 1);
  InterestFilter filter({}, g.set);
  const Entity me = player_at(kOwnEntity, {40, 100, 0});
  const Entity other = player_at(2, {4 * kCell - 40, 100, 0});  // 3 cells away, beyond the radius
  const std::vector<InterestViewer> viewers{filter.viewer(me.id, &me), filter.viewer(other.id, &other)};
  Connected pair;
  ClientConnection& connection = pair.connection();
  std::mt19937 rng(8);
  std::vector<std::uint64_t> queued_ticks;  // what this client was routed, in order
  std::vector<std::uint64_t> delivered_ticks;
  std::vector<std::uint32_t> to;
  std::size_t unseen = 0;
  const auto world = std::make_shared<const SnapshotState>();
  for (std::uint64_t tick = 1; tick <= 300; ++tick) {
    const double now = kStart + tick * kTickSeconds;
    // Every tick: a hit far away between the other player and a projectile; often one of our own.
    const ContactRecord far =
        contact(tick, 2, kPlayerKind, 500, kProjectileKind, ContactPhase::kBegin, other.pose.position);
    const ContactRecord mine = contact(tick, kOwnEntity, kPlayerKind, 501, kProjectileKind,
                                       ContactPhase(tick % 3), me.pose.position);
    for (const ContactRecord* r : {&far, &mine}) {
      if (r == &mine && rng() % 3 == 0) continue;
      to.clear();
      filter.route_contact(*r, viewers, to);
      const bool for_me = std::find(to.begin(), to.end(), 0u) != to.end();
      if (r == &far) {
        EXPECT_FALSE(for_me) << "tick " << tick;
        ++unseen;
      }
      if (for_me) {
        connection.queue_contact(*r);
        queued_ticks.push_back(r->contact.tick);
      }
    }
    // A lossy link both ways: 30% of the frames and of the acknowledgements lost.
    const auto frame = connection.build_frame_shared(tick, world, me.pose.position, now);
    if (rng() % 10 >= 3) {
      ASSERT_EQ(pair.client.on_datagram(frame, now), wire::ErrorCode::Ok);
      for (const wire::ContactEvent& e : pair.client.take_events()) {
        EXPECT_EQ(e.a(), kOwnEntity);
        EXPECT_NE(e.phase(), std::uint8_t(ContactPhase::kPersist));  // persist_events is 0
        delivered_ticks.push_back(e.tick());
      }
    }
    const auto up = pair.client.send_command(command_input(tick), double(tick), now);
    if (rng() % 10 >= 3) {
      ASSERT_EQ(connection.on_packet(up, kClientAddress, now), wire::ErrorCode::Ok);
    }
  }
  EXPECT_EQ(unseen, 300u);
  ASSERT_GT(queued_ticks.size(), 100u);
  // Everything queued was delivered in order, except what was still in flight at the end.
  ASSERT_LE(delivered_ticks.size(), queued_ticks.size());
  EXPECT_GT(delivered_ticks.size(), queued_ticks.size() - 20);
  EXPECT_TRUE(std::equal(delivered_ticks.begin(), delivered_ticks.end(), queued_ticks.begin()));
}

TEST(InterestWorlds, TheClientHoldsItsFilteredWorldAfterEveryCompleteSnapshot) {
  // Entities leave and re-enter the client's set (the world it is sent is a random subset of the
  // whole world each snapshot); the delta encoder must remove and re-add them, so the client's rebuilt
  // world equals the filtered world whenever a snapshot was complete.
  Connected pair;
  ClientConnection& connection = pair.connection();
  FilteredWorlds worlds;
  std::mt19937 rng(17);
  std::uniform_int_distribution<std::int32_t> coordinate(-4096, 4096);
  SnapshotState whole;
  for (std::uint32_t id = 1; id <= 40; ++id)
    whole.emplace_back(id, 0, 0, 0, wire::QuantizedVec(0, 0, 0));
  std::vector<std::uint32_t> kept;
  int complete = 0, reentered = 0;
  std::set<std::uint32_t> held_before;
  for (std::uint64_t tick = 1; tick <= 400; ++tick) {
    const double now = kStart + tick * kTickSeconds;
    for (auto& e : whole)
      if (rng() % 3 == 0)
        e = wire::EntityState(e.id(), 1, 0, std::uint16_t(rng()),
                              wire::QuantizedVec(coordinate(rng), coordinate(rng), coordinate(rng)));
    kept.clear();
    for (std::uint32_t i = 0; i < whole.size(); ++i)
      if (whole[i].id() == kOwnEntity || rng() % 4 != 0) kept.push_back(i);
    const std::shared_ptr<const SnapshotState> sent = worlds.filtered(whole, kept);
    ASSERT_EQ(sent->size(), kept.size());
    const auto frame = connection.build_frame_shared(tick, sent, {}, now);
    if (rng() % 10 < 8) {
      ASSERT_EQ(pair.client.on_datagram(frame, now), wire::ErrorCode::Ok);
      if (pair.client.latest_snapshot_tick() == tick && pair.client.latest_snapshot_complete()) {
        ++complete;
        const SnapshotState& held = pair.client.world_state();
        ASSERT_TRUE(std::equal(sent->begin(), sent->end(), held.begin(), held.end(), same_entity_state))
            << "tick " << tick;
        for (const auto& e : held)
          if (!held_before.empty() && !held_before.contains(e.id())) ++reentered;
        held_before.clear();
        for (const auto& e : held)
          held_before.insert(e.id());
      }
    }
    const auto up = pair.client.send_command(command_input(tick), double(tick), now);
    if (rng() % 10 < 8) {
      ASSERT_EQ(connection.on_packet(up, kClientAddress, now), wire::ErrorCode::Ok);
    }
  }
  EXPECT_GT(complete, 250);
  EXPECT_GT(reentered, 100);
  // The buffers are reused: no more than the connection may still hold plus the one being filled.
  EXPECT_LE(worlds.buffers(), kMaxPooledWorlds);
  EXPECT_LT(worlds.buffers(), 10u);
}

}  // namespace
}  // namespace shiftcast
