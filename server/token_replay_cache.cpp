#include "server/token_replay_cache.hpp"

namespace shiftcast {

bool TokenReplayCache::spent(const Mac& mac) const {
  std::lock_guard lock(mutex_);
  return expiry_.contains(mac);
}

bool TokenReplayCache::spend(const Mac& mac, std::uint64_t expires_at, std::uint64_t now_unix) {
  std::lock_guard lock(mutex_);
  if (expiry_.size() >= capacity_) purge(now_unix);
  if (expiry_.size() >= capacity_) return false;
  return expiry_.emplace(mac, expires_at).second;
}

void TokenReplayCache::release(const Mac& mac) {
  std::lock_guard lock(mutex_);
  expiry_.erase(mac);
}

void TokenReplayCache::purge(std::uint64_t now_unix) {
  // An expired token is refused by its expiry before it reaches the cache, so forgetting it is safe.
  std::erase_if(expiry_, [&](const auto& entry) { return entry.second <= now_unix; });
}

}  // namespace shiftcast
