// Reliable events: the sender's queue and acknowledgement rules, the receiver's counters on a
// hand-computed arrival order, and both ends over a lossy, duplicating, reordering link against an
// oracle (the list of events pushed): every one delivered exactly once, in order.
#include "protocol/reliable_events.hpp"
#include "tests/support/seeded_random.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

namespace shiftcast {
namespace {

wire::ContactEvent event(std::uint64_t sequence, std::uint64_t tick = 0, std::uint32_t a = 0) {
  return wire::ContactEvent(sequence, tick, 0.25f, 0, 0, 3, a, 0, 7, wire::Vec3f(1, 2, 3),
                            wire::Vec3f(0, 0, 1), 0.0f, 10.0f);
}

std::vector<std::uint64_t> sequences(std::span<const wire::ContactEvent> events) {
  std::vector<std::uint64_t> out;
  for (const auto& e : events)
    out.push_back(e.sequence());
  return out;
}

TEST(ReliableEventSender, NumbersFromOneAndCapsTheQueue) {
  ReliableEventSender sender(3);
  EXPECT_EQ(sender.next_sequence(), 1u);
  EXPECT_EQ(sender.push(event(2)), wire::ErrorCode::BadArgument);  // not the next sequence
  for (std::uint64_t s = 1; s <= 3; ++s)
    ASSERT_EQ(sender.push(event(s)), wire::ErrorCode::Ok);
  EXPECT_EQ(sender.push(event(4)), wire::ErrorCode::SlowConsumer);
  EXPECT_EQ(sender.pending(), 3u);
  EXPECT_EQ(sender.next_sequence(), 4u);  // the refused event took no sequence

  // Budgets count whole events, oldest first.
  EXPECT_EQ(sequences(sender.oldest(2 * kContactEventBytes + kContactEventBytes - 1)),
            (std::vector<std::uint64_t>{1, 2}));
  EXPECT_TRUE(sender.oldest(kContactEventBytes - 1).empty());

  EXPECT_EQ(sender.on_ack(3), wire::ErrorCode::Ok);  // 1 and 2 delivered
  EXPECT_EQ(sequences(sender.oldest(1000)), std::vector<std::uint64_t>{3});
  EXPECT_EQ(sender.on_ack(2), wire::ErrorCode::Ok);  // older ack, late: changes nothing
  EXPECT_EQ(sender.pending(), 1u);
  ASSERT_EQ(sender.push(event(4)), wire::ErrorCode::Ok);
  EXPECT_EQ(sender.on_ack(99), wire::ErrorCode::BadArgument);  // beyond anything sent
  EXPECT_EQ(sender.pending(), 0u);
  EXPECT_EQ(sender.acked(), 5u);  // clamped to what was sent
  ASSERT_EQ(sender.push(event(5)), wire::ErrorCode::Ok);
  EXPECT_EQ(sequences(sender.oldest(1000)), std::vector<std::uint64_t>{5});
}

TEST(ReliableEventReceiver, DeliversInOrderAndCountsDuplicatesGapsAndOverflow) {
  ReliableEventReceiver receiver(2);
  // Arrivals: 2 (gap), 2 (duplicate while buffered), 5 (more than 2 ahead of 1: overflow), 1 (delivers
  // 1 and 2), 1 (duplicate), 4 (gap), 3 (delivers 3 and 4).
  for (std::uint64_t s : {2, 2, 5, 1, 1, 4, 3})
    receiver.receive(event(s));
  EXPECT_EQ(sequences(receiver.take()), (std::vector<std::uint64_t>{1, 2, 3, 4}));
  EXPECT_TRUE(receiver.take().empty());
  EXPECT_EQ(receiver.events_received(), 5u);
  EXPECT_EQ(receiver.counters().delivered, 4u);
  EXPECT_EQ(receiver.counters().duplicates, 2u);
  EXPECT_EQ(receiver.counters().gaps, 2u);
  EXPECT_EQ(receiver.counters().overflow, 1u);
  EXPECT_EQ(receiver.buffered(), 0u);
}

// A frame on the link: the events the sender put in it, or an acknowledgement going back.
struct InFlight {
  double arrival;
  std::vector<wire::ContactEvent> events;
  std::uint64_t ack;
};

class LossyQueue {
 public:
  LossyQueue(std::uint32_t seed, double loss, double duplicate)
      : rng_(seed), loss_(loss), duplicate_(duplicate) {}
  void send(double now, std::vector<wire::ContactEvent> events, std::uint64_t ack) {
    UniformReal<double> u(0, 1), delay(0.01, 0.2);  // reorders: frames go every 0.05
    if (u(rng_) < loss_) return;
    const int copies = u(rng_) < duplicate_ ? 2 : 1;
    for (int i = 0; i < copies; ++i)
      queue_.push_back({now + delay(rng_), events, ack});
  }
  std::vector<InFlight> arrived(double now) {
    std::vector<InFlight> out;
    std::stable_partition(queue_.begin(), queue_.end(), [&](const InFlight& f) { return f.arrival > now; });
    while (!queue_.empty() && queue_.back().arrival <= now) {
      out.push_back(std::move(queue_.back()));
      queue_.pop_back();
    }
    std::sort(out.begin(), out.end(),
              [](const InFlight& a, const InFlight& b) { return a.arrival < b.arrival; });
    return out;
  }
  bool empty() const { return queue_.empty(); }

 private:
  std::mt19937 rng_;
  double loss_, duplicate_;
  std::vector<InFlight> queue_;
};

// The sender's policy (the oldest unacknowledged that fit) starts every frame at or below what the
// receiver expects, so gaps never happen; the receiver's buffer is exercised by a sender that puts a
// random slice of the unacknowledged events in each frame instead.
enum class FramePolicy { kOldestFirst, kRandomSlices };

void run_lossy_link(std::uint32_t seed, FramePolicy policy) {
  constexpr double kFrameInterval = 0.05;
  constexpr int kFramesWithNewEvents = 1000;
  constexpr int kMaxFrames = 4000;
  ReliableEventSender sender(100000);
  ReliableEventReceiver receiver(64);
  LossyQueue forward(seed, 0.3, 0.1), back(seed + 1000, 0.3, 0.1);
  std::mt19937 rng(seed);
  UniformInt<int> burst(0, 6);
  UniformInt<std::size_t> budget(0, 12 * kContactEventBytes);
  std::vector<wire::ContactEvent> oracle, delivered;
  double now = 0;
  for (int frame = 0; frame < kMaxFrames; ++frame, now += kFrameInterval) {
    if (frame < kFramesWithNewEvents) {
      const int n = burst(rng);
      for (int i = 0; i < n; ++i) {
        const wire::ContactEvent e = event(sender.next_sequence(), frame, static_cast<std::uint32_t>(rng()));
        ASSERT_EQ(sender.push(e), wire::ErrorCode::Ok);
        oracle.push_back(e);
      }
    }
    auto out = sender.oldest(budget(rng));
    // Half the frames skip a random number of the oldest events (else the backlog would never drain).
    if (policy == FramePolicy::kRandomSlices && !out.empty() && rng() % 2 == 0) {
      out = out.subspan(UniformInt<std::size_t>(0, out.size() - 1)(rng));
    }
    forward.send(now, {out.begin(), out.end()}, 0);
    for (const InFlight& f : forward.arrived(now))
      receiver.receive(f.events);
    const auto got = receiver.take();
    delivered.insert(delivered.end(), got.begin(), got.end());
    back.send(now, {}, receiver.events_received());
    for (const InFlight& f : back.arrived(now))
      ASSERT_EQ(sender.on_ack(f.ack), wire::ErrorCode::Ok);
    if (frame >= kFramesWithNewEvents && sender.pending() == 0) break;
  }
  ASSERT_EQ(sender.pending(), 0u) << "did not drain: acked " << sender.acked() << " receiver at "
                                  << receiver.events_received() << " buffered " << receiver.buffered()
                                  << " next " << sender.next_sequence();
  ASSERT_EQ(delivered.size(), oracle.size());
  for (std::size_t i = 0; i < oracle.size(); ++i) {
    ASSERT_EQ(std::memcmp(&delivered[i], &oracle[i], sizeof(wire::ContactEvent)), 0) << i;
  }
  EXPECT_GT(oracle.size(), 2500u);
  // The link really did lose and duplicate, or this test proves nothing.
  EXPECT_GT(receiver.counters().duplicates, 100u);
  if (policy == FramePolicy::kOldestFirst) {
    EXPECT_EQ(receiver.counters().gaps, 0u);
  } else {
    EXPECT_GT(receiver.counters().gaps, 100u);
  }
}

TEST(ReliableEvents, OldestFirstDeliversEveryEventOnceInOrderOverALossyLink) {
  for (std::uint32_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE(seed);
    run_lossy_link(seed, FramePolicy::kOldestFirst);
  }
}

TEST(ReliableEvents, ReceiverReassemblesRandomSlicesOverALossyLink) {
  for (std::uint32_t seed : {4u, 5u, 6u}) {
    SCOPED_TRACE(seed);
    run_lossy_link(seed, FramePolicy::kRandomSlices);
  }
}

// An event rides in the first `redundant_sends` frames it fits, then goes out again only once the packet
// that last carried it is settled: acknowledged, or older than a packet the peer acknowledged.
// Oracle: the packets and acks of the script, by hand.
TEST(ReliableEvents, AnEventIsNotResentWhileItsPacketIsInFlight) {
  for (int sends = 1; sends <= kMaxEventSends; ++sends) {
    SCOPED_TRACE(sends);
    ReliableEventSender sender(16, sends);
    for (std::uint64_t s = 1; s <= 5; ++s)
      ASSERT_EQ(sender.push(event(s)), wire::ErrorCode::Ok);
    std::vector<wire::ContactEvent> due;
    const std::uint64_t last = 10 + std::uint64_t(sends) - 1;
    for (std::uint64_t packet = 10; packet <= last; ++packet) {
      sender.due(0, due);  // nothing acknowledged: the redundant sends
      EXPECT_EQ(sequences(due), (std::vector<std::uint64_t>{1, 2, 3, 4, 5})) << packet;
      sender.sent(due, packet);
    }
    sender.due(last - 1, due);
    EXPECT_TRUE(due.empty());  // the last packet may still arrive
    sender.due(last, due);
    EXPECT_EQ(sequences(due), (std::vector<std::uint64_t>{1, 2, 3, 4, 5}));  // settled, none acknowledged
    ASSERT_EQ(sender.on_ack(4), wire::ErrorCode::Ok);                        // 1 to 3 delivered
    sender.due(last, due);
    EXPECT_EQ(sequences(due), (std::vector<std::uint64_t>{4, 5}));
    sender.sent(std::span(due).first(1), last + 2);  // the frame had room for 4 only
    ASSERT_EQ(sender.push(event(6)), wire::ErrorCode::Ok);
    sender.due(last + 1, due);
    // 4 in flight again; 5 settled; 6 never sent (and due for its redundant sends however many)
    EXPECT_EQ(sequences(due), (std::vector<std::uint64_t>{5, 6}));
    sender.due(last + 2, due);
    EXPECT_EQ(sequences(due), (std::vector<std::uint64_t>{4, 5, 6}));
  }
}

// The count is clamped: zero or negative sends would never send an event, more than kMaxEventSends
// is refused as the configuration's range says.
TEST(ReliableEvents, TheRedundancyIsClampedToItsRange) {
  for (const auto& [asked, used] : {std::pair{-3, 1}, {0, 1}, {1, 1}, {kMaxEventSends + 5, kMaxEventSends}}) {
    ReliableEventSender sender(4, asked);
    ASSERT_EQ(sender.push(event(1)), wire::ErrorCode::Ok);
    std::vector<wire::ContactEvent> due;
    int sent = 0;
    for (std::uint64_t packet = 1; packet <= 10; ++packet) {
      sender.due(0, due);
      if (due.empty()) break;
      sender.sent(due, packet);
      ++sent;
    }
    EXPECT_EQ(sent, used) << asked;
  }
}

}  // namespace
}  // namespace shiftcast
