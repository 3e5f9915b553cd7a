#include "protocol/crypto.hpp"

#include <gtest/gtest.h>
#include <sodium.h>

#include <cstdint>
#include <random>
#include <vector>

namespace shiftcast {
namespace {

Key counting_key(std::uint8_t first) {
  Key key;
  for (std::size_t i = 0; i < key.size(); ++i)
    key[i] = static_cast<std::uint8_t>(first + i);
  return key;
}

TokenNonce counting_nonce(std::uint8_t first) {
  TokenNonce nonce;
  for (std::size_t i = 0; i < nonce.size(); ++i)
    nonce[i] = static_cast<std::uint8_t>(first + i);
  return nonce;
}

std::vector<std::uint8_t> random_bytes(std::mt19937& rng, std::size_t n) {
  std::vector<std::uint8_t> out(n);
  for (auto& b : out)
    b = static_cast<std::uint8_t>(rng());
  return out;
}

class CryptoTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(crypto_init()); }
};

TEST_F(CryptoTest, InitIsIdempotent) {
  EXPECT_TRUE(crypto_init());
  EXPECT_TRUE(crypto_init());
}

TEST_F(CryptoTest, RandomKeysAndNoncesDiffer) {
  EXPECT_NE(random_key(), random_key());
  EXPECT_NE(random_token_nonce(), random_token_nonce());
}

TEST_F(CryptoTest, KeyFromHexParsesAndTrims) {
  const auto key = key_from_hex("  000102030405060708090a0b0c0d0e0f101112131415161718191A1B1C1D1E1F\n");
  ASSERT_TRUE(key.has_value());
  EXPECT_EQ(*key, counting_key(0));
}

TEST_F(CryptoTest, KeyFromHexRefusesEverythingElse) {
  const std::string good = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
  EXPECT_FALSE(key_from_hex("").has_value());
  EXPECT_FALSE(key_from_hex(good.substr(1)).has_value());
  EXPECT_FALSE(key_from_hex(good + "00").has_value());
  std::string bad = good;
  bad[10] = 'g';
  EXPECT_FALSE(key_from_hex(bad).has_value());
  bad = good;
  bad[31] = ' ';
  EXPECT_FALSE(key_from_hex(bad).has_value());
}

TEST_F(CryptoTest, XChaChaRoundTripsAndAgreesWithLibsodium) {
  std::mt19937 rng(7);
  const Key key = counting_key(3);
  const TokenNonce nonce = counting_nonce(40);
  for (std::size_t length : {0u, 1u, 15u, 16u, 17u, 200u}) {
    const auto plain = random_bytes(rng, length);
    const auto ad = random_bytes(rng, 26);
    const auto sealed = seal_xchacha(key, nonce, plain, ad);
    ASSERT_EQ(sealed.size(), length + kMacBytes);

    // The peer library called directly is the oracle for the construction (a client in another
    // language links the same primitive).
    std::vector<std::uint8_t> expected(length + kMacBytes);
    unsigned long long expected_length = 0;
    crypto_aead_xchacha20poly1305_ietf_encrypt(expected.data(), &expected_length, plain.data(), plain.size(),
                                               ad.data(), ad.size(), nullptr, nonce.data(), key.data());
    EXPECT_EQ(sealed, expected);

    const auto opened = open_xchacha(key, nonce, sealed, ad);
    ASSERT_TRUE(opened.has_value());
    EXPECT_EQ(*opened, plain);
  }
}

TEST_F(CryptoTest, XChaChaDetectsEveryFlippedByteAndWrongInputs) {
  std::mt19937 rng(11);
  const Key key = counting_key(0);
  const TokenNonce nonce = counting_nonce(100);
  const auto plain = random_bytes(rng, 60);
  const auto ad = random_bytes(rng, 26);
  const auto sealed = seal_xchacha(key, nonce, plain, ad);
  for (std::size_t i = 0; i < sealed.size(); ++i) {
    auto tampered = sealed;
    tampered[i] ^= 0x01;
    EXPECT_FALSE(open_xchacha(key, nonce, tampered, ad).has_value()) << "byte " << i;
  }
  for (std::size_t length = 0; length < sealed.size(); ++length) {
    EXPECT_FALSE(open_xchacha(key, nonce, std::span(sealed).first(length), ad).has_value()) << length;
  }
  for (std::size_t i = 0; i < ad.size(); ++i) {
    auto other_ad = ad;
    other_ad[i] ^= 0x80;
    EXPECT_FALSE(open_xchacha(key, nonce, sealed, other_ad).has_value());
  }
  EXPECT_FALSE(open_xchacha(counting_key(1), nonce, sealed, ad).has_value());
  EXPECT_FALSE(open_xchacha(key, counting_nonce(101), sealed, ad).has_value());
}

TEST_F(CryptoTest, PacketNonceIsFourZeroBytesThenSequenceLittleEndian) {
  std::mt19937 rng(5);
  const Key key = counting_key(9);
  const auto plain = random_bytes(rng, 33);
  const auto ad = random_bytes(rng, 39);
  for (std::uint64_t sequence : {std::uint64_t{1}, std::uint64_t{0x0102030405060708}, ~std::uint64_t{0}}) {
    const auto sealed = seal_packet_payload(key, sequence, plain, ad);
    // Hand-built nonce: the oracle for the byte layout docs/protocol.md states.
    std::uint8_t nonce[12] = {0, 0, 0, 0};
    for (int i = 0; i < 8; ++i)
      nonce[4 + i] = static_cast<std::uint8_t>((sequence >> (8 * i)) & 0xff);
    std::vector<std::uint8_t> expected(plain.size() + kMacBytes);
    unsigned long long expected_length = 0;
    crypto_aead_chacha20poly1305_ietf_encrypt(expected.data(), &expected_length, plain.data(), plain.size(),
                                              ad.data(), ad.size(), nullptr, nonce, key.data());
    EXPECT_EQ(sealed, expected) << sequence;
    const auto opened = open_packet_payload(key, sequence, sealed, ad);
    ASSERT_TRUE(opened.has_value());
    EXPECT_EQ(*opened, plain);
  }
}

TEST_F(CryptoTest, PacketPayloadDetectsEveryFlippedByteAndWrongSequence) {
  std::mt19937 rng(13);
  const Key key = counting_key(50);
  const auto plain = random_bytes(rng, 40);
  const auto ad = random_bytes(rng, 39);
  const auto sealed = seal_packet_payload(key, 77, plain, ad);
  for (std::size_t i = 0; i < sealed.size(); ++i) {
    auto tampered = sealed;
    tampered[i] ^= 0x40;
    EXPECT_FALSE(open_packet_payload(key, 77, tampered, ad).has_value()) << "byte " << i;
  }
  EXPECT_FALSE(open_packet_payload(key, 78, sealed, ad).has_value());
  EXPECT_FALSE(open_packet_payload(counting_key(51), 77, sealed, ad).has_value());
  EXPECT_FALSE(open_packet_payload(key, 77, std::span(sealed).first(kMacBytes - 1), ad).has_value());
  EXPECT_FALSE(open_packet_payload(key, 77, {}, ad).has_value());
}

}  // namespace
}  // namespace shiftcast
