// ChurnPlan (client-sim/churn_plan.hpp) against a brute-force replay of its own events: for fixed seeds
// and shapes, the sessions and match lifetimes are rebuilt event by event and every promise of the plan
// is checked independently of how it was generated: at most `clients` slots in play at any sampled
// instant (and no match slot over its share), every drop followed by a rejoin after a delay within its
// range unless the run ends first, lifetimes within range, `matches`..`matches + 1` matches alive at
// every instant and exactly `matches` once the instant's events are done, every join into a live match,
// and the Poisson arrivals and fractions within five standard deviations of their expectations.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "client-sim/churn_plan.hpp"

namespace shiftcast {
namespace {

constexpr double kSampleStep = 0.05;  // seconds between the instants the brute force counts slots at
constexpr double kSigmas = 5;         // a rate or fraction further out than this is a bug, not bad luck

struct Shape {
  int clients;
  int matches;
  double duration;
  std::uint32_t seed;
};

ChurnSettings busy_settings() {
  ChurnSettings s;
  s.enabled = true;
  s.lifetime_min_s = 2;
  s.lifetime_max_s = 12;
  s.reconnect_delay_min_s = 0.5;
  s.reconnect_delay_max_s = 3;
  s.match_lifetime_min_s = 10;
  s.match_lifetime_max_s = 40;
  s.rpc_visits_per_second = 3;
  s.subscribers_per_second = 1;
  return s;
}

struct Interval {
  double from, to;  // [from, to); to = duration when the run ends it
};

void check_plan(const ChurnSettings& s, const Shape& shape) {
  SCOPED_TRACE(::testing::Message() << "seed " << shape.seed << ", " << shape.clients << " clients, "
                                    << shape.matches << " matches, " << shape.duration << " s");
  const ChurnPlan plan = make_churn_plan(
      s,
      {.clients = shape.clients, .matches = shape.matches, .duration = shape.duration, .seed = shape.seed});
  const auto& ev = plan.events;
  ASSERT_FALSE(ev.empty());
  for (std::size_t i = 1; i < ev.size(); ++i)
    ASSERT_LE(ev[i - 1].at, ev[i].at) << "event " << i << " out of time order";

  // Per slot: its events in order, rebuilt into sessions.
  std::map<int, std::vector<const ChurnEvent*>> by_slot;
  std::uint64_t leaves = 0, goodbyes = 0;
  for (const ChurnEvent& e : ev) {
    ASSERT_GE(e.at, 0);
    ASSERT_LT(e.at, shape.duration);
    if (e.kind == ChurnEventKind::kClientJoin || e.kind == ChurnEventKind::kClientLeave) {
      ASSERT_GE(e.slot, 0);
      ASSERT_LT(e.slot, shape.clients);
      by_slot[e.slot].push_back(&e);
    }
  }
  ASSERT_EQ(int(by_slot.size()), shape.clients) << "every slot plays";
  std::vector<std::vector<Interval>> sessions(std::size_t(shape.clients));
  for (auto& [slot, events] : by_slot) {
    ASSERT_EQ(events.front()->kind, ChurnEventKind::kClientJoin) << "slot " << slot << " starts by joining";
    ASSERT_LE(events.front()->at, s.ramp_s);
    for (std::size_t i = 0; i < events.size(); ++i) {
      const ChurnEvent& e = *events[i];
      const bool join = i % 2 == 0;
      ASSERT_EQ(e.kind, join ? ChurnEventKind::kClientJoin : ChurnEventKind::kClientLeave)
          << "slot " << slot << " event " << i << ": joins and leaves alternate";
      if (join) {
        sessions[std::size_t(slot)].push_back({e.at, shape.duration});
        if (i > 0) {
          const double delay = e.at - events[i - 1]->at;
          EXPECT_GE(delay, s.reconnect_delay_min_s);
          EXPECT_LE(delay, s.reconnect_delay_max_s);
        }
      } else {
        sessions[std::size_t(slot)].back().to = e.at;
        const double lifetime = e.at - events[i - 1]->at;
        EXPECT_GE(lifetime, s.lifetime_min_s);
        EXPECT_LE(lifetime, s.lifetime_max_s);
        ++leaves;
        if (!e.quiet) ++goodbyes;
      }
    }
    const ChurnEvent& last = *events.back();
    if (last.kind == ChurnEventKind::kClientLeave) {
      // A drop with no rejoin after it: only when even the shortest delay... the drawn one ran past the end.
      EXPECT_GE(last.at + s.reconnect_delay_max_s, shape.duration)
          << "slot " << slot << " dropped at " << last.at << " and never rejoined";
    } else {
      EXPECT_GE(last.at + s.lifetime_max_s, shape.duration) << "slot " << slot << " stopped leaving early";
    }
  }

  // Brute force: slots in play at every sampled instant, over all and per match slot.
  const int per_match_max = (shape.clients + shape.matches - 1) / shape.matches;
  for (double t = 0; t < shape.duration; t += kSampleStep) {
    int alive = 0;
    std::vector<int> in_match(std::size_t(shape.matches), 0);
    for (int slot = 0; slot < shape.clients; ++slot) {
      for (const Interval& i : sessions[std::size_t(slot)]) {
        if (i.from <= t && t < i.to) {
          ++alive;
          ++in_match[std::size_t(slot % shape.matches)];
        }
      }
    }
    ASSERT_LE(alive, shape.clients) << "at " << t;
    for (int m = 0; m < shape.matches; ++m)
      ASSERT_LE(in_match[std::size_t(m)], per_match_max) << "match slot " << m << " at " << t;
  }

  // Matches: replayed in the plan's order; the live generation of each slot at each join.
  std::map<int, std::set<int>> live;  // slot -> generations alive
  std::map<std::pair<int, int>, double> created;
  int alive_matches = 0;
  for (std::size_t i = 0; i < ev.size(); ++i) {
    const ChurnEvent& e = ev[i];
    if (e.kind == ChurnEventKind::kMatchCreate) {
      ASSERT_TRUE(created.emplace(std::pair{e.slot, e.generation}, e.at).second)
          << "a generation created twice";
      live[e.slot].insert(e.generation);
      ++alive_matches;
    } else if (e.kind == ChurnEventKind::kMatchEnd) {
      ASSERT_EQ(live[e.slot].erase(e.generation), 1u) << "ended a match that was not alive";
      const double lifetime = e.at - created[{e.slot, e.generation}];
      EXPECT_GE(lifetime, s.match_lifetime_min_s);
      EXPECT_LE(lifetime, s.match_lifetime_max_s);
      --alive_matches;
    } else if (e.kind == ChurnEventKind::kClientJoin) {
      EXPECT_FALSE(live[e.slot % shape.matches].empty()) << "a join at " << e.at << " into no live match";
    } else if (e.kind == ChurnEventKind::kSubscriber) {
      EXPECT_FALSE(live[e.slot].empty()) << "a subscriber at " << e.at << " for no live match";
      EXPECT_GE(e.lifetime, s.subscriber_lifetime_min_s);
      EXPECT_LE(e.lifetime, s.subscriber_lifetime_max_s);
    }
    const bool instant_done = i + 1 == ev.size() || ev[i + 1].at != e.at;
    if (e.at > 0 || instant_done) {
      ASSERT_LE(alive_matches, shape.matches + 1) << "at " << e.at;
    }
    if (instant_done) {
      ASSERT_EQ(alive_matches, shape.matches) << "after the events at " << e.at;
      for (int m = 0; m < shape.matches; ++m)
        ASSERT_EQ(live[m].size(), 1u) << "match slot " << m << " after " << e.at;
    }
  }

  // Arrivals and fractions: binomial and Poisson counts within kSigmas of their expectations.
  const auto within = [](double count, double expected, double variance) {
    return std::abs(count - expected) <= kSigmas * std::sqrt(std::max(variance, 1.0));
  };
  double visits = 0, abandoned = 0, subscribers = 0, never_read = 0;
  for (const ChurnEvent& e : ev) {
    if (e.kind == ChurnEventKind::kRpcVisit) {
      ++visits;
      abandoned += e.quiet ? 1 : 0;
    } else if (e.kind == ChurnEventKind::kSubscriber) {
      ++subscribers;
      never_read += e.quiet ? 1 : 0;
    }
  }
  const double visit_mean = s.rpc_visits_per_second * shape.duration;
  EXPECT_TRUE(within(visits, visit_mean, visit_mean)) << visits << " visits, expected " << visit_mean;
  const double sub_mean = s.subscribers_per_second * shape.duration;
  EXPECT_TRUE(within(subscribers, sub_mean, sub_mean))
      << subscribers << " subscribers, expected " << sub_mean;
  const auto fraction_ok = [&](double k, double n, double p) { return within(k, n * p, n * p * (1 - p)); };
  EXPECT_TRUE(fraction_ok(abandoned, visits, s.rpc_abandon_fraction)) << abandoned << " of " << visits;
  EXPECT_TRUE(fraction_ok(never_read, subscribers, s.subscriber_never_read_fraction));
  EXPECT_TRUE(fraction_ok(double(goodbyes), double(leaves), s.goodbye_fraction))
      << goodbyes << " of " << leaves;
}

TEST(ChurnPlan, BruteForceReplayHoldsEveryPromise) {
  const ChurnSettings s = busy_settings();
  for (const Shape& shape :
       {Shape{16, 2, 120, 1}, Shape{64, 4, 200, 7}, Shape{5, 3, 90, 12345}, Shape{1, 1, 60, 99}}) {
    check_plan(s, shape);
  }
}

TEST(ChurnPlan, DefaultSettingsOverTenMinutes) {
  ChurnSettings s;
  s.enabled = true;
  check_plan(s, {128, 4, 600, 3});
}

TEST(ChurnPlan, SameSeedSamePlanOtherSeedAnother) {
  const ChurnSettings s = busy_settings();
  const auto plan = [&](std::uint32_t seed, int clients) {
    return make_churn_plan(s, {.clients = clients, .matches = 2, .duration = 60, .seed = seed}).events;
  };
  const auto same = [](const std::vector<ChurnEvent>& a, const std::vector<ChurnEvent>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const ChurnEvent& x, const ChurnEvent& y) {
      return x.at == y.at && x.kind == y.kind && x.slot == y.slot && x.generation == y.generation &&
             x.quiet == y.quiet && x.lifetime == y.lifetime;
    });
  };
  EXPECT_TRUE(same(plan(5, 8), plan(5, 8)));
  EXPECT_FALSE(same(plan(5, 8), plan(6, 8)));
  // Streams are separate: more clients change no match's lifetime.
  const auto matches_of = [](const std::vector<ChurnEvent>& events) {
    std::vector<ChurnEvent> out;
    std::copy_if(events.begin(), events.end(), std::back_inserter(out), [](const ChurnEvent& e) {
      return e.kind == ChurnEventKind::kMatchCreate || e.kind == ChurnEventKind::kMatchEnd;
    });
    return out;
  };
  EXPECT_TRUE(same(matches_of(plan(5, 8)), matches_of(plan(5, 40))));
}

TEST(ChurnPlan, NothingIsScheduledAtOrAfterTheEnd) {
  ChurnSettings s = busy_settings();
  const ChurnPlan plan = make_churn_plan(s, {.clients = 10, .matches = 2, .duration = 0.5, .seed = 1});
  for (const ChurnEvent& e : plan.events)
    EXPECT_LT(e.at, 0.5);
  // The first joins are spread over the ramp: with 10 slots and a 2 s ramp, 3 fit before 0.5 s.
  EXPECT_EQ(std::count_if(plan.events.begin(), plan.events.end(),
                          [](const ChurnEvent& e) { return e.kind == ChurnEventKind::kClientJoin; }),
            3);
}

TEST(ChurnPlan, ValidateRefusesBadRanges) {
  EXPECT_EQ(validate_churn_settings(ChurnSettings{}), "");
  ChurnSettings s;
  s.lifetime_min_s = 10;
  s.lifetime_max_s = 5;
  EXPECT_NE(validate_churn_settings(s), "");
  s = {};
  s.lifetime_min_s = 0;
  EXPECT_NE(validate_churn_settings(s), "") << "a zero lifetime would join and leave in one instant";
  s = {};
  s.goodbye_fraction = 1.5;
  EXPECT_NE(validate_churn_settings(s), "");
  s = {};
  s.rpc_visits_per_second = -1;
  EXPECT_NE(validate_churn_settings(s), "");
  s = {};
  s.match_lifetime_max_s = std::nan("");
  EXPECT_NE(validate_churn_settings(s), "");
}

}  // namespace
}  // namespace shiftcast
