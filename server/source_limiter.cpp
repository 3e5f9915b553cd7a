#include "server/source_limiter.hpp"

#include <cstring>

namespace shiftcast {
namespace {

std::array<std::uint8_t, 16> key_of(const boost::asio::ip::address& address) {
  if (address.is_v6()) return address.to_v6().to_bytes();
  return boost::asio::ip::make_address_v6(boost::asio::ip::v4_mapped, address.to_v4()).to_bytes();
}

}  // namespace

std::size_t SourceLimiter::KeyHash::operator()(const Key& key) const {
  std::uint64_t a = 0;
  std::uint64_t b = 0;
  std::memcpy(&a, key.data(), 8);
  std::memcpy(&b, key.data() + 8, 8);
  return std::size_t(a * 0x9e3779b97f4a7c15ull ^ b);
}

SourceLimiter::SourceLimiter(const SourceLimits& limits)
    : limits_(limits), overflow_(limits.rate, limits.burst, 0) {}

void SourceLimiter::purge(double now_seconds) {
  // A bucket that holds its whole burst again is what a new bucket would be: dropping it changes nothing.
  for (auto it = buckets_.begin(); it != buckets_.end();)
    it = it->second.available(now_seconds) >= limits_.burst ? buckets_.erase(it) : std::next(it);
  // Scanning again before every charged bucket could have refilled would find nothing new: wait that long,
  // so a flood from fresh addresses cannot make every datagram pay for a full scan.
  next_purge_ = now_seconds + (limits_.rate > 0 ? limits_.burst / limits_.rate : 1.0);
}

bool SourceLimiter::admit(const boost::asio::ip::address& source, double now_seconds) {
  const Key key = key_of(source);
  if (!limits_.limit_loopback && boost::asio::ip::make_address_v6(key).is_loopback()) return true;
  if (!limits_.limit_loopback && key[10] == 0xff && key[11] == 0xff && key[12] == 127) return true;
  auto it = buckets_.find(key);
  if (it == buckets_.end()) {
    if (buckets_.size() >= limits_.max_sources && now_seconds >= next_purge_) purge(now_seconds);
    if (buckets_.size() >= limits_.max_sources) return overflow_.take(1, now_seconds);
    it = buckets_.emplace(key, TokenBucket(limits_.rate, limits_.burst, now_seconds)).first;
  }
  return it->second.take(1, now_seconds);
}

}  // namespace shiftcast
