#include "protocol/sequence_window.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <random>
#include <set>
#include <vector>

namespace shiftcast {
namespace {

constexpr std::uint64_t kWindow = 64;  // the replay window of the contract, restated for the oracle

// Brute force: every sequence ever accepted, and the window rule in its plainest form.
struct ReceiveOracle {
  std::set<std::uint64_t> received;
  std::uint64_t newest() const { return received.empty() ? 0 : *received.rbegin(); }
  bool accept(std::uint64_t s) {
    if (s == 0 || received.count(s) || s + kWindow < newest()) return false;
    received.insert(s);
    return true;
  }
  bool seen(std::uint64_t s) const { return received.count(s) && s + kWindow >= newest(); }
  std::uint32_t ack_bits() const {
    std::uint32_t bits = 0;
    for (std::uint64_t i = 0; i < 32; ++i) {
      if (newest() > i + 1 && received.count(newest() - 1 - i)) bits |= 1u << i;
    }
    return bits;
  }
};

// A hostile-ish arrival stream: mostly in order with jitter, duplicates, very late packets, jumps
// beyond the window, and zeros.
std::vector<std::uint64_t> arrival_stream(std::uint32_t seed, int count) {
  std::mt19937 rng(seed);
  std::vector<std::uint64_t> out;
  std::uint64_t head = 1;
  for (int i = 0; i < count; ++i) {
    const int kind = static_cast<int>(rng() % 100);
    std::uint64_t s;
    if (kind < 55) {
      s = head++;
    } else if (kind < 70) {
      s = head + rng() % 8;  // ahead (reordering: the gap arrives later)
    } else if (kind < 80) {
      s = head > 8 ? head - 1 - rng() % 8 : head;  // recently sent: late or duplicate
    } else if (kind < 88) {
      s = head > 100 ? head - 55 - rng() % 20 : head;  // around the window's edge
    } else if (kind < 93) {
      s = head > 200 ? head - 64 - rng() % 130 : head;  // far too old
    } else if (kind < 97) {
      head += 60 + rng() % 20;  // a burst lost: jump near or past the window
      s = head;
    } else if (kind < 99) {
      s = out.empty() ? 1 : out[rng() % out.size()];  // an exact replay of anything
    } else {
      s = 0;
    }
    out.push_back(s);
  }
  return out;
}

TEST(ReceiveWindowTest, MatchesBruteForceOverARandomStream) {
  for (std::uint32_t seed : {1u, 2u, 3u, 99u}) {
    ReceiveWindow window;
    ReceiveOracle oracle;
    const auto stream = arrival_stream(seed, 20000);
    int accepted = 0;
    int refused = 0;
    for (std::size_t i = 0; i < stream.size(); ++i) {
      const std::uint64_t s = stream[i];
      const bool expected = oracle.accept(s);
      ASSERT_EQ(window.accept(s), expected) << "seed " << seed << " step " << i << " sequence " << s;
      (expected ? accepted : refused)++;
      ASSERT_EQ(window.ack(), oracle.newest());
      ASSERT_EQ(window.ack_bits(), oracle.ack_bits()) << "step " << i;
      for (std::uint64_t probe : {s, s + 1, oracle.newest() - std::min<std::uint64_t>(oracle.newest(), 64),
                                  oracle.newest() - std::min<std::uint64_t>(oracle.newest(), 65)}) {
        ASSERT_EQ(window.seen(probe), oracle.seen(probe)) << "probe " << probe;
      }
    }
    // The stream must exercise both outcomes heavily, or the comparison proves little.
    EXPECT_GT(accepted, 5000);
    EXPECT_GT(refused, 3000);
  }
}

TEST(ReceiveWindowTest, EdgesOfTheWindow) {
  ReceiveWindow window;
  EXPECT_FALSE(window.accept(0));
  EXPECT_EQ(window.ack(), 0u);
  EXPECT_TRUE(window.accept(100));
  EXPECT_FALSE(window.accept(100));
  EXPECT_TRUE(window.accept(36));   // exactly newest - 64: still inside
  EXPECT_FALSE(window.accept(35));  // one older: refused, even though never seen
  EXPECT_TRUE(window.accept(99));
  EXPECT_TRUE(window.accept(68));  // newest - 32: the last one ack_bits can report
  EXPECT_EQ(window.ack_bits(), 1u | (1u << 31));
  EXPECT_TRUE(window.accept(200));  // a jump past the window forgets everything older
  EXPECT_EQ(window.ack_bits(), 0u);
  EXPECT_FALSE(window.accept(99));
  EXPECT_TRUE(window.accept(199));
  EXPECT_EQ(window.ack_bits(), 1u);
}

// Brute force for the sender: every sequence sent and acknowledged, with the 64-sequence window.
struct AckOracle {
  std::set<std::uint64_t> sent;
  std::set<std::uint64_t> acked;
  std::uint64_t newest_sent() const { return sent.empty() ? 0 : *sent.rbegin(); }
  bool trackable(std::uint64_t s) const { return sent.count(s) && newest_sent() - s < kWindow; }
  std::vector<std::uint64_t> on_ack(std::uint64_t ack, std::uint32_t bits) {
    std::set<std::uint64_t> named;
    named.insert(ack);
    for (std::uint64_t i = 0; i < 32; ++i) {
      if (bits >> i & 1 && ack > i + 1) named.insert(ack - 1 - i);
    }
    std::vector<std::uint64_t> newly;
    for (std::uint64_t s : named) {
      if (trackable(s) && !acked.count(s)) {
        acked.insert(s);
        newly.push_back(s);
      }
    }
    return newly;
  }
};

TEST(AckTrackerTest, MatchesBruteForceOverALossyDelayedLink) {
  for (std::uint32_t seed : {4u, 5u, 6u}) {
    std::mt19937 rng(seed);
    AckTracker tracker;
    AckOracle oracle;
    ReceiveWindow peer;
    std::deque<std::pair<std::uint64_t, std::uint32_t>> acks_in_flight;
    std::set<std::uint64_t> ever_reported;
    std::size_t reported = 0;
    for (int step = 0; step < 20000; ++step) {
      const int kind = static_cast<int>(rng() % 10);
      if (kind < 4) {
        const std::uint64_t s = tracker.take_sequence();
        if (rng() % 10 == 0) {
          peer.accept(s);  // taken but never recorded as sent: a peer acking it must be ignored
        } else {
          tracker.sent(s);
          oracle.sent.insert(s);
          if (rng() % 5 != 0) peer.accept(s);  // 20% loss
        }
      } else if (kind < 8) {
        acks_in_flight.emplace_back(peer.ack(), peer.ack_bits());
        if (acks_in_flight.size() > 1 && rng() % 3 == 0) {
          std::swap(acks_in_flight.back(), acks_in_flight[rng() % acks_in_flight.size()]);  // reorder
        }
      } else if (kind < 9 && !acks_in_flight.empty()) {
        if (rng() % 100 == 0) acks_in_flight.clear();  // a long outage: everything in flight lost
        while (!acks_in_flight.empty() && rng() % 4 != 0) {
          const auto [ack, bits] = acks_in_flight.front();
          acks_in_flight.pop_front();
          const auto got = tracker.on_ack(ack, bits);
          ASSERT_EQ(got, oracle.on_ack(ack, bits)) << "seed " << seed << " step " << step;
          for (std::uint64_t s : got)
            ASSERT_TRUE(ever_reported.insert(s).second) << s;
          reported += got.size();
        }
      } else {
        // A confused peer: acks for sequences never sent, or random bits.
        const std::uint64_t ack = oracle.newest_sent() + rng() % 5;
        const std::uint32_t bits = static_cast<std::uint32_t>(rng());
        ASSERT_EQ(tracker.on_ack(ack, bits), oracle.on_ack(ack, bits)) << "seed " << seed << " step " << step;
      }
      const std::uint64_t probe =
          oracle.newest_sent() - std::min<std::uint64_t>(oracle.newest_sent(), rng() % 70);
      ASSERT_EQ(tracker.acked(probe), oracle.acked.count(probe) && oracle.trackable(probe)) << probe;
    }
    EXPECT_GT(reported, 500u);
  }
}

TEST(AckTrackerTest, IgnoresAcksForSequencesNeverSent) {
  AckTracker tracker;
  EXPECT_TRUE(tracker.on_ack(5, 0xffffffffu).empty());
  tracker.sent(tracker.take_sequence());  // 1
  tracker.sent(tracker.take_sequence());  // 2
  tracker.take_sequence();                // 3: taken but never sent
  tracker.sent(tracker.take_sequence());  // 4
  EXPECT_EQ(tracker.next_sequence(), 5u);
  EXPECT_EQ(tracker.on_ack(9, 0xffffffffu), (std::vector<std::uint64_t>{1, 2, 4}));
  EXPECT_TRUE(tracker.acked(4));
  EXPECT_FALSE(tracker.acked(3));
  EXPECT_TRUE(tracker.on_ack(4, 0b111).empty());
}

}  // namespace
}  // namespace shiftcast
