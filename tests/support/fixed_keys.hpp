// Fixed keys and nonces for tests and fuzz targets: the same seed always gives the same bytes, so a
// failure replays exactly and sealed test inputs stay valid between runs. Never for a real server.
//
//   const Key token_key = fixed_key(1);     // distinct seeds give distinct keys
#pragma once

#include <cstddef>
#include <cstdint>

#include "protocol/crypto.hpp"

namespace shiftcast {

inline Key fixed_key(std::uint8_t seed) {
  Key k;
  for (std::size_t i = 0; i < k.size(); ++i)
    k[i] = static_cast<std::uint8_t>(seed * 31 + i);
  return k;
}

inline TokenNonce fixed_nonce(std::uint8_t seed) {
  TokenNonce n;
  for (std::size_t i = 0; i < n.size(); ++i)
    n[i] = static_cast<std::uint8_t>(seed * 17 + i);
  return n;
}

}  // namespace shiftcast
