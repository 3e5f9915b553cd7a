// TokenReplayCache: the connect tokens that already established a connection, until they expire. A token
// is spent once; a second connection with it (a replay, from anywhere) is refused with TokenReplayed.
// Shared by every worker's UDP endpoint: one short mutex per handshake, never per packet.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>

#include "protocol/wire_constants.hpp"

namespace shiftcast {

class TokenReplayCache {
 public:
  using Mac = std::array<std::uint8_t, kMacBytes>;
  explicit TokenReplayCache(std::size_t capacity = kDefaultCapacity) : capacity_(capacity) {}

  bool spent(const Mac& mac) const;
  // Marks the token spent. False when it already was, or when the cache is full of unexpired tokens
  // (then the connection is refused rather than the replay protection weakened).
  bool spend(const Mac& mac, std::uint64_t expires_at, std::uint64_t now_unix);

  static constexpr std::size_t kDefaultCapacity = 1u << 20;

 private:
  void purge(std::uint64_t now_unix);
  mutable std::mutex mutex_;
  std::size_t capacity_;
  std::map<Mac, std::uint64_t> expiry_;
};

}  // namespace shiftcast
