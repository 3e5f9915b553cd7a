#include "server/token_bucket.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace shiftcast {
namespace {

// Refilling adds rate * dt in floating point, so a client that waits exactly retry_after_ms may find
// the bucket a few ulps short of its cost; this much shortfall still passes (far below any cost unit).
constexpr double kTokenTolerance = 1e-9;
constexpr std::uint32_t kNever = std::numeric_limits<std::uint32_t>::max();

}  // namespace

TokenBucket::TokenBucket(double rate_per_second, double burst, double now_seconds)
    : rate_(std::max(0.0, rate_per_second)),
      burst_(std::max(0.0, burst)),
      tokens_(burst_),
      last_(now_seconds) {}

void TokenBucket::refill(double now_seconds) {
  if (!(now_seconds > last_)) return;
  tokens_ = std::min(burst_, tokens_ + rate_ * (now_seconds - last_));
  last_ = now_seconds;
}

double TokenBucket::available(double now_seconds) {
  refill(now_seconds);
  return tokens_;
}

void TokenBucket::charge(double cost, double now_seconds) {
  refill(now_seconds);
  if (cost > 0) tokens_ = std::max(-burst_, tokens_ - cost);
}

void TokenBucket::set_limits(double rate_per_second, double burst, double now_seconds) {
  refill(now_seconds);
  rate_ = std::max(0.0, rate_per_second);
  burst_ = std::max(0.0, burst);
  tokens_ = std::min(tokens_, burst_);
}

bool TokenBucket::take(double cost, double now_seconds, std::uint32_t* retry_after_ms) {
  refill(now_seconds);
  bool possible = cost >= 0 && cost <= burst_ + kTokenTolerance;
  if (possible && cost <= tokens_ + kTokenTolerance) {
    tokens_ = std::max(0.0, tokens_ - cost);
    return true;
  }
  if (retry_after_ms) {
    double wait_ms = possible && rate_ > 0 ? std::ceil((cost - tokens_) / rate_ * 1000.0) : HUGE_VAL;
    *retry_after_ms = wait_ms >= static_cast<double>(kNever) ? kNever : static_cast<std::uint32_t>(wait_ms);
  }
  return false;
}

}  // namespace shiftcast
