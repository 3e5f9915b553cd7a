#include "client-sim/churn_plan.hpp"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cmath>
#include <tuple>

namespace shiftcast {
namespace {

// Every kind of event draws from a stream of its own (and each slot from its own), so adding clients
// or raising a rate never changes when the matches end.
enum class Stream : std::uint64_t { kClient = 1, kMatch = 2, kRpc = 3, kSubscriber = 4 };

// splitmix64: tiny, fast and the same on every standard library (std's distributions are not).
class Rng {
 public:
  Rng(std::uint32_t seed, Stream stream, std::uint64_t slot)
      : state_((std::uint64_t(seed) << 32) ^ (std::uint64_t(stream) << 24) ^ (slot * 0x9E3779B97F4A7C15ull)) {
  }
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double unit() { return double(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  double between(double lo, double hi) { return lo + (hi - lo) * unit(); }
  bool chance(double p) { return unit() < p; }
  // The gap to the next arrival of a Poisson process at `rate` per second.
  double exponential(double rate) { return -std::log1p(-unit()) / rate; }

 private:
  std::uint64_t state_;
};

std::string range_error(const char* name, double lo, double hi) {
  return fmt::format("[churn] {}_min_s {} .. {}_max_s {}: need 0 <= min <= max", name, lo, name, hi);
}

}  // namespace

std::string validate_churn_settings(const ChurnSettings& s) {
  const auto fraction = [](double f) { return std::isfinite(f) && f >= 0 && f <= 1; };
  const auto range = [](double lo, double hi) {
    return std::isfinite(lo) && std::isfinite(hi) && lo >= 0 && lo <= hi;
  };
  if (!(std::isfinite(s.ramp_s) && s.ramp_s >= 0)) return "[churn] ramp_s must be >= 0";
  // A lifetime of 0 would make a slot join and leave in the same instant, over and over.
  if (!range(s.lifetime_min_s, s.lifetime_max_s) || s.lifetime_min_s <= 0)
    return range_error("lifetime", s.lifetime_min_s, s.lifetime_max_s) + ", min > 0";
  if (!range(s.reconnect_delay_min_s, s.reconnect_delay_max_s))
    return range_error("reconnect_delay", s.reconnect_delay_min_s, s.reconnect_delay_max_s);
  if (!range(s.match_lifetime_min_s, s.match_lifetime_max_s) || s.match_lifetime_min_s <= 0)
    return range_error("match_lifetime", s.match_lifetime_min_s, s.match_lifetime_max_s) + ", min > 0";
  if (!range(s.subscriber_lifetime_min_s, s.subscriber_lifetime_max_s))
    return range_error("subscriber_lifetime", s.subscriber_lifetime_min_s, s.subscriber_lifetime_max_s);
  if (s.match_max_players < 0 || s.match_max_players > 65535)
    return "[churn] match_max_players must be 0..65535";
  if (s.subscriber_never_read_subscriptions < 1 || s.subscriber_never_read_subscriptions > 64)
    return "[churn] subscriber_never_read_subscriptions must be 1..64";
  if (!fraction(s.goodbye_fraction)) return "[churn] goodbye_fraction must be 0..1";
  if (!fraction(s.rpc_abandon_fraction)) return "[churn] rpc_abandon_fraction must be 0..1";
  if (!fraction(s.subscriber_never_read_fraction))
    return "[churn] subscriber_never_read_fraction must be 0..1";
  if (!(std::isfinite(s.rpc_visits_per_second) && s.rpc_visits_per_second >= 0))
    return "[churn] rpc_visits_per_second must be >= 0";
  if (!(std::isfinite(s.subscribers_per_second) && s.subscribers_per_second >= 0))
    return "[churn] subscribers_per_second must be >= 0";
  return "";
}

ChurnPlan make_churn_plan(const ChurnSettings& s, const ChurnShape& shape) {
  ChurnPlan plan;
  std::vector<ChurnEvent>& out = plan.events;
  const double end = shape.duration;

  for (int m = 0; m < shape.matches; ++m) {
    Rng rng(shape.seed, Stream::kMatch, std::uint64_t(m));
    double t = 0;
    for (int g = 0;; ++g) {
      out.push_back({t, ChurnEventKind::kMatchCreate, m, g});
      t += rng.between(s.match_lifetime_min_s, s.match_lifetime_max_s);
      if (t >= end) break;
      out.push_back({t, ChurnEventKind::kMatchEnd, m, g});
    }
  }

  for (int c = 0; c < shape.clients; ++c) {
    Rng rng(shape.seed, Stream::kClient, std::uint64_t(c));
    double t = s.ramp_s * double(c) / double(std::max(1, shape.clients));
    for (int session = 0; t < end; ++session) {
      out.push_back({t, ChurnEventKind::kClientJoin, c, session});
      t += rng.between(s.lifetime_min_s, s.lifetime_max_s);
      const bool quiet = !rng.chance(s.goodbye_fraction);
      if (t >= end) break;
      out.push_back({t, ChurnEventKind::kClientLeave, c, session, quiet});
      t += rng.between(s.reconnect_delay_min_s, s.reconnect_delay_max_s);
    }
  }

  if (s.rpc_visits_per_second > 0) {
    Rng rng(shape.seed, Stream::kRpc, 0);
    for (double t = rng.exponential(s.rpc_visits_per_second); t < end;
         t += rng.exponential(s.rpc_visits_per_second))
      out.push_back({t, ChurnEventKind::kRpcVisit, 0, 0, rng.chance(s.rpc_abandon_fraction)});
  }

  if (s.subscribers_per_second > 0 && shape.matches > 0) {
    Rng rng(shape.seed, Stream::kSubscriber, 0);
    for (double t = rng.exponential(s.subscribers_per_second); t < end;
         t += rng.exponential(s.subscribers_per_second)) {
      ChurnEvent e{t, ChurnEventKind::kSubscriber, int(rng.next() % std::uint64_t(shape.matches)), 0};
      e.quiet = rng.chance(s.subscriber_never_read_fraction);
      e.lifetime = rng.between(s.subscriber_lifetime_min_s, s.subscriber_lifetime_max_s);
      out.push_back(e);
    }
  }

  std::stable_sort(out.begin(), out.end(), [](const ChurnEvent& a, const ChurnEvent& b) {
    return std::tie(a.at, a.kind, a.slot) < std::tie(b.at, b.kind, b.slot);
  });
  return plan;
}

}  // namespace shiftcast
