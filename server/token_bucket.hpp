// TokenBucket: a per-client rate limit weighted by cost (a raycast costs 1, a sweep 2, a batch the sum
// of its queries). Time is an argument, so tests drive it without clocks.
//
//   TokenBucket bucket(rate_per_second, burst, now);
//   if (std::uint32_t wait_ms; !bucket.take(cost, now, &wait_ms)) refuse(RateLimited, wait_ms);
//
// The bucket starts full. After t idle seconds it holds min(burst, tokens + rate * t). Time that goes
// backwards (a caller mixing clocks) adds nothing and is not remembered. Not thread-safe: one bucket per
// connection, used on that connection's strand.
#pragma once

#include <cstdint>

namespace shiftcast {

class TokenBucket {
 public:
  TokenBucket(double rate_per_second, double burst, double now_seconds);
  // Takes `cost` tokens if the bucket holds them; otherwise takes nothing, and `retry_after_ms` (if
  // given) says how long until it would hold them, rounded up to whole milliseconds (cost beyond the
  // burst, negative or NaN cost, or a zero rate can never pass: UINT32_MAX).
  bool take(double cost, double now_seconds, std::uint32_t* retry_after_ms = nullptr);
  double available(double now_seconds);
  // Takes `cost` whatever the bucket holds: it may go below zero, down to -burst (work already done,
  // such as a frame read and refused; later requests wait until the debt is refilled).
  void charge(double cost, double now_seconds);
  // From now on the bucket refills at `rate_per_second` up to `burst` (time until `now_seconds` at the old
  // rate); tokens beyond the new burst are dropped.
  void set_limits(double rate_per_second, double burst, double now_seconds);
  double rate() const { return rate_; }
  double burst() const { return burst_; }

 private:
  void refill(double now_seconds);
  double rate_;
  double burst_;
  double tokens_;
  double last_;
};

}  // namespace shiftcast
