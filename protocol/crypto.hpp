// The two AEAD constructions of the wire, over libsodium, and nothing else:
//   - XChaCha20-Poly1305-IETF (24-byte random nonces) seals connect tokens and challenge tokens;
//   - ChaCha20-Poly1305-IETF (12-byte nonce = 4 zero bytes || sequence, little-endian 64-bit) seals
//     connected packets under per-direction keys.
// Call crypto_init() once at startup (idempotent, thread-safe): it selects libsodium's fastest
// implementations. random_key() and random_token_nonce() call it themselves; the AEAD functions are
// correct without it (the portable implementations), only slower.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "protocol/wire_constants.hpp"

namespace shiftcast {

using Key = std::array<std::uint8_t, kKeyBytes>;
using TokenNonce = std::array<std::uint8_t, kTokenNonceBytes>;

bool crypto_init();
Key random_key();
TokenNonce random_token_nonce();
// Parses 64 hex digits (a key file's first line, whitespace trimmed); nothing on any other input.
std::optional<Key> key_from_hex(std::string_view hex);

// Returns ciphertext || 16-byte tag.
std::vector<std::uint8_t> seal_xchacha(const Key& key, const TokenNonce& nonce,
                                       std::span<const std::uint8_t> plain,
                                       std::span<const std::uint8_t> associated);
// Nothing when the tag does not authenticate (wrong key, tampered, truncated).
std::optional<std::vector<std::uint8_t>> open_xchacha(const Key& key, const TokenNonce& nonce,
                                                      std::span<const std::uint8_t> sealed,
                                                      std::span<const std::uint8_t> associated);

std::vector<std::uint8_t> seal_packet_payload(const Key& key, std::uint64_t sequence,
                                              std::span<const std::uint8_t> plain,
                                              std::span<const std::uint8_t> associated);
// The same into `out`, which holds exactly plain.size() + kMacBytes bytes (a packet seals into the
// datagram's own buffer, with no copy in between).
void seal_packet_payload_into(const Key& key, std::uint64_t sequence, std::span<const std::uint8_t> plain,
                              std::span<const std::uint8_t> associated, std::span<std::uint8_t> out);
std::optional<std::vector<std::uint8_t>> open_packet_payload(const Key& key, std::uint64_t sequence,
                                                             std::span<const std::uint8_t> sealed,
                                                             std::span<const std::uint8_t> associated);

}  // namespace shiftcast
