// Contact subscriptions cannot cost a match its tick. The hostile-client run took a 32-player match's mean
// tick from 0.42 to 6.8 ms with 8,192 subscriptions whose filters never match, because every subscription
// scanned every tick's contacts on the match's worker. Now the worker's whole share is one post of the
// tick's shared batch to the fan-out executor (the RPC side), which filters and delivers. The oracle is
// operation counts, never time: during publish() no subscriber is called on the publishing thread and the
// fan-out queue holds the same one handler for 1 or 8,192 subscriptions; afterwards every subscriber got
// every batch in tick order and the end after the last batch; a fan-out that falls kMaxFanoutBacklog behind
// drops batches and tells every subscriber so (they are cut, never numbered across a gap); the per-match
// and per-connection caps refuse the next subscription. tests/server/rpc_contacts_test.cpp checks what
// reaches the wire.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <memory>
#include <thread>
#include <vector>

#include "protocol/envelope.hpp"
#include "server/contact_feed.hpp"
#include "server/contact_subscription.hpp"
#include "tests/support/query_requests.hpp"
#include "tests/support/rpc_harness.hpp"
#include "tests/support/server_fixture.hpp"

namespace shiftcast {
namespace {

namespace asio = boost::asio;

class CountingSubscriber final : public ContactSubscriber {
 public:
  void deliver(std::shared_ptr<const ContactBatch> batch) override {
    ticks.push_back(batch->tick);
    if (std::this_thread::get_id() == publisher) ++on_publisher;
  }
  void match_ended(std::uint32_t) override { ended_after = ticks.size(), ++ended; }
  void lost_batches() override { lost_after = ticks.size(), ++lost; }

  std::thread::id publisher = std::this_thread::get_id();
  std::vector<std::uint64_t> ticks;
  int on_publisher = 0;
  int ended = 0;
  std::size_t ended_after = 0;
  int lost = 0;
  std::size_t lost_after = 0;
};

std::shared_ptr<const ContactBatch> batch(std::uint64_t tick, int records = 32) {
  auto b = std::make_shared<ContactBatch>();
  b->match_id = 1;
  b->tick = tick;
  for (int i = 0; i < records; ++i) {
    ContactRecord r;
    r.contact.tick = tick;
    r.contact.a = EntityId(i + 1);
    r.a_kind = static_cast<std::uint8_t>(EntityKind::kProp);
    b->records.push_back(r);
  }
  return b;
}

TEST(HostileSubscriptions, PublishingCostsTheWorkerOnePostWhateverTheSubscriptionCount) {
  for (const int subscribers : {1, 64, 8192}) {
    asio::io_context fanout;
    ContactFeed feed(fanout.get_executor(), 0);
    std::vector<std::shared_ptr<CountingSubscriber>> subs;
    for (int i = 0; i < subscribers; ++i) {
      subs.push_back(std::make_shared<CountingSubscriber>());
      ASSERT_TRUE(feed.add(subs.back()));
    }
    feed.publish(batch(1));  // the match's worker
    int called = 0;
    for (const auto& s : subs)
      called += int(s->ticks.size());
    EXPECT_EQ(called, 0) << subscribers << " subscribers: subscriber work ran on the match's worker";
    // The fan-out holds one handler, the same for one subscriber as for 8,192.
    EXPECT_EQ(fanout.poll(), 1u) << subscribers << " subscribers";
    for (const auto& s : subs)
      ASSERT_EQ(s->ticks, std::vector<std::uint64_t>{1});
  }
}

TEST(HostileSubscriptions, EveryBatchArrivesInTickOrderAndTheEndAfterTheLast) {
  asio::io_context fanout;
  ContactFeed feed(fanout.get_executor(), 0);
  auto a = std::make_shared<CountingSubscriber>();
  auto b = std::make_shared<CountingSubscriber>();
  feed.add(a);
  feed.add(b);
  for (std::uint64_t t = 1; t <= 5; ++t)
    feed.publish(batch(t));
  feed.end(1);
  EXPECT_TRUE(feed.empty());
  std::thread([&] { fanout.run(); }).join();  // the fan-out is another thread than the publisher
  for (const auto& s : {a, b}) {
    EXPECT_EQ(s->ticks, (std::vector<std::uint64_t>{1, 2, 3, 4, 5}));
    EXPECT_EQ(s->ended, 1);
    EXPECT_EQ(s->ended_after, 5u);
    EXPECT_EQ(s->on_publisher, 0);
  }
}

TEST(HostileSubscriptions, AFanoutThatFallsBehindDropsBatchesAndSaysSo) {
  asio::io_context fanout;
  ContactFeed feed(fanout.get_executor(), 0);
  auto s = std::make_shared<CountingSubscriber>();
  feed.add(s);
  const std::uint64_t published = kMaxFanoutBacklog + 10;
  for (std::uint64_t t = 1; t <= published; ++t)
    feed.publish(batch(t));
  fanout.restart();
  fanout.run();
  // The backlog's worth arrived; the rest was never queued (bounded memory).
  ASSERT_EQ(s->ticks.size(), kMaxFanoutBacklog);
  EXPECT_EQ(s->ticks.back(), kMaxFanoutBacklog);
  EXPECT_EQ(s->lost, 0);
  // Caught up: the next tick first tells of the gap, then goes on.
  feed.publish(batch(published + 1));
  fanout.restart();
  fanout.run();
  EXPECT_EQ(s->lost, 1);
  EXPECT_EQ(s->lost_after, kMaxFanoutBacklog);
  EXPECT_EQ(s->ticks.back(), published + 1);
}

TEST(HostileSubscriptions, AFeedRefusesSubscribersOverItsCap) {
  asio::io_context fanout;
  ContactFeed feed(fanout.get_executor(), 2);
  auto a = std::make_shared<CountingSubscriber>();
  auto b = std::make_shared<CountingSubscriber>();
  auto c = std::make_shared<CountingSubscriber>();
  EXPECT_TRUE(feed.add(a));
  EXPECT_TRUE(feed.add(b));
  EXPECT_FALSE(feed.add(c));
  EXPECT_EQ(feed.size(), 2u);
  feed.remove(a.get());
  EXPECT_TRUE(feed.add(c));
}

// A real ContactSubscription on the fan-out: filters there, posts to its connection only what passes.
class RecordingSink final : public ContactSink {
 public:
  void on_contacts(std::uint64_t, const std::shared_ptr<const ContactBatch>& b) override {
    ticks.push_back(b->tick);
  }
  void on_match_ended(std::uint64_t) override { ++ended; }
  void on_overflow(std::uint64_t) override { ++overflows; }
  std::vector<std::uint64_t> ticks;
  int ended = 0;
  int overflows = 0;
};

TEST(HostileSubscriptions, FilteringRunsOnTheFanoutAndALostBatchCutsTheSubscription) {
  asio::io_context fanout, connection;
  ContactFeed feed(fanout.get_executor(), 0);
  auto sink = std::make_shared<RecordingSink>();
  ContactFilter never;
  never.entities = {9999};  // no contact names it
  ContactFilter props;
  props.kinds = 1 << static_cast<int>(EntityKind::kProp);
  auto silent = std::make_shared<ContactSubscription>(1, never, sink, connection.get_executor());
  auto listening = std::make_shared<ContactSubscription>(2, props, sink, connection.get_executor());
  feed.add(silent);
  feed.add(listening);
  feed.publish(batch(1));
  EXPECT_EQ(connection.poll(), 0u);  // nothing was filtered or posted on the publisher's thread
  fanout.poll();
  connection.restart();
  EXPECT_EQ(connection.poll(), 1u);  // one post: the matching subscription's
  EXPECT_EQ(sink->ticks, std::vector<std::uint64_t>{1});
  listening->lost_batches();
  connection.restart();
  connection.poll();
  EXPECT_EQ(sink->overflows, 1);
  feed.publish(batch(2));
  fanout.restart();
  fanout.poll();
  connection.restart();
  connection.poll();
  EXPECT_EQ(sink->ticks, std::vector<std::uint64_t>{1});  // nothing after the gap
}

// The per-connection cap through the RPC: the next SubscribeContacts is refused with TooManyConnections.
TEST(HostileSubscriptions, AConnectionOverItsSubscriptionCapIsRefused) {
  query_test::ArenaMatch arena(4, 4, 3, 2);
  RpcSettings settings;
  settings.max_subscriptions_per_connection = 2;
  settings.open_reads = true;  // the cap under test, not the key
  rpc_test::RpcHarness rpc(arena.directory, settings);
  rpc_test::LoopbackClient client(rpc.port());
  ASSERT_TRUE(client.connected());
  for (std::uint64_t request = 1; request <= 3; ++request) {
    flatbuffers::FlatBufferBuilder fbb;
    const auto body = wire::CreateSubscribeContactsDirect(fbb, arena.id, nullptr, 0, 0);
    ASSERT_TRUE(client.send(rpc_test::request_frame(fbb, wire::Message::SubscribeContacts, body, request)));
    std::optional<rpc_test::Frame> f = client.read_frame();
    // Pushes may come between replies: skip them.
    while (f && f->envelope()->message_as_ContactPush() != nullptr)
      f = client.read_frame();
    ASSERT_TRUE(f.has_value());
    ASSERT_EQ(f->envelope()->request_id(), request);
    if (request <= 2) {
      EXPECT_NE(f->envelope()->message_as_SubscribeContactsReply(), nullptr);
    } else {
      const wire::RpcError* e = f->envelope()->message_as_RpcError();
      ASSERT_NE(e, nullptr);
      EXPECT_EQ(e->code(), wire::ErrorCode::TooManyConnections);
    }
  }
}

// The real server, where the match's worker hands each tick to the fan-out on an RPC thread: a walking
// player's contacts reach the subscriber numbered 1, 2, 3, ... without gaps in tick order, the end
// (MatchEnded after EndMatch) comes after the last push, and the per-match cap from the config refuses the
// next subscription.
class HostileSubscriptionsServer : public ServerTest {};

std::uint64_t subscribe(RpcTestClient& c, std::uint64_t request_id, wire::ErrorCode* refused) {
  flatbuffers::FlatBufferBuilder fbb;
  finish_envelope(
      fbb, wire::Message::SubscribeContacts,
      wire::CreateSubscribeContactsDirect(fbb, 1, nullptr, 0, 0, dev_service_key().c_str()).Union(),
      request_id);
  EXPECT_TRUE(c.send(fbb));
  for (;;) {
    const auto bytes = c.receive();
    if (!bytes) return 0;
    const EnvelopeView v = verify_envelope(*bytes, kMaxRpcFrameBytes);
    if (v.error != wire::ErrorCode::Ok || v.envelope->request_id() != request_id) continue;
    if (const auto* e = v.envelope->message_as_RpcError()) {
      *refused = e->code();
      return 0;
    }
    if (const auto* r = v.envelope->message_as_SubscribeContactsReply()) return r->subscription_id();
  }
}

TEST_F(HostileSubscriptionsServer, PushesStayGaplessThroughTheFanoutAndTheMatchCapHolds) {
  start(test_server_config("", "[rpc]\nmax_subscriptions_per_match = 2\n"));
  RpcTestClient a(server_.ports().rpc), b(server_.ports().rpc), c(server_.ports().rpc);
  wire::ErrorCode refused = wire::ErrorCode::Ok;
  const std::uint64_t sub = subscribe(a, 1, &refused);
  ASSERT_NE(sub, 0u);
  ASSERT_NE(subscribe(b, 2, &refused), 0u);
  EXPECT_EQ(subscribe(c, 3, &refused), 0u);
  EXPECT_EQ(refused, wire::ErrorCode::TooManyConnections);
  // A player walking over the floor makes contacts with the level; the pushes wait in the socket.
  {
    UdpTestClient player(server_.ports().udp, token(42));
    ASSERT_TRUE(player.connect());
    for (int i = 0; i < 32; ++i) {
      PlayerInput input;
      input.forward = 1;
      player.send_command(input, 0);  // no view tick
      const std::uint64_t sent = player.session().last_command_sequence();
      ASSERT_TRUE(player.pump_until([&] { return player.session().input_ack() >= sent; }));
    }
    ASSERT_TRUE(player.pump_until([&] { return !player.events().empty(); }));
    player.disconnect();
  }
  std::uint64_t expected = 1, last_tick = 0;
  bool ended = false;
  const auto bytes = a.receive();
  ASSERT_TRUE(bytes.has_value()) << "no push";
  {
    const EnvelopeView v = verify_envelope(*bytes, kMaxRpcFrameBytes);
    ASSERT_EQ(v.error, wire::ErrorCode::Ok);
    const wire::ContactPush* push = v.envelope->message_as_ContactPush();
    ASSERT_NE(push, nullptr);
    EXPECT_EQ(push->subscription_id(), sub);
    for (const wire::ContactEvent* e : *push->events()) {
      ASSERT_EQ(e->sequence(), expected++);
      ASSERT_GE(e->tick(), last_tick);
      last_tick = e->tick();
    }
  }
  {
    flatbuffers::FlatBufferBuilder fbb;
    finish_envelope(fbb, wire::Message::EndMatch,
                    wire::CreateEndMatchDirect(fbb, dev_admin_key().c_str(), 1).Union(), 4);
    ASSERT_TRUE(c.send(fbb));
  }
  // Pushes already queued, then the end (MatchEnded), with no gap before it.
  while (const auto bytes = a.receive()) {
    const EnvelopeView v = verify_envelope(*bytes, kMaxRpcFrameBytes);
    ASSERT_EQ(v.error, wire::ErrorCode::Ok);
    if (const auto* e = v.envelope->message_as_RpcError()) {
      EXPECT_EQ(e->code(), wire::ErrorCode::MatchEnded);
      ended = true;
      break;
    }
    const wire::ContactPush* push = v.envelope->message_as_ContactPush();
    ASSERT_NE(push, nullptr);
    for (const wire::ContactEvent* e : *push->events()) {
      ASSERT_EQ(e->sequence(), expected++);
      ASSERT_GE(e->tick(), last_tick);
      last_tick = e->tick();
    }
  }
  EXPECT_TRUE(ended);
  EXPECT_EQ(server_.stop(), 0);
}

}  // namespace
}  // namespace shiftcast
