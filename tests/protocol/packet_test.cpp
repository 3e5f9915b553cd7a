#include "protocol/packet.hpp"

#include <gtest/gtest.h>

#include <random>

#include "protocol/envelope.hpp"
#include "protocol/input_codec.hpp"
#include "protocol/sequence_window.hpp"
#include "protocol/wire_constants.hpp"

namespace shiftcast {
namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes keep_alive_envelope(std::uint64_t tick) {
  flatbuffers::FlatBufferBuilder fbb;
  const auto body = wire::CreateKeepAlive(fbb, tick);
  finish_envelope(fbb, wire::Message::KeepAlive, body.Union());
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

Bytes client_frame_envelope(std::uint64_t first_command) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<wire::InputCommand> commands;
  for (std::uint64_t i = 0; i < kCommandsPerFrame; ++i) {
    commands.emplace_back(first_command - i, 10.5, 1.0f, -1.0f, 0.25f, 0.0f, 1);
  }
  BitWriter packed;
  write_client_commands(packed, {commands, 12});
  const auto body =
      wire::CreateClientFrame(fbb, fbb.CreateVector(packed.bytes().data(), packed.bytes().size()));
  finish_envelope(fbb, wire::Message::ClientFrame, body.Union());
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

// Bytes off the wire, verified as an Envelope{Packet}.
struct Received {
  Bytes bytes;
  const wire::Packet* packet = nullptr;
  wire::ErrorCode error = wire::ErrorCode::Ok;
};

Received receive(Bytes datagram) {
  Received r{std::move(datagram)};
  const EnvelopeView view = verify_envelope(r.bytes, kMaxDatagramBytes);
  r.error = view.error;
  if (view.envelope) r.packet = view.envelope->message_as_Packet();
  return r;
}

Key filled_key(std::uint8_t value) {
  Key key;
  key.fill(value);
  return key;
}

constexpr PacketHeader kHeader{7, 1001, 42, 40, 0x80000003u};

TEST(PacketTest, AssociatedDataLayout) {
  const PacketHeader header{0x04030201, 0x0c0b0a0908070605, 0x14131211100f0e0d, 0x1c1b1a1918171615,
                            0x201f1e1d};
  const Bytes expected{'S',  'H',  'C',  '1',  0x03, 0x00, 0x01, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06,
                       0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13,
                       0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f, 0x20};
  EXPECT_EQ(packet_associated_data(header, Direction::kServerToClient), expected);
  auto c2s = expected;
  c2s[6] = 0x00;
  EXPECT_EQ(packet_associated_data(header, Direction::kClientToServer), c2s);
}

TEST(PacketTest, SealOpenRoundTrip) {
  ASSERT_TRUE(crypto_init());
  const Key key = random_key();
  for (const Bytes& inner : {keep_alive_envelope(99), client_frame_envelope(500)}) {
    const auto r = receive(seal_packet(kHeader, Direction::kClientToServer, key, inner));
    ASSERT_EQ(r.error, wire::ErrorCode::Ok);
    ASSERT_NE(r.packet, nullptr);
    EXPECT_LE(r.bytes.size(), inner.size() + kPacketOverheadBytes);
    EXPECT_EQ(r.packet->sequence(), kHeader.sequence);
    EXPECT_EQ(r.packet->ack(), kHeader.ack);
    EXPECT_EQ(r.packet->ack_bits(), kHeader.ack_bits);
    const OpenedPacket opened = open_packet(*r.packet, Direction::kClientToServer, key);
    ASSERT_EQ(opened.error, wire::ErrorCode::Ok);
    EXPECT_EQ(opened.inner, inner);
    EXPECT_EQ(opened.header.match_id, kHeader.match_id);
    EXPECT_EQ(opened.header.client_id, kHeader.client_id);
    EXPECT_EQ(opened.header.sequence, kHeader.sequence);
    ASSERT_NE(opened.inner_envelope(), nullptr);
  }
  const auto r = receive(seal_packet(kHeader, Direction::kServerToClient, key, keep_alive_envelope(77)));
  const OpenedPacket opened = open_packet(*r.packet, Direction::kServerToClient, key);
  ASSERT_NE(opened.inner_envelope(), nullptr);
  ASSERT_NE(opened.inner_envelope()->message_as_KeepAlive(), nullptr);
  EXPECT_EQ(opened.inner_envelope()->message_as_KeepAlive()->tick(), 77u);
}

TEST(PacketTest, LargestPayloadFitsADatagram) {
  const Bytes inner(kMaxDatagramBytes - kPacketOverheadBytes, 0);
  EXPECT_LE(seal_packet(kHeader, Direction::kServerToClient, filled_key(1), inner).size(), kMaxDatagramBytes);
}

TEST(PacketTest, WrongKeyOrDirectionFails) {
  const Key key = filled_key(5);
  const auto r = receive(seal_packet(kHeader, Direction::kClientToServer, key, keep_alive_envelope(1)));
  EXPECT_EQ(open_packet(*r.packet, Direction::kServerToClient, key).error, wire::ErrorCode::DecryptFailed);
  EXPECT_EQ(open_packet(*r.packet, Direction::kClientToServer, filled_key(6)).error,
            wire::ErrorCode::DecryptFailed);
  const OpenedPacket failed = open_packet(*r.packet, Direction::kClientToServer, filled_key(6));
  EXPECT_TRUE(failed.inner.empty());
  EXPECT_EQ(failed.inner_envelope(), nullptr);
}

TEST(PacketTest, EveryChangedHeaderFieldFails) {
  const Key key = filled_key(8);
  const Bytes inner = keep_alive_envelope(3);
  const auto sealed_packet = receive(seal_packet(kHeader, Direction::kClientToServer, key, inner));
  const Bytes sealed(sealed_packet.packet->sealed()->begin(), sealed_packet.packet->sealed()->end());
  for (int field = 0; field < 5; ++field) {
    PacketHeader h = kHeader;
    if (field == 0) h.match_id ^= 1;
    if (field == 1) h.client_id ^= 1;
    if (field == 2) h.sequence += 1;
    if (field == 3) h.ack += 1;
    if (field == 4) h.ack_bits ^= 1u << 20;
    flatbuffers::FlatBufferBuilder fbb;
    const auto body =
        wire::CreatePacketDirect(fbb, h.match_id, h.client_id, h.sequence, h.ack, h.ack_bits, &sealed);
    finish_envelope(fbb, wire::Message::Packet, body.Union());
    const auto r = receive({fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()});
    EXPECT_EQ(open_packet(*r.packet, Direction::kClientToServer, key).error, wire::ErrorCode::DecryptFailed)
        << field;
  }
}

TEST(PacketTest, EveryFlippedByteIsCaughtOrHarmless) {
  const Key key = filled_key(9);
  const Bytes inner = client_frame_envelope(1000);
  const Bytes datagram = seal_packet(kHeader, Direction::kServerToClient, key, inner);
  int caught = 0;
  for (std::size_t i = 0; i < datagram.size(); ++i) {
    for (std::uint8_t flip : {0x01, 0x80}) {
      Bytes tampered = datagram;
      tampered[i] ^= flip;
      const auto r = receive(tampered);
      if (r.error != wire::ErrorCode::Ok || r.packet == nullptr) {
        ++caught;
        continue;
      }
      const OpenedPacket opened = open_packet(*r.packet, Direction::kServerToClient, key);
      if (opened.error != wire::ErrorCode::Ok) {
        ++caught;
        continue;
      }
      // Accepted only when the flip hit a byte that means nothing (alignment padding): same header,
      // same payload.
      EXPECT_EQ(opened.inner, inner) << i;
      EXPECT_EQ(opened.header.sequence, kHeader.sequence) << i;
      EXPECT_EQ(opened.header.ack, kHeader.ack) << i;
      EXPECT_EQ(opened.header.ack_bits, kHeader.ack_bits) << i;
      EXPECT_EQ(opened.header.client_id, kHeader.client_id) << i;
      EXPECT_EQ(opened.header.match_id, kHeader.match_id) << i;
    }
  }
  EXPECT_GT(caught, static_cast<int>(datagram.size()));
}

TEST(PacketTest, ShortOrMissingSealedFails) {
  const Key key = filled_key(2);
  for (std::size_t length : {0u, 1u, 15u}) {
    const Bytes sealed(length, 0);
    flatbuffers::FlatBufferBuilder fbb;
    const auto body = wire::CreatePacketDirect(fbb, 7, 1001, 1, 0, 0, &sealed);
    finish_envelope(fbb, wire::Message::Packet, body.Union());
    const auto r = receive({fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()});
    EXPECT_EQ(open_packet(*r.packet, Direction::kClientToServer, key).error, wire::ErrorCode::DecryptFailed);
  }
  flatbuffers::FlatBufferBuilder fbb;
  const auto body = wire::CreatePacket(fbb, 7, 1001, 1);
  finish_envelope(fbb, wire::Message::Packet, body.Union());
  const auto r = receive({fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()});
  EXPECT_EQ(open_packet(*r.packet, Direction::kClientToServer, key).error, wire::ErrorCode::DecryptFailed);
}

TEST(PacketTest, AuthenticButMalformedInnerReportsTheVerifyError) {
  const Key key = filled_key(4);
  std::mt19937 rng(8);
  Bytes garbage(100);
  for (auto& b : garbage)
    b = static_cast<std::uint8_t>(rng());
  auto r = receive(seal_packet(kHeader, Direction::kClientToServer, key, garbage));
  const auto err = open_packet(*r.packet, Direction::kClientToServer, key).error;
  EXPECT_TRUE(err == wire::ErrorCode::Malformed || err == wire::ErrorCode::WrongIdentifier) << to_string(err);

  flatbuffers::FlatBufferBuilder fbb;
  const auto body = wire::CreateKeepAlive(fbb, 1);
  wire::FinishEnvelopeBuffer(
      fbb, wire::CreateEnvelope(fbb, kProtocolVersion + 1, 0, wire::Message::KeepAlive, body.Union()));
  r = receive(seal_packet(kHeader, Direction::kClientToServer, key, {fbb.GetBufferPointer(), fbb.GetSize()}));
  const OpenedPacket opened = open_packet(*r.packet, Direction::kClientToServer, key);
  EXPECT_EQ(opened.error, wire::ErrorCode::WrongVersion);
  EXPECT_EQ(opened.inner_envelope(), nullptr);
}

// The receive path as a connection runs it: authenticate, then the replay window.
TEST(PacketTest, ReplayedSequenceIsRefusedByTheWindow) {
  const Key key = filled_key(11);
  std::vector<Bytes> sent;
  for (std::uint64_t s = 1; s <= 10; ++s) {
    PacketHeader h = kHeader;
    h.sequence = s;
    sent.push_back(seal_packet(h, Direction::kClientToServer, key, keep_alive_envelope(s)));
  }
  ReceiveWindow window;
  const auto deliver = [&](const Bytes& datagram) {
    const auto r = receive(datagram);
    const OpenedPacket opened = open_packet(*r.packet, Direction::kClientToServer, key);
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
