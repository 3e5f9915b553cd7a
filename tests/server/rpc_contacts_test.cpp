// Contact subscriptions over loopback TCP against a real arena match stepped by the test. The oracle is
// the simulation's own contacts() after every tick, filtered by the tests' reading of SubscribeContacts
// (entities on either side, kinds of either side, phases): every push must carry exactly those events, in
// order, numbered 1, 2, 3, ... per subscription. A subscriber that never reads is cut off with
// SlowConsumer while the match keeps ticking; unsubscribing, the match ending and the connection closing
// each stop the stream.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "tests/support/query_requests.hpp"
#include "tests/support/rpc_harness.hpp"

namespace shiftcast::rpc_test {
namespace {

// Reads and their keys are hostile_rpc_test.cpp's: here they are open.
RpcSettings open_reads() {
  RpcSettings s;
  s.open_reads = true;
  return s;
}

using query_test::ArenaMatch;

constexpr std::uint8_t kBitPlayer = 1 << 0;
constexpr std::uint8_t kBitProp = 1 << 2;
constexpr std::uint8_t kBitLevel = 1 << 3;
constexpr std::uint8_t kBitBegin = 1 << 0;
constexpr std::uint8_t kBitEnd = 1 << 2;

struct Wanted {
  std::vector<EntityId> entities;
  std::uint8_t kinds = 0;
  std::uint8_t phases = 0;
};

class RpcContactsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { arena_ = new ArenaMatch(12, 24, 6, 20); }
  static void TearDownTestSuite() {
    delete arena_;
    arena_ = nullptr;
  }
  void SetUp() override {
    for (const Entity& e : arena_->stepped()->simulation().entities()) {
      if (e.kind == EntityKind::kProp) props_.insert(e.id);
      if (e.kind == EntityKind::kPlayer) players_.insert(e.id);
    }
  }

  // Players and props stay for the whole match; only projectiles come and go within a tick.
  std::uint8_t kind_of(EntityId id) const {
    if (id == kNoEntity) return 3;
    if (players_.count(id)) return 0;
    return props_.count(id) ? 2 : 1;
  }
  bool passes(const Wanted& w, const Contact& c) const {
    const bool named = w.entities.empty() || std::count(w.entities.begin(), w.entities.end(), c.a) ||
                       (c.b != kNoEntity && std::count(w.entities.begin(), w.entities.end(), c.b));
    const bool kind = w.kinds == 0 || (w.kinds >> kind_of(c.a) & 1) || (w.kinds >> kind_of(c.b) & 1);
    const bool phase = w.phases == 0 || (w.phases >> int(c.phase) & 1);
    return named && kind && phase;
  }
  void expect_event(const wire::ContactEvent& got, const Contact& want, std::uint64_t sequence) {
    EXPECT_EQ(got.sequence(), sequence);
    EXPECT_EQ(got.tick(), want.tick);
    EXPECT_EQ(got.time(), want.time);
    EXPECT_EQ(got.phase(), std::uint8_t(want.phase));
    EXPECT_EQ(got.a(), want.a);
    EXPECT_EQ(got.b(), want.b);
    EXPECT_EQ(got.a_kind(), kind_of(want.a));
    EXPECT_EQ(got.b_kind(), kind_of(want.b));
    EXPECT_EQ(got.brush(), want.brush);
    EXPECT_EQ(got.point().x(), want.point.x);
    EXPECT_EQ(got.point().z(), want.point.z);
    EXPECT_EQ(got.normal().y(), want.normal.y);
    EXPECT_EQ(got.separation(), want.separation);
    EXPECT_EQ(got.relative_speed(), want.relative_speed);
  }

  static inline ArenaMatch* arena_ = nullptr;
  std::set<EntityId> props_, players_;
};

std::uint64_t subscribe(LoopbackClient& c, std::uint32_t match, const Wanted& w, std::uint64_t request_id) {
  flatbuffers::FlatBufferBuilder fbb;
  const auto body = wire::CreateSubscribeContactsDirect(
      fbb, match, w.entities.empty() ? nullptr : &w.entities, w.kinds, w.phases);
  EXPECT_TRUE(c.send(request_frame(fbb, wire::Message::SubscribeContacts, body, request_id)));
  const std::optional<Frame> f = c.read_frame();
  EXPECT_TRUE(f.has_value());
  if (!f) return 0;
  EXPECT_EQ(f->envelope()->request_id(), request_id);
  const wire::SubscribeContactsReply* r = f->envelope()->message_as_SubscribeContactsReply();
  EXPECT_NE(r, nullptr);
  return r ? r->subscription_id() : 0;
}

// Sends ListMatches and returns every frame received before its reply: the server handles what the
// match posted before the request arrived first, so these are all the pushes of the ticks stepped.
std::vector<Frame> frames_until_round_trip(LoopbackClient& c, std::uint64_t request_id) {
  flatbuffers::FlatBufferBuilder fbb;
  EXPECT_TRUE(
      c.send(request_frame(fbb, wire::Message::ListMatches, wire::CreateListMatches(fbb), request_id)));
  std::vector<Frame> before;
  while (std::optional<Frame> f = c.read_frame()) {
    if (f->envelope()->request_id() == request_id && f->envelope()->message_as_ListMatchesReply())
      return before;
    before.push_back(std::move(*f));
  }
  ADD_FAILURE() << "no reply to ListMatches " << request_id;
  return before;
}

TEST_F(RpcContactsTest, PushesCarryEveryFilteredContactInOrderWithoutGaps) {
  RpcHarness rpc(arena_->directory, open_reads());
  LoopbackClient client(rpc.port());
  const std::vector<EntityId> two_players(players_.begin(), std::next(players_.begin(), 2));
  const std::vector<Wanted> filters = {
      {two_players, 0, 0},                   // either side is one of two players
      {{}, kBitProp, 0},                     // a prop on either side
      {{}, kBitLevel, kBitBegin | kBitEnd},  // touches of the level starting or ending
      {{}, kBitPlayer | kBitLevel, 0},       // players or the level
      {},                                    // everything
  };
  std::map<std::uint64_t, std::size_t> filter_of;  // subscription id -> index in filters
  for (std::size_t i = 0; i < filters.size(); ++i)
    filter_of[subscribe(client, arena_->id, filters[i], 10 + i)] = i;
  ASSERT_EQ(filter_of.size(), filters.size());

  std::vector<Contact> contacts;  // every tick's, in the simulation's order
  for (int t = 0; t < 96; ++t) {
    arena_->stepped()->step();
    const auto tick = arena_->stepped()->simulation().contacts();
    contacts.insert(contacts.end(), tick.begin(), tick.end());
  }
  std::vector<std::vector<wire::ContactEvent>> got(filters.size());
  for (const Frame& f : frames_until_round_trip(client, 99)) {
    const wire::ContactPush* push = f.envelope()->message_as_ContactPush();
    ASSERT_NE(push, nullptr);
    ASSERT_TRUE(filter_of.count(push->subscription_id()));
    const std::size_t i = filter_of[push->subscription_id()];
    EXPECT_EQ(f.envelope()->request_id(), 10 + i);  // the subscribe request's id
    EXPECT_EQ(push->match_id(), arena_->id);
    for (const wire::ContactEvent* e : *push->events())
      got[i].push_back(*e);
  }
  for (std::size_t i = 0; i < filters.size(); ++i) {
    SCOPED_TRACE("filter " + std::to_string(i));
    std::vector<Contact> want;
    for (const Contact& c : contacts)
      if (passes(filters[i], c)) want.push_back(c);
    EXPECT_GT(want.size(), 5u);
    ASSERT_EQ(got[i].size(), want.size());
    for (std::size_t k = 0; k < want.size(); ++k)
      expect_event(got[i][k], want[k], k + 1);
  }
  EXPECT_LT(got[0].size(), got[4].size());
}

TEST_F(RpcContactsTest, ASubscriberThatNeverReadsIsCutOffWhileTheMatchTicksOn) {
  RpcSettings settings = open_reads();
  settings.subscriber_max_pending_bytes = 2048;
  settings.socket_send_buffer_bytes = 4096;
  RpcHarness rpc(arena_->directory, settings);
  LoopbackClient slow(rpc.port(), 4096);
  const std::uint64_t id = subscribe(slow, arena_->id, {}, 7);
  int ticks = 0;
  // The test thread is the match's worker: that it keeps stepping is the proof the match never waits.
  while (rpc.rejections.count(wire::ErrorCode::SlowConsumer) == 0 && ticks < 5000) {
    arena_->stepped()->step();
    ++ticks;
  }
  ASSERT_EQ(rpc.rejections.count(wire::ErrorCode::SlowConsumer), 1u) << "after " << ticks << " ticks";
  for (int t = 0; t < 20; ++t)
    arena_->stepped()->step();
  EXPECT_TRUE(arena_->stepped()->contact_feed().empty());

  std::uint64_t next = 1;
  bool cut = false;
  for (const Frame& f : frames_until_round_trip(slow, 8)) {
    ASSERT_FALSE(cut) << "nothing may follow the cut-off";
    EXPECT_EQ(f.envelope()->request_id(), 7u);
    if (const wire::RpcError* e = f.envelope()->message_as_RpcError()) {
      EXPECT_EQ(e->code(), wire::ErrorCode::SlowConsumer);
      cut = true;
      continue;
    }
    const wire::ContactPush* push = f.envelope()->message_as_ContactPush();
    ASSERT_NE(push, nullptr);
    EXPECT_EQ(push->subscription_id(), id);
    for (const wire::ContactEvent* e : *push->events())
      EXPECT_EQ(e->sequence(), next++);
  }
  EXPECT_TRUE(cut);
  EXPECT_GT(next, 10u);
}

TEST_F(RpcContactsTest, UnsubscribingEndsTheStream) {
  RpcHarness rpc(arena_->directory, open_reads());
  LoopbackClient client(rpc.port());
  const std::uint64_t id = subscribe(client, arena_->id, {}, 1);
  for (int t = 0; t < 10; ++t)
    arena_->stepped()->step();
  flatbuffers::FlatBufferBuilder fbb;
  ASSERT_TRUE(client.send(
      request_frame(fbb, wire::Message::UnsubscribeContacts, wire::CreateUnsubscribeContacts(fbb, id), 2)));
  std::uint64_t next = 1;
  for (;;) {
    const std::optional<Frame> f = client.read_frame();
    ASSERT_TRUE(f.has_value());
    if (const auto* done = f->envelope()->message_as_UnsubscribeContactsReply()) {
      EXPECT_EQ(done->subscription_id(), id);
      EXPECT_EQ(f->envelope()->request_id(), 2u);
      break;
    }
    const wire::ContactPush* push = f->envelope()->message_as_ContactPush();
    ASSERT_NE(push, nullptr);
    for (const wire::ContactEvent* e : *push->events())
      EXPECT_EQ(e->sequence(), next++);
  }
  EXPECT_GT(next, 1u);
  EXPECT_TRUE(arena_->stepped()->contact_feed().empty());
  for (int t = 0; t < 10; ++t)
    arena_->stepped()->step();
  EXPECT_TRUE(frames_until_round_trip(client, 3).empty());
}

TEST_F(RpcContactsTest, TheMatchEndingEndsTheStreamAndClosingAConnectionLeavesTheFeed) {
  const CreatedMatch created =
      arena_->directory.create({.level = "arena", .max_players = 4, .props = 2, .seed = 8});
  ASSERT_EQ(created.error, wire::ErrorCode::Ok);
  const std::shared_ptr<SteppedMatch> second = arena_->directory.stepped(created.match_id);
  RpcHarness rpc(arena_->directory, open_reads());
  {
    LoopbackClient leaving(rpc.port());
    subscribe(leaving, created.match_id, {}, 1);
    subscribe(leaving, arena_->id, {}, 2);
  }
  // The server notices the close asynchronously; each tick is a chance (bounded, no sleeping).
  for (int t = 0; t < 2000 && !(second->contact_feed().empty() && arena_->stepped()->contact_feed().empty());
       ++t) {
    second->step();
  }
  EXPECT_TRUE(second->contact_feed().empty());
  EXPECT_TRUE(arena_->stepped()->contact_feed().empty());

  LoopbackClient client(rpc.port());
  subscribe(client, created.match_id, {}, 5);
  for (int t = 0; t < 5; ++t)
    second->step();
  ASSERT_EQ(arena_->directory.end(created.match_id), wire::ErrorCode::Ok);
  const std::vector<Frame> frames = frames_until_round_trip(client, 6);
  ASSERT_FALSE(frames.empty());
  const wire::RpcError* last = frames.back().envelope()->message_as_RpcError();
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->code(), wire::ErrorCode::MatchEnded);
  EXPECT_EQ(frames.back().envelope()->request_id(), 5u);
  for (std::size_t i = 0; i + 1 < frames.size(); ++i)
    EXPECT_NE(frames[i].envelope()->message_as_ContactPush(), nullptr);
  EXPECT_EQ(rpc.rejections.count(wire::ErrorCode::MatchEnded), 0u);  // an end, not a refusal
}

}  // namespace
}  // namespace shiftcast::rpc_test
