#include "server/config/development_keys.hpp"

#include <sodium.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

namespace shiftcast {
namespace {

using Digest = std::array<std::uint8_t, crypto_hash_sha256_BYTES>;

// sha256 of configs/keys/dev-token.key's 32 key bytes, and of the first lines of configs/keys/dev-admin.key
// dev-service.key and dev-spectator.key.
constexpr char kDevTokenKeySha256[] = "687d3af67937adb7d99c6b1a10bfdd486c2543c5a802740300e353f758c3a2c8";
constexpr char kDevAdminKeySha256[] = "712426a9205fd40c4eb2c7c376bb9a0bd482144297d56863f9ae603862681414";
constexpr char kDevServiceKeySha256[] = "c9cb53fe9693dd52a549262bbb91f413b2db97e1a0079570be36b3cf0c11c7a4";
constexpr char kDevSpectatorKeySha256[] = "743d9d81e39bcba7e57d477a2bc5070e077d18be0d05183744f84a6e2ca24bba";

bool digest_is(const std::uint8_t* data, std::size_t size, std::string_view hex) {
  Digest digest{};
  crypto_init();  // idempotent; validate() may run before anything else touched libsodium
  crypto_hash_sha256(digest.data(), data, size);
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text;
  for (std::uint8_t b : digest) {
    text.push_back(kDigits[b >> 4]);
    text.push_back(kDigits[b & 15]);
  }
  return text == hex;
}

}  // namespace

bool is_development_token_key(const Key& key) {
  return digest_is(key.data(), key.size(), kDevTokenKeySha256);
}

bool is_development_api_key(std::string_view key) {
  const auto* data = reinterpret_cast<const std::uint8_t*>(key.data());
  return digest_is(data, key.size(), kDevAdminKeySha256) ||
         digest_is(data, key.size(), kDevServiceKeySha256) ||
         digest_is(data, key.size(), kDevSpectatorKeySha256);
}

}  // namespace shiftcast
