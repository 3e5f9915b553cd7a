#include "server/auth_throttle.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace shiftcast {

namespace {

constexpr double kOneFailure = 1;
constexpr std::uint32_t kNever = std::numeric_limits<std::uint32_t>::max();

std::uint32_t wait_ms(double available, double rate) {
  if (available >= kOneFailure) return 0;
  if (!(rate > 0)) return kNever;
  const double ms = std::ceil((kOneFailure - available) / rate * 1000.0);
  return ms >= double(kNever) ? kNever : std::uint32_t(std::max(1.0, ms));
}

}  // namespace

AuthThrottle::AuthThrottle(AuthThrottleSettings settings, double now_seconds)
    : settings_(settings), global_(settings.global_rate, settings.global_burst, now_seconds) {}

bool AuthThrottle::may_try(const std::string& address, double now_seconds, std::uint32_t* retry_after_ms) {
  std::lock_guard lock(mutex_);
  const auto it = addresses_.find(address);
  if (it == addresses_.end()) return true;  // no failure on record
  const double mine = it->second.available(now_seconds);
  if (mine >= settings_.burst) {
    addresses_.erase(it);
    return true;
  }
  const double shared = global_.available(now_seconds);
  if (mine >= kOneFailure && shared >= kOneFailure) return true;
  if (retry_after_ms) {
    *retry_after_ms = std::max(wait_ms(mine, settings_.rate), wait_ms(shared, settings_.global_rate));
  }
  return false;
}

void AuthThrottle::failed(const std::string& address, double now_seconds) {
  std::lock_guard lock(mutex_);
  global_.charge(kOneFailure, now_seconds);
  auto it = addresses_.find(address);
  if (it == addresses_.end()) {
    if (addresses_.size() >= kMaxTrackedAddresses) forget_refilled(now_seconds);
    if (addresses_.size() >= kMaxTrackedAddresses) return;
    it = addresses_.emplace(address, TokenBucket(settings_.rate, settings_.burst, now_seconds)).first;
  }
  it->second.charge(kOneFailure, now_seconds);
}

void AuthThrottle::forget_refilled(double now_seconds) {
  for (auto it = addresses_.begin(); it != addresses_.end();) {
    it = it->second.available(now_seconds) >= settings_.burst ? addresses_.erase(it) : std::next(it);
  }
}

}  // namespace shiftcast
