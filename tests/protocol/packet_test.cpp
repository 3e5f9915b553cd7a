// The connected packet (protocol version 4): a 3- to 9-byte header, then the sealed message. Oracles: the
// documented byte layout, the full sequence and ack reconstructed by brute force over every candidate,
// and authentication (anything changed fails, nothing changed passes).
#include "protocol/packet.hpp"

#include <gtest/gtest.h>

#include <random>

#include "protocol/connected_message.hpp"
#include "protocol/sequence_window.hpp"
#include "protocol/wire_constants.hpp"
#include "tests/support/seeded_random.hpp"

namespace shiftcast {
namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes keep_alive_message(std::uint64_t tick) {
  Bytes m;
  write_keep_alive(m, {tick, 0, std::nullopt});
  return m;
}

Key filled_key(std::uint8_t value) {
  Key key;
  key.fill(value);
  return key;
}

constexpr PacketHeader kHeader{7, 1001, 42, 40, 0x80000003u};
constexpr PacketIdentity kIdentity{7, 1001};
// A receiver that has seen the sender's sequences up to 41 and sent up to 45 of its own.
constexpr SequenceContext kContext{41, 45};

TEST(PacketTest, AssociatedDataLayout) {
  const PacketHeader header{0x04030201, 0x0c0b0a0908070605, 0x14131211100f0e0d, 0x1c1b1a1918171615,
                            0x201f1e1d};
  const Bytes expected{'S',  'H',  'C',  '1',  0x06, 0x00, 0x01, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06,
                       0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13,
                       0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f, 0x20};
  EXPECT_EQ(packet_associated_data(header, Direction::kServerToClient), expected);
  auto c2s = expected;
  c2s[6] = 0x00;
  EXPECT_EQ(packet_associated_data(header, Direction::kClientToServer), c2s);
}

// The header bytes, as docs/protocol.md lays them out: the prefix, the low 16 bits of sequence and ack,
// and only the ack-bits bytes that are not 0xFF.
TEST(PacketTest, HeaderLayout) {
  const Key key = filled_key(3);
  const Bytes m = keep_alive_message(5);
  // Nothing received yet: no ack, 3 bytes.
  Bytes d = seal_packet({7, 1001, 0x12345, 0, 0}, Direction::kClientToServer, key, m);
  EXPECT_EQ(d.size(), 3 + m.size() + kMacBytes);
  EXPECT_EQ(d[0], 0x01);
  EXPECT_EQ(d[1], 0x45);
  EXPECT_EQ(d[2], 0x23);
  // The steady state: every ack bit set, 5 bytes.
  d = seal_packet({7, 1001, 9, 0x10203, 0xFFFFFFFFu}, Direction::kClientToServer, key, m);
  EXPECT_EQ(d.size(), 5 + m.size() + kMacBytes);
  EXPECT_EQ((Bytes{d.begin(), d.begin() + 5}), (Bytes{0x05, 0x09, 0x00, 0x03, 0x02}));
  // Bytes 0 and 3 of the ack bits have holes: sent in that order.
  d = seal_packet({7, 1001, 9, 3, 0x7FFFFFFEu}, Direction::kClientToServer, key, m);
  EXPECT_EQ((Bytes{d.begin(), d.begin() + 7}),
            (Bytes{0x05 | 0x08 | 0x40, 0x09, 0x00, 0x03, 0x00, 0xFE, 0x7F}));
  EXPECT_EQ(datagram_form(d), DatagramForm::kConnectedPacket);
}

TEST(PacketTest, SealOpenRoundTrip) {
  ASSERT_TRUE(crypto_init());
  const Key key = random_key();
  std::mt19937 rng(17);
  for (int trial = 0; trial < 2000; ++trial) {
    PacketHeader h{kIdentity.match_id, kIdentity.client_id, 1 + rng() % 100000, 0, 0};
    if (rng() % 4 != 0) {
      h.ack = 1 + rng() % 100000;
      h.ack_bits = rng() % 2 ? 0xFFFFFFFFu : static_cast<std::uint32_t>(rng());
    }
    Bytes message(1 + rng() % 64);
    for (auto& b : message)
      b = static_cast<std::uint8_t>(rng());
    const Bytes d = seal_packet(h, Direction::kClientToServer, key, message);
    EXPECT_LE(d.size(), message.size() + kPacketOverheadBytes);
    // A receiver near both ends of the exchange reconstructs the exact values.
    const SequenceContext near{h.sequence - std::min<std::uint64_t>(h.sequence, rng() % 300),
                               h.ack + rng() % 300};
    const OpenedPacket opened = open_packet(d, Direction::kClientToServer, key, kIdentity, near);
    ASSERT_EQ(opened.error, wire::ErrorCode::Ok) << trial;
    EXPECT_EQ(opened.message, message);
    EXPECT_EQ(opened.header.sequence, h.sequence);
    EXPECT_EQ(opened.header.ack, h.ack);
    EXPECT_EQ(opened.header.ack_bits, h.ack_bits);
    EXPECT_EQ(opened.header.match_id, h.match_id);
    EXPECT_EQ(opened.header.client_id, h.client_id);
  }
}

// Brute force over every candidate with the same low 16 bits: the nearest to the newest received (ties
// to the later), never 0; for the ack, the largest not beyond the newest sent.
TEST(PacketTest, ReconstructionMatchesBruteForce) {
  std::mt19937 rng(23);
  const auto check = [](std::uint64_t newest, std::uint16_t low) {
    std::uint64_t best = 0;
    std::uint64_t best_distance = ~0ull;
    const std::uint64_t first = newest > 3 * 65536 ? newest - 3 * 65536 : 0;
    for (std::uint64_t c = first + ((low - first) & 0xFFFF); c <= newest + 3 * 65536; c += 65536) {
      if (c == 0) continue;
      const std::uint64_t distance = c > newest ? c - newest : newest - c;
      // Ties (exactly 32768 away) go to the one behind, as the signed 16-bit distance does.
      if (distance < best_distance || (distance == best_distance && c < best)) {
        best = c;
        best_distance = distance;
      }
    }
    EXPECT_EQ(reconstruct_sequence(newest, low), best) << newest << " " << low;
    std::optional<std::uint64_t> ack;
    for (std::uint64_t c = first + ((low - first) & 0xFFFF); c <= newest; c += 65536)
      if (c != 0) ack = c;
    EXPECT_EQ(reconstruct_ack(newest, low), ack) << newest << " " << low;
  };
  for (std::uint64_t newest :
       {0ull, 1ull, 2ull, 32767ull, 32768ull, 32769ull, 65535ull, 65536ull, 65537ull, 70000ull, 1ull << 40})
    for (std::uint32_t low : {0u, 1u, 2u, 4470u, 32767u, 32768u, 32769u, 65535u})
      check(newest, static_cast<std::uint16_t>(low));
  for (int i = 0; i < 20000; ++i)
    check(rng() % (1u << 22), static_cast<std::uint16_t>(rng()));
}

TEST(PacketTest, LargestPayloadFitsADatagram) {
  const Bytes message(kMaxDatagramBytes - kPacketOverheadBytes, 0);
  EXPECT_LE(
      seal_packet({7, 1001, 42, 40, 0x00010203}, Direction::kServerToClient, filled_key(1), message).size(),
      kMaxDatagramBytes);
}

TEST(PacketTest, WrongKeyDirectionOrConnectionFails) {
  const Key key = filled_key(5);
  const Bytes d = seal_packet(kHeader, Direction::kClientToServer, key, keep_alive_message(1));
  EXPECT_EQ(open_packet(d, Direction::kClientToServer, key, kIdentity, kContext).error, wire::ErrorCode::Ok);
  EXPECT_EQ(open_packet(d, Direction::kServerToClient, key, kIdentity, kContext).error,
            wire::ErrorCode::DecryptFailed);
  EXPECT_EQ(open_packet(d, Direction::kClientToServer, filled_key(6), kIdentity, kContext).error,
            wire::ErrorCode::DecryptFailed);
  EXPECT_EQ(open_packet(d, Direction::kClientToServer, key, {8, 1001}, kContext).error,
            wire::ErrorCode::DecryptFailed);
  EXPECT_EQ(open_packet(d, Direction::kClientToServer, key, {7, 1002}, kContext).error,
            wire::ErrorCode::DecryptFailed);
  const OpenedPacket failed = open_packet(d, Direction::kClientToServer, filled_key(6), kIdentity, kContext);
  EXPECT_TRUE(failed.message.empty());
}

// A receiver whose view is 2^16 off (it missed that many packets) reconstructs another sequence or ack:
// the associated data differ, so the packet does not authenticate.
TEST(PacketTest, AWrongReconstructionDoesNotAuthenticate) {
  const Key key = filled_key(7);
  const Bytes d = seal_packet(kHeader, Direction::kClientToServer, key, keep_alive_message(1));
  EXPECT_EQ(open_packet(d, Direction::kClientToServer, key, kIdentity, {41 + 65536, 45 + 65536}).error,
            wire::ErrorCode::DecryptFailed);
  EXPECT_EQ(open_packet(d, Direction::kClientToServer, key, kIdentity, {41, 45 + 65536}).error,
            wire::ErrorCode::DecryptFailed);
  // An ack naming nothing sent yet cannot be reconstructed at all.
  EXPECT_EQ(open_packet(d, Direction::kClientToServer, key, kIdentity, {41, 39}).error,
            wire::ErrorCode::Malformed);
}

TEST(PacketTest, EveryFlippedBitIsCaught) {
  const Key key = filled_key(9);
  const Bytes message = keep_alive_message(1000);
  const Bytes datagram =
      seal_packet({7, 1001, 42, 40, 0x7FFFFFFFu}, Direction::kServerToClient, key, message);
  for (std::size_t i = 0; i < datagram.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      Bytes tampered = datagram;
      tampered[i] ^= static_cast<std::uint8_t>(1u << bit);
      const OpenedPacket opened = open_packet(tampered, Direction::kServerToClient, key, kIdentity, kContext);
      EXPECT_NE(opened.error, wire::ErrorCode::Ok) << i << " " << bit;
    }
  }
}

// Every form a conforming sender never writes is refused before any crypto.
TEST(PacketTest, NonCanonicalHeadersAndShortDatagramsAreMalformed) {
  const Key key = filled_key(2);
  const auto open = [&](const Bytes& d) {
    return open_packet(d, Direction::kClientToServer, key, kIdentity, kContext).error;
  };
  const Bytes good = seal_packet(kHeader, Direction::kClientToServer, key, keep_alive_message(3));
  ASSERT_EQ(open(good), wire::ErrorCode::Ok);
  for (std::size_t n = 0; n < 5 + 1 + 1 + kMacBytes; ++n)  // the header, then nothing or only a tag
    EXPECT_EQ(open(Bytes(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(std::min(n, good.size())))),
              wire::ErrorCode::Malformed)
        << n;
  Bytes reserved = good;
  reserved[0] |= 0x80;
  EXPECT_EQ(open(reserved), wire::ErrorCode::Malformed);
  // Ack-bits bytes flagged without an ack.
  Bytes no_ack = seal_packet({7, 1001, 42, 0, 0}, Direction::kClientToServer, key, keep_alive_message(3));
  ASSERT_EQ(open(no_ack), wire::ErrorCode::Ok);
  no_ack[0] |= 0x08;
  EXPECT_EQ(open(no_ack), wire::ErrorCode::Malformed);
  // A 0xFF ack-bits byte sent instead of omitted.
  Bytes explicit_ff =
      seal_packet({7, 1001, 42, 40, 0xFFFFFFFFu}, Direction::kClientToServer, key, keep_alive_message(3));
  explicit_ff[0] |= 0x08;
  explicit_ff.insert(explicit_ff.begin() + 5, std::uint8_t{0xFF});
  EXPECT_EQ(open(explicit_ff), wire::ErrorCode::Malformed);
  // The first byte tells the forms apart.
  EXPECT_EQ(datagram_form(Bytes{}), DatagramForm::kInvalid);
  EXPECT_EQ(datagram_form(Bytes{0x10, 0, 0, 0}), DatagramForm::kEnvelope);
  EXPECT_EQ(datagram_form(Bytes{0x02}), DatagramForm::kInvalid);
  EXPECT_EQ(datagram_form(Bytes{0x03}), DatagramForm::kInvalid);
  EXPECT_EQ(open(Bytes(good.size(), 0x10)), wire::ErrorCode::Malformed);
  EXPECT_EQ(peek_sequence_low_bits(good), std::optional<std::uint16_t>(42));
  EXPECT_EQ(peek_sequence_low_bits(Bytes{0x10, 42, 0}), std::nullopt);
}

// The receive path as a connection runs it: authenticate, then the replay window.
TEST(PacketTest, ReplayedSequenceIsRefusedByTheWindow) {
  const Key key = filled_key(11);
  std::vector<Bytes> sent;
  for (std::uint64_t s = 1; s <= 10; ++s) {
    sent.push_back(seal_packet({7, 1001, s, 0, 0}, Direction::kClientToServer, key, keep_alive_message(s)));
  }
  ReceiveWindow window;
  const auto deliver = [&](const Bytes& datagram) {
    const OpenedPacket opened =
        open_packet(datagram, Direction::kClientToServer, key, kIdentity, {window.ack(), 0});
    if (opened.error != wire::ErrorCode::Ok) return opened.error;
    return window.accept(opened.header.sequence) ? wire::ErrorCode::Ok : wire::ErrorCode::DuplicatePacket;
  };
  for (std::size_t i : {0u, 2u, 1u, 5u})
    EXPECT_EQ(deliver(sent[i]), wire::ErrorCode::Ok) << i;
  for (std::size_t i : {0u, 1u, 2u, 5u})
    EXPECT_EQ(deliver(sent[i]), wire::ErrorCode::DuplicatePacket) << i;
  EXPECT_EQ(deliver(sent[3]), wire::ErrorCode::Ok);
  EXPECT_EQ(window.ack(), 6u);
  EXPECT_EQ(window.ack_bits(), 0b11110u);  // 5 missing, then 4, 3, 2, 1 (6 is the ack itself)
}

}  // namespace
}  // namespace shiftcast
