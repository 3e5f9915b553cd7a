// QueryBudget: the RPC listener's CPU budget, shared by every connection, so that no set of connections
// can take more than the RPC threads should spend, nor starve another connection.
//
//   QueryBudget budget(global_rate, global_burst, now);       // one per listener (RpcShared)
//   TokenBucket mine(rate, burst, now);                        // one per connection
//   if (!budget.take(mine, cost, now, open_connections, &retry_ms)) refuse(RateLimited, retry_ms);
//
// A request is admitted when both its connection's bucket and the global bucket hold its cost; it then
// takes from both. Fairness: a connection's bucket refills at min(its configured rate, global_rate / open
// connections) and holds at most min(its configured burst, global_burst / open connections), so the
// connections together can never hold or refill more than the global bucket does. What a connection
// leaves unused stays in the global bucket, and no other connection can take it: each is already held
// to its own share by its own bucket. So however many connections flood, each one that asks gets its
// share, global_rate / connections per second, at once. The price: while many connections are open, a
// request larger than global_burst / connections waits (RateLimited) until fewer share the listener.
//
// Thread-safe (a mutex around the global bucket); the connection's bucket belongs to its strand.
#pragma once

#include <cstdint>
#include <mutex>

#include "server/token_bucket.hpp"

namespace shiftcast {

class QueryBudget {
 public:
  QueryBudget(double global_rate, double global_burst, double now_seconds);

  // Takes `cost` from `connection` and the global bucket, or from neither; `retry_after_ms` says when
  // both would hold it (UINT32_MAX: never, the cost is over a burst). `configured_rate` is the
  // connection's own limit, `open_connections` how many share the global rate now.
  bool take(TokenBucket& connection, double configured_rate, double configured_burst, double cost,
            double now_seconds, int open_connections, std::uint32_t* retry_after_ms);
  // Takes `cost` whatever the buckets hold (they may go below zero: later requests wait for it). For
  // frames already read and refused, whose work is done.
  void charge(TokenBucket& connection, double configured_rate, double configured_burst, double cost,
              double now_seconds, int open_connections);
  // Sets the connection's bucket to its share of the listener now.
  void share(TokenBucket& connection, double configured_rate, double configured_burst, double now_seconds,
             int open_connections) const;
  double global_rate() const { return global_rate_; }
  double global_burst() const { return global_burst_; }

 private:
  const double global_rate_;
  const double global_burst_;
  std::mutex mutex_;
  TokenBucket global_;
};

}  // namespace shiftcast
