// Network conditions: the --net text parsed to the values written (the oracle is the text itself), every
// malformed item refused with its typed error naming it; LinkSimulator against a second implementation
// of the same seeded draws written here (a direct computation of every copy's due time, sorted), and
// against exact properties over 100k datagrams with fixed seeds: the counters' identity, delays within
// their closed-form bounds, reordering exactly where the header says, first in first out without it, the
// bandwidth cap never ahead of rate x time + one datagram, and its queue bound.
#include "client-sim/network_conditions.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace shiftcast {
namespace {

#ifdef SHIFTCAST_SANITIZE
constexpr int kDatagrams = 20'000;
#else
constexpr int kDatagrams = 100'000;
#endif
constexpr double kTick = 1.0 / 64;  // the simulated clients' send interval
// Statistical rates: a fixed seed, judged within 5 standard deviations of the binomial.
constexpr double kSigmas = 5;
// Time comparisons: due times are sums of a few doubles.
constexpr double kTimeTolerance = 1e-9;

// ---- Parsing --------------------------------------------------------------------------------------

TEST(NetworkConditionsParse, TheGoalLineAppliesToBothDirections) {
  const NetParseResult p = parse_network_conditions("loss=5%,latency=50ms,jitter=10ms,dup=1%,reorder=2%");
  ASSERT_TRUE(p.ok()) << p.error->message;
  for (const LinkConditions& c : {p.conditions.up, p.conditions.down}) {
    EXPECT_DOUBLE_EQ(c.loss, 0.05);
    EXPECT_DOUBLE_EQ(c.latency, 0.050);
    EXPECT_DOUBLE_EQ(c.jitter, 0.010);
    EXPECT_DOUBLE_EQ(c.duplicate, 0.01);
    EXPECT_DOUBLE_EQ(c.reorder, 0.02);
    EXPECT_DOUBLE_EQ(c.reorder_delay, kDefaultReorderDelaySeconds);
    EXPECT_EQ(c.rate_bits, 0);
    EXPECT_TRUE(c.active());
  }
  EXPECT_DOUBLE_EQ(p.conditions.round_trip(), 0.120);  // 2 x (50 + 10) ms
}

TEST(NetworkConditionsParse, UnitsRatesAndTheQueue) {
  const NetParseResult p = parse_network_conditions(
      " latency = 0.25s , rate=512kbit, queue=100ms ,down.rate=2mbit,up.jitter=1.5ms");
  ASSERT_TRUE(p.ok()) << p.error->message;
  EXPECT_DOUBLE_EQ(p.conditions.up.latency, 0.25);
  EXPECT_DOUBLE_EQ(p.conditions.up.rate_bits, 512'000);
  EXPECT_DOUBLE_EQ(p.conditions.down.rate_bits, 2'000'000);
  EXPECT_DOUBLE_EQ(p.conditions.up.jitter, 0.0015);
  EXPECT_EQ(p.conditions.down.jitter, 0);
  EXPECT_DOUBLE_EQ(p.conditions.up.queue, 0.1);
  EXPECT_EQ(p.conditions.up.queue_bytes(), 6400u);  // 512 kbit/s x 100 ms / 8
  EXPECT_EQ(parse_network_conditions("rate=1bit").conditions.up.rate_bits, 1);
}

TEST(NetworkConditionsParse, ADirectionsOwnKeyWinsWhereverItStands) {
  for (const char* text : {"loss=5%,up.loss=1%", "up.loss=1%,loss=5%"}) {
    const NetParseResult p = parse_network_conditions(text);
    ASSERT_TRUE(p.ok()) << text;
    EXPECT_DOUBLE_EQ(p.conditions.up.loss, 0.01) << text;
    EXPECT_DOUBLE_EQ(p.conditions.down.loss, 0.05) << text;
  }
  const NetParseResult down_only = parse_network_conditions("down.latency=80ms");
  ASSERT_TRUE(down_only.ok());
  EXPECT_FALSE(down_only.conditions.up.active());
  EXPECT_DOUBLE_EQ(down_only.conditions.down.latency, 0.08);
}

TEST(NetworkConditionsParse, EmptyAndNoneAreACleanNetwork) {
  for (const char* text : {"", "  ", "none"}) {
    const NetParseResult p = parse_network_conditions(text);
    ASSERT_TRUE(p.ok()) << text;
    EXPECT_FALSE(p.conditions.active()) << text;
    EXPECT_EQ(describe(p.conditions), "none");
  }
  // Zeros are a clean network too: nothing is conditioned, and the simulator's path stays direct.
  EXPECT_FALSE(parse_network_conditions("loss=0%,latency=0ms").conditions.active());
}

TEST(NetworkConditionsParse, DescribeReadsBackToTheSameConditions) {
  for (const char* text : {"loss=5%,latency=50ms,jitter=10ms,dup=1%,reorder=2%",
                           "loss=10%,up.latency=30ms,down.latency=70ms,rate=256kbit,queue=120ms",
                           "down.reorder=3%,reorder_delay=5ms", "up.rate=1.5mbit,up.queue=1s"}) {
    const NetParseResult p = parse_network_conditions(text);
    ASSERT_TRUE(p.ok()) << text;
    const std::string again = describe(p.conditions);
    const NetParseResult q = parse_network_conditions(again);
    ASSERT_TRUE(q.ok()) << again;
    EXPECT_TRUE(q.conditions.up == p.conditions.up) << text << " -> " << again;
    EXPECT_TRUE(q.conditions.down == p.conditions.down) << text << " -> " << again;
  }
  EXPECT_EQ(describe(parse_network_conditions("loss=5%,latency=50ms").conditions), "loss=5%,latency=50ms");
  EXPECT_EQ(describe(parse_network_conditions("up.loss=5%").conditions), "up.loss=5%");
}

struct BadItem {
  const char* text;
  NetParseErrorKind kind;
  const char* item;  // the item the error names
};

TEST(NetworkConditionsParse, EveryBadItemIsATypedErrorNamingIt) {
  const BadItem cases[] = {
      {"loss=5%,,latency=5ms", NetParseErrorKind::kEmptyItem, ""},
      {"loss=5%,", NetParseErrorKind::kEmptyItem, ""},
      {"loss", NetParseErrorKind::kNoValue, "loss"},
      {"latency=5ms,lost=5%", NetParseErrorKind::kUnknownKey, "lost=5%"},
      {"left.loss=5%", NetParseErrorKind::kUnknownKey, "left.loss=5%"},
      {"up.=5%", NetParseErrorKind::kUnknownKey, "up.=5%"},
      {"loss=five%", NetParseErrorKind::kBadNumber, "loss=five%"},
      {"loss=", NetParseErrorKind::kBadNumber, "loss="},
      {"loss=nan%", NetParseErrorKind::kBadNumber, "loss=nan%"},
      {"loss=5", NetParseErrorKind::kBadUnit, "loss=5"},
      {"latency=50", NetParseErrorKind::kBadUnit, "latency=50"},
      {"jitter=5us", NetParseErrorKind::kBadUnit, "jitter=5us"},
      {"rate=512kB", NetParseErrorKind::kBadUnit, "rate=512kB"},
      {"loss=100%", NetParseErrorKind::kOutOfRange, "loss=100%"},
      {"dup=-1%", NetParseErrorKind::kOutOfRange, "dup=-1%"},
      {"reorder=150%", NetParseErrorKind::kOutOfRange, "reorder=150%"},
      {"jitter=-1ms", NetParseErrorKind::kOutOfRange, "jitter=-1ms"},
      {"latency=11s", NetParseErrorKind::kOutOfRange, "latency=11s"},
      {"queue=0ms", NetParseErrorKind::kOutOfRange, "queue=0ms"},
      {"rate=0kbit", NetParseErrorKind::kOutOfRange, "rate=0kbit"},
      {"loss=1%,loss=2%", NetParseErrorKind::kDuplicateKey, "loss=2%"},
      {"up.loss=1%,up.loss=2%", NetParseErrorKind::kDuplicateKey, "up.loss=2%"},
  };
  for (const BadItem& c : cases) {
    const NetParseResult p = parse_network_conditions(c.text);
    ASSERT_FALSE(p.ok()) << c.text;
    EXPECT_EQ(p.error->kind, c.kind) << c.text << ": " << to_string(p.error->kind);
    EXPECT_EQ(p.error->item, c.item) << c.text;
    const std::string quoted = std::string("'").append(c.item).append("'");
    EXPECT_NE(p.error->message.find(quoted), std::string::npos) << p.error->message;
  }
  // One direction's key and the plain key are not duplicates.
  EXPECT_TRUE(parse_network_conditions("loss=1%,up.loss=2%,down.loss=3%").ok());
}

// ---- The link ------------------------------------------------------------------------------------

struct Delivery {
  std::uint64_t index;  // which submitted datagram (its first 8 bytes)
  double sent;
  double at;
  std::size_t bytes;
};

std::size_t size_of(std::uint64_t index) {
  return 40 + (index * 2654435761u) % 1100;  // 40..1139 bytes, spread
}

// Submits `n` datagrams, `burst` at a time every kTick, and pops each exactly at its due time (the
// next_due the link reports), as the simulator's delivery timer would.
std::vector<Delivery> run_link(LinkSimulator& link, int n, int burst = 1) {
  std::vector<Delivery> out;
  std::vector<double> sent(std::size_t(n), 0);
  std::vector<std::vector<std::uint8_t>> due;
  auto drain_until = [&](double limit) {
    while (const std::optional<double> next = link.next_due()) {
      if (*next > limit) break;
      link.pop_due(*next, due);
      for (const std::vector<std::uint8_t>& d : due) {
        std::uint64_t index = 0;
        std::memcpy(&index, d.data(), sizeof index);
        out.push_back({index, sent[index], *next, d.size()});
      }
      link.recycle(due);
    }
  };
  std::vector<std::uint8_t> datagram;
  for (int i = 0; i < n; ++i) {
    const double t = double(i / burst) * kTick;
    drain_until(t);
    const std::uint64_t index = std::uint64_t(i);
    datagram.assign(size_of(index), std::uint8_t(i));
    std::memcpy(datagram.data(), &index, sizeof index);
    sent[index] = t;
    link.submit(datagram, t);
  }
  drain_until(std::numeric_limits<double>::infinity());
  return out;
}

// A second implementation of the header's rules: each copy's due time computed directly from the same
// seeded draws, then every copy sorted by (due, copy order).
std::vector<std::pair<double, std::uint64_t>> model(const LinkConditions& c, std::uint64_t seed, int n,
                                                    int burst) {
  LinkRandom random(seed);
  struct Copy {
    double due;
    std::uint64_t order;
    std::uint64_t index;
  };
  std::vector<Copy> copies;
  double free_at = 0, fifo = 0;
  std::uint64_t order = 0;
  const double byte_rate = c.rate_bits / 8;
  for (int i = 0; i < n; ++i) {
    const double t = double(i / burst) * kTick;
    const double u_loss = random.uniform();
    const double u_dup = random.uniform();
    if (u_loss < c.loss) continue;
    const int count = u_dup < c.duplicate ? 2 : 1;
    for (int k = 0; k < count; ++k) {
      const double u_jitter = random.uniform();
      const double u_reorder = random.uniform();
      double departure = t;
      if (byte_rate > 0) {
        const double wire = double(size_of(std::uint64_t(i)) + kLinkHeaderBytes);
        const double start = std::max(free_at, t);
        if ((start - t) * byte_rate + wire > double(c.queue_bytes())) continue;
        free_at = start + wire / byte_rate;
        departure = free_at;
      }
      double due = departure + c.latency + c.jitter * u_jitter;
      if (u_reorder < c.reorder) {
        due += c.jitter + c.reorder_delay;
      } else {
        due = std::max(due, fifo);
        fifo = due;
      }
      copies.push_back({due, order++, std::uint64_t(i)});
    }
  }
  std::sort(copies.begin(), copies.end(),
            [](const Copy& a, const Copy& b) { return a.due != b.due ? a.due < b.due : a.order < b.order; });
  std::vector<std::pair<double, std::uint64_t>> out;
  for (const Copy& copy : copies)
    out.emplace_back(copy.due, copy.index);
  return out;
}

LinkConditions goal_line() {
  return parse_network_conditions("loss=5%,latency=50ms,jitter=10ms,dup=1%,reorder=2%").conditions.up;
}

TEST(LinkSimulator, MatchesASecondImplementationOfTheSameDraws) {
  struct Case {
    const char* net;
    int burst;
  };
  for (const Case& c :
       {Case{"loss=5%,latency=50ms,jitter=10ms,dup=1%,reorder=2%", 1},
        Case{"loss=10%,latency=20ms,jitter=30ms,dup=5%,reorder=10%,rate=256kbit,queue=80ms", 3},
        Case{"latency=40ms", 2}}) {
    const LinkConditions conditions = parse_network_conditions(c.net).conditions.up;
    const std::uint64_t seed = link_seed(7, 3, LinkDirection::kDown);
    LinkSimulator link(conditions, seed);
    const int n = kDatagrams / 10;
    const std::vector<Delivery> got = run_link(link, n, c.burst);
    const auto expected = model(conditions, seed, n, c.burst);
    ASSERT_EQ(got.size(), expected.size()) << c.net;
    for (std::size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i].index, expected[i].second) << c.net << " at " << i;
      ASSERT_EQ(got[i].at, expected[i].first) << c.net << " at " << i;
    }
  }
}

TEST(LinkSimulator, CountersDelaysAndReorderingOverManyDatagrams) {
  const LinkConditions c = goal_line();
  LinkSimulator link(c, link_seed(1, 0, LinkDirection::kUp));
  const std::vector<Delivery> got = run_link(link, kDatagrams);
  const LinkCounters& k = link.counters();

  // The identity, exactly, and the counters against what arrived.
  EXPECT_EQ(k.submitted, std::uint64_t(kDatagrams));
  EXPECT_EQ(k.dropped_queue, 0u);
  EXPECT_EQ(k.delivered, k.submitted - k.dropped_loss - k.dropped_queue + k.duplicated);
  EXPECT_EQ(k.delivered, got.size());
  std::map<std::uint64_t, int> copies;
  for (const Delivery& d : got)
    ++copies[d.index];
  std::uint64_t twice = 0;
  for (const auto& [index, count] : copies) {
    ASSERT_LE(count, 2);
    twice += count == 2;
  }
  EXPECT_EQ(twice, k.duplicated);
  EXPECT_EQ(std::uint64_t(kDatagrams) - copies.size(), k.dropped_loss);

  // Rates near what was asked (binomial, fixed seed).
  auto near_rate = [&](std::uint64_t count, std::uint64_t trials, double p) {
    const double sigma = std::sqrt(p * (1 - p) / double(trials));
    EXPECT_NEAR(double(count) / double(trials), p, kSigmas * sigma);
  };
  near_rate(k.dropped_loss, k.submitted, c.loss);
  near_rate(k.duplicated, k.submitted - k.dropped_loss, c.duplicate);
  near_rate(k.reordered, k.delivered, c.reorder);

  // Delays: never before latency, never after the worst case; beyond latency + jitter only the reordered
  // ones, which then start at latency + jitter + reorder_delay.
  const double in_order_max = c.latency + c.jitter;
  std::uint64_t held_back = 0;
  for (const Delivery& d : got) {
    const double delay = d.at - d.sent;
    ASSERT_GE(delay, c.latency - kTimeTolerance);
    ASSERT_LE(delay, c.worst_delay() + kTimeTolerance);
    if (delay > in_order_max + kTimeTolerance) {
      ++held_back;
      ASSERT_GE(delay, in_order_max + c.reorder_delay - kTimeTolerance);
    }
  }
  EXPECT_EQ(held_back, k.reordered);

  // A reordered datagram lands after every datagram submitted within reorder_delay after it; the rest
  // keep their order among themselves (first in, first out).
  std::vector<double> in_order_at(std::size_t(kDatagrams), -1);
  for (const Delivery& d : got)
    if (d.at - d.sent <= in_order_max + kTimeTolerance) in_order_at[d.index] = d.at;
  std::uint64_t overtaken = 0;
  for (const Delivery& d : got) {
    if (d.at - d.sent <= in_order_max + kTimeTolerance) continue;
    for (std::uint64_t j = d.index + 1; j < std::uint64_t(kDatagrams); ++j) {
      if (double(j) * kTick > d.sent + c.reorder_delay + kTimeTolerance) break;
      if (in_order_at[j] < 0) continue;
      ASSERT_LE(in_order_at[j], d.at) << "datagram " << j << " after reordered " << d.index;
      ++overtaken;
    }
  }
  EXPECT_GT(overtaken, 0u);
  double last = -1;
  std::uint64_t last_index = 0;
  for (const Delivery& d : got) {
    if (d.at - d.sent > in_order_max + kTimeTolerance) continue;
    ASSERT_GE(d.index, last_index);
    ASSERT_GE(d.at, last);
    last = d.at;
    last_index = d.index;
  }
}

TEST(LinkSimulator, WithoutReorderingOrderIsKeptEvenUnderJitter) {
  for (const char* net : {"latency=30ms", "latency=30ms,jitter=40ms,loss=3%", "jitter=20ms,dup=10%"}) {
    LinkSimulator link(parse_network_conditions(net).conditions.up, 99);
    const std::vector<Delivery> got = run_link(link, kDatagrams / 4, 2);
    for (std::size_t i = 1; i < got.size(); ++i)
      ASSERT_GE(got[i].index, got[i - 1].index) << net << " at " << i;
    EXPECT_EQ(link.counters().reordered, 0u);
  }
}

TEST(LinkSimulator, TheBandwidthCapNeverRunsAheadOfItsRate) {
  // 3 datagrams of ~600 bytes every 1/64 s is ~120 kB/s offered into 256 kbit/s (32 kB/s): the queue
  // fills, the tail is dropped, and what leaves is the rate.
  const LinkConditions c = parse_network_conditions("latency=20ms,rate=256kbit,queue=100ms").conditions.up;
  const double byte_rate = c.rate_bits / 8;
  LinkSimulator link(c, 5);
  const std::vector<Delivery> got = run_link(link, kDatagrams / 4, 3);
  const LinkCounters& k = link.counters();
  EXPECT_GT(k.dropped_queue, 0u);
  EXPECT_EQ(k.delivered, k.submitted - k.dropped_queue);
  ASSERT_FALSE(got.empty());

  const double first = got.front().sent;
  std::size_t largest = 0;
  double delivered = 0;
  for (const Delivery& d : got) {
    const double wire = double(d.bytes + kLinkHeaderBytes);
    largest = std::max(largest, d.bytes + kLinkHeaderBytes);
    delivered += wire;
    // Closed form: by time T at most rate x (T - latency - first send) bytes, plus one datagram.
    ASSERT_LE(delivered, byte_rate * (d.at - c.latency - first) + double(largest) + 1e-6);
    // The queue bound: a datagram admitted behind `backlog` bytes waits (backlog + its own) / rate, and
    // admission needs backlog + its own <= the bound.
    ASSERT_LE(d.at - d.sent - c.latency, double(c.queue_bytes()) / byte_rate + kTimeTolerance);
  }
  // Saturated: what left is the rate, within one datagram.
  const double span = got.back().at - c.latency - first;
  EXPECT_GE(delivered, byte_rate * span * 0.95);
}

TEST(LinkSimulator, SeedsAreReproducibleAndDistinct) {
  const LinkConditions c = goal_line();
  LinkSimulator a(c, link_seed(1, 5, LinkDirection::kUp));
  LinkSimulator b(c, link_seed(1, 5, LinkDirection::kUp));
  LinkSimulator other(c, link_seed(1, 5, LinkDirection::kDown));
  const auto ra = run_link(a, 5000);
  const auto rb = run_link(b, 5000);
  const auto ro = run_link(other, 5000);
  ASSERT_EQ(ra.size(), rb.size());
  for (std::size_t i = 0; i < ra.size(); ++i) {
    ASSERT_EQ(ra[i].index, rb[i].index);
    ASSERT_EQ(ra[i].at, rb[i].at);
  }
  bool differs = ra.size() != ro.size();
  for (std::size_t i = 0; !differs && i < ra.size(); ++i)
    differs = ra[i].index != ro[i].index || ra[i].at != ro[i].at;
  EXPECT_TRUE(differs);

  std::set<std::uint64_t> seeds;
  for (std::uint32_t run : {1u, 2u})
    for (std::uint64_t client = 0; client < 1024; ++client)
      for (LinkDirection d : {LinkDirection::kUp, LinkDirection::kDown})
        seeds.insert(link_seed(run, client, d));
  EXPECT_EQ(seeds.size(), 2u * 1024 * 2);
}

TEST(LinkSimulator, AZeroDelayLinkDeliversAtOnceAndNextDueSaysWhen) {
  LinkSimulator link(parse_network_conditions("latency=25ms").conditions.down, 3);
  EXPECT_FALSE(link.next_due());
  const std::vector<std::uint8_t> d(100, 7);
  link.submit(d, 1.0);
  ASSERT_TRUE(link.next_due());
  EXPECT_DOUBLE_EQ(*link.next_due(), 1.025);
  std::vector<std::vector<std::uint8_t>> out;
  EXPECT_EQ(link.pop_due(1.0249, out), 0u);
  EXPECT_EQ(link.pop_due(1.025, out), 1u);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], d);
  link.recycle(out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(link.held(), 0u);

  LinkSimulator clean(LinkConditions{}, 3);  // all zero: due the moment it is submitted
  clean.submit(d, 2.0);
  EXPECT_EQ(clean.pop_due(2.0, out), 1u);
}

}  // namespace
}  // namespace shiftcast
