#include "server/query_budget.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace shiftcast {

namespace {

constexpr std::uint32_t kNever = std::numeric_limits<std::uint32_t>::max();
constexpr double kTolerance = 1e-9;  // as TokenBucket's: refills in floating point may fall a few ulps short

std::uint32_t wait_ms(double missing, double rate) {
  if (missing <= 0) return 0;
  if (!(rate > 0)) return kNever;
  const double ms = std::ceil(missing / rate * 1000.0);
  return ms >= double(kNever) ? kNever : std::uint32_t(ms);
}

}  // namespace

QueryBudget::QueryBudget(double global_rate, double global_burst, double now_seconds)
    : global_rate_(std::max(0.0, global_rate)),
      global_burst_(std::max(0.0, global_burst)),
      global_(global_rate_, global_burst_, now_seconds) {}

void QueryBudget::share(TokenBucket& connection, double configured_rate, double configured_burst,
                        double now_seconds, int open_connections) const {
  const double n = double(std::max(1, open_connections));
  connection.set_limits(std::min(configured_rate, global_rate_ / n),
                        std::min(configured_burst, global_burst_ / n), now_seconds);
}

bool QueryBudget::take(TokenBucket& connection, double configured_rate, double configured_burst, double cost,
                       double now_seconds, int open_connections, std::uint32_t* retry_after_ms) {
  share(connection, configured_rate, configured_burst, now_seconds, open_connections);
  if (!(cost >= 0) || cost > configured_burst + kTolerance || cost > global_burst_ + kTolerance) {
    if (retry_after_ms) *retry_after_ms = kNever;  // callers refuse these as BadArgument first
    return false;
  }
  if (cost > connection.burst() + kTolerance) {
    // More than this connection's share of the burst while so many connections are open: a guess at when
    // to ask again, the time its bucket takes to fill.
    if (retry_after_ms) {
      *retry_after_ms = std::max<std::uint32_t>(
          1, wait_ms(connection.burst() - connection.available(now_seconds), connection.rate()));
    }
    return false;
  }
  const double mine = connection.available(now_seconds);
  std::lock_guard lock(mutex_);
  const double shared = global_.available(now_seconds);
  if (mine + kTolerance >= cost && shared + kTolerance >= cost) {
    connection.take(cost, now_seconds);
    global_.take(cost, now_seconds);
    return true;
  }
  if (retry_after_ms) {
    *retry_after_ms = std::max(wait_ms(cost - mine, connection.rate()), wait_ms(cost - shared, global_rate_));
  }
  return false;
}

void QueryBudget::charge(TokenBucket& connection, double configured_rate, double configured_burst,
                         double cost, double now_seconds, int open_connections) {
  share(connection, configured_rate, configured_burst, now_seconds, open_connections);
  connection.charge(cost, now_seconds);
  std::lock_guard lock(mutex_);
  global_.charge(cost, now_seconds);
}

}  // namespace shiftcast
