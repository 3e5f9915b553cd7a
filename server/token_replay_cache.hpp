// TokenReplayCache: the connect tokens that already established a connection, until they expire. A token
// is spent once; a second connection with it (a replay, from anywhere) is refused with TokenReplayed.
// Shared by every worker's UDP endpoint: one short mutex per handshake, never per packet.
//
// A token is marked spent when its challenge response is handed to the match (so a concurrent replay on
// another worker is refused), and released again when the match refuses the connection (MatchFull,
// ShuttingDown): a refused client may retry with the same token. The cache lives in memory only; tokens
// of an earlier process are refused by their server instance (ServerKeys::server_instance) instead.
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
  // Forgets a token spent by a connection that was then refused, so its holder can retry.
  void release(const Mac& mac);

  static constexpr std::size_t kDefaultCapacity = 1u << 20;

 private:
  void purge(std::uint64_t now_unix);
  mutable std::mutex mutex_;
  std::size_t capacity_;
  std::map<Mac, std::uint64_t> expiry_;
};

}  // namespace shiftcast
