// AuthThrottle: bounds how fast anyone can guess the RPC's keys. Every failed key check is charged to
// its source address's bucket and to a listener-wide bucket; before a key is even looked at, the
// throttle says whether this address may try now.
//
//   AuthThrottle throttle(settings, now);                      // one per listener (RpcShared)
//   if (std::uint32_t wait; !throttle.may_try(address, now, &wait)) refuse(RateLimited, wait);
//   if (!key_matches) throttle.failed(address, now);
//
// An address may try while its own bucket holds a failure, and, once it has failed before (its bucket is
// not full), while the global bucket holds one too. So a distributed guesser is held to the global
// rate, and an address with no failures on record is never locked out by other addresses' guessing. A
// throttled attempt is refused without comparing the key, so it tells the guesser nothing. An address
// whose bucket refilled is forgotten; at most kMaxTrackedAddresses are remembered (beyond that, new
// failing addresses share the global bucket only).
//
// Thread-safe (one mutex; taken only on a keyed request).
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "server/token_bucket.hpp"

namespace shiftcast {

inline constexpr std::size_t kMaxTrackedAddresses = 65536;

struct AuthThrottleSettings {
  double burst = 8;  // failures per address before waiting
  double rate = 1;   // failures per second an address regains
  double global_burst = 64;
  double global_rate = 16;
};

class AuthThrottle {
 public:
  AuthThrottle(AuthThrottleSettings settings, double now_seconds);
  // May `address` have a key checked now? Otherwise `retry_after_ms` says when.
  bool may_try(const std::string& address, double now_seconds, std::uint32_t* retry_after_ms);
  void failed(const std::string& address, double now_seconds);

 private:
  void forget_refilled(double now_seconds);
  const AuthThrottleSettings settings_;
  std::mutex mutex_;
  TokenBucket global_;
  std::unordered_map<std::string, TokenBucket> addresses_;
};

}  // namespace shiftcast
