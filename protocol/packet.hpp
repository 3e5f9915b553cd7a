// Connected packets: Envelope{Packet} whose header travels in the clear but authenticated, and whose
// payload (an inner Envelope: ClientFrame, ServerFrame, KeepAlive or Disconnect) is sealed with
// ChaCha20-Poly1305-IETF under the direction's key, nonce = the packet's sequence.
//
//   std::vector<std::uint8_t> d = seal_packet(header, Direction::kServerToClient, s2c_key, inner_bytes);
//   OpenedPacket p = open_packet(*envelope->message_as_Packet(), Direction::kClientToServer, c2s_key);
//   if (p.error == Ok) { p.inner_envelope()->message_as_ClientFrame() ... }
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "protocol/crypto.hpp"
#include "protocol/shiftcast_generated.h"

namespace shiftcast {

enum class Direction : std::uint8_t { kClientToServer = 0, kServerToClient = 1 };

struct PacketHeader {
  std::uint32_t match_id = 0;
  std::uint64_t client_id = 0;
  std::uint64_t sequence = 0;
  std::uint64_t ack = 0;
  std::uint32_t ack_bits = 0;
};

// "SHC1" || version u16 || direction u8 || match_id u32 || client_id u64 || sequence u64 || ack u64 ||
// ack_bits u32, little-endian: 39 bytes.
std::vector<std::uint8_t> packet_associated_data(const PacketHeader& header, Direction direction);

// The whole datagram. The caller keeps it within kMaxDatagramBytes (the sealed payload adds 16 bytes,
// the header about 80: kPacketOverheadBytes bounds both).
inline constexpr std::size_t kPacketOverheadBytes = 128;
std::vector<std::uint8_t> seal_packet(const PacketHeader& header, Direction direction, const Key& key,
                                      std::span<const std::uint8_t> inner_envelope);

struct OpenedPacket {
  wire::ErrorCode error = wire::ErrorCode::Ok;  // DecryptFailed, or the inner envelope's verify error
  PacketHeader header;
  std::vector<std::uint8_t> inner;  // the opened, verified inner Envelope
  const wire::Envelope* inner_envelope() const;
};
OpenedPacket open_packet(const wire::Packet& packet, Direction direction, const Key& key);

}  // namespace shiftcast
