#include "protocol/crypto.hpp"

#include <sodium.h>

#include <cctype>

#include "protocol/byte_order_internal.hpp"

namespace shiftcast {
namespace {

static_assert(crypto_aead_xchacha20poly1305_ietf_KEYBYTES == kKeyBytes);
static_assert(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES == kTokenNonceBytes);
static_assert(crypto_aead_xchacha20poly1305_ietf_ABYTES == kMacBytes);
static_assert(crypto_aead_chacha20poly1305_ietf_KEYBYTES == kKeyBytes);
static_assert(crypto_aead_chacha20poly1305_ietf_ABYTES == kMacBytes);

using PacketNonce = std::array<std::uint8_t, crypto_aead_chacha20poly1305_ietf_NPUBBYTES>;
static_assert(sizeof(PacketNonce) == 4 + sizeof(std::uint64_t));

// 4 zero bytes, then the sequence little-endian: sequences never repeat per key, so neither do nonces.
PacketNonce packet_nonce(std::uint64_t sequence) {
  PacketNonce nonce{};
  detail::store_le(nonce.data() + 4, sequence);
  return nonce;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

bool crypto_init() {
  return sodium_init() >= 0;
}

Key random_key() {
  crypto_init();
  Key key;
  randombytes_buf(key.data(), key.size());
  return key;
}

TokenNonce random_token_nonce() {
  crypto_init();
  TokenNonce nonce;
  randombytes_buf(nonce.data(), nonce.size());
  return nonce;
}

std::optional<Key> key_from_hex(std::string_view hex) {
  while (!hex.empty() && std::isspace(static_cast<unsigned char>(hex.front())))
    hex.remove_prefix(1);
  while (!hex.empty() && std::isspace(static_cast<unsigned char>(hex.back())))
    hex.remove_suffix(1);
  if (hex.size() != 2 * kKeyBytes) return std::nullopt;
  Key key;
  for (std::size_t i = 0; i < kKeyBytes; ++i) {
    const int high = hex_digit(hex[2 * i]);
    const int low = hex_digit(hex[2 * i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    key[i] = static_cast<std::uint8_t>(high * 16 + low);
  }
  return key;
}

std::vector<std::uint8_t> seal_xchacha(const Key& key, const TokenNonce& nonce,
                                       std::span<const std::uint8_t> plain,
                                       std::span<const std::uint8_t> associated) {
  std::vector<std::uint8_t> sealed(plain.size() + kMacBytes);
  unsigned long long sealed_length = 0;
  crypto_aead_xchacha20poly1305_ietf_encrypt(sealed.data(), &sealed_length, plain.data(), plain.size(),
                                             associated.data(), associated.size(), nullptr, nonce.data(),
                                             key.data());
  sealed.resize(sealed_length);
  return sealed;
}

std::optional<std::vector<std::uint8_t>> open_xchacha(const Key& key, const TokenNonce& nonce,
                                                      std::span<const std::uint8_t> sealed,
                                                      std::span<const std::uint8_t> associated) {
  if (sealed.size() < kMacBytes) return std::nullopt;
  std::vector<std::uint8_t> plain(sealed.size() - kMacBytes);
  unsigned long long plain_length = 0;
  if (crypto_aead_xchacha20poly1305_ietf_decrypt(plain.data(), &plain_length, nullptr, sealed.data(),
                                                 sealed.size(), associated.data(), associated.size(),
                                                 nonce.data(), key.data()) != 0) {
    return std::nullopt;
  }
  plain.resize(plain_length);
  return plain;
}

std::vector<std::uint8_t> seal_packet_payload(const Key& key, std::uint64_t sequence,
                                              std::span<const std::uint8_t> plain,
                                              std::span<const std::uint8_t> associated) {
  std::vector<std::uint8_t> sealed(plain.size() + kMacBytes);
  seal_packet_payload_into(key, sequence, plain, associated, sealed);
  return sealed;
}

void seal_packet_payload_into(const Key& key, std::uint64_t sequence, std::span<const std::uint8_t> plain,
                              std::span<const std::uint8_t> associated, std::span<std::uint8_t> out) {
  const PacketNonce nonce = packet_nonce(sequence);
  // Detached: ciphertext then tag, the same bytes as the combined form.
  crypto_aead_chacha20poly1305_ietf_encrypt_detached(out.data(), out.data() + plain.size(), nullptr,
                                                     plain.data(), plain.size(), associated.data(),
                                                     associated.size(), nullptr, nonce.data(), key.data());
}

std::optional<std::vector<std::uint8_t>> open_packet_payload(const Key& key, std::uint64_t sequence,
                                                             std::span<const std::uint8_t> sealed,
                                                             std::span<const std::uint8_t> associated) {
  if (sealed.size() < kMacBytes) return std::nullopt;
  const PacketNonce nonce = packet_nonce(sequence);
  std::vector<std::uint8_t> plain(sealed.size() - kMacBytes);
  unsigned long long plain_length = 0;
  if (crypto_aead_chacha20poly1305_ietf_decrypt(plain.data(), &plain_length, nullptr, sealed.data(),
                                                sealed.size(), associated.data(), associated.size(),
                                                nonce.data(), key.data()) != 0) {
    return std::nullopt;
  }
  plain.resize(plain_length);
  return plain;
}

}  // namespace shiftcast
