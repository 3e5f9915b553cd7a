// Connected packets (protocol version 4): once a client is connected, every datagram either way is a
// 3- to 9-byte header in the clear and one sealed message (protocol/connected_message.hpp). The header
// carries only the low 16 bits of the packet's sequence and ack, the ack bits without their 0xFF bytes,
// and no ids at all: the server finds the connection by the source address, and both ends put the full
// values (match, client, sequence, ack, ack bits) in the associated data, so a packet whose short fields
// were reconstructed wrongly, or that was sealed for another connection, does not authenticate.
// docs/protocol.md, "5. Packet".
//
//   std::vector<std::uint8_t> d = seal_packet(header, Direction::kServerToClient, s2c_key, message);
//   OpenedPacket p = open_packet(d, Direction::kServerToClient, s2c_key, ids, {replay.ack(), sent});
//   if (p.error == Ok) { read_connected_message(p.plaintext) ... }
//
// ChaCha20-Poly1305-IETF under the direction's key; the nonce is the full sequence.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "protocol/crypto.hpp"
#include "protocol/shiftcast_generated.h"

namespace shiftcast {

enum class Direction : std::uint8_t { kClientToServer = 0, kServerToClient = 1 };

// Full values: what the associated data holds.
struct PacketHeader {
  std::uint32_t match_id = 0;
  std::uint64_t client_id = 0;
  std::uint64_t sequence = 0;
  std::uint64_t ack = 0;  // 0: nothing received from the peer yet (then ack_bits is 0 too)
  std::uint32_t ack_bits = 0;
};

// The connection the packet belongs to: not sent, known to both ends.
struct PacketIdentity {
  std::uint32_t match_id = 0;
  std::uint64_t client_id = 0;
};

// What the receiver reconstructs the 16-bit sequence and ack against.
struct SequenceContext {
  std::uint64_t newest_received = 0;  // the newest authentic sequence from the peer (0: none)
  std::uint64_t newest_sent = 0;      // the newest sequence this side sent (0: none)
};

// The first byte tells a connected packet (low two bits 01) from a FlatBuffers Envelope (00: the low
// byte of its root offset, which is a multiple of 4); 10 and 11 are neither.
enum class DatagramForm : std::uint8_t { kEnvelope, kConnectedPacket, kInvalid };
DatagramForm datagram_form(std::span<const std::uint8_t> datagram);

inline constexpr std::size_t kPacketHeaderMaxBytes = 9;  // prefix, sequence, ack, four ack-bits bytes
// What the header and the tag add to a message, at most.
inline constexpr std::size_t kPacketOverheadBytes = kPacketHeaderMaxBytes + kMacBytes;

// "SHC1" || version u16 || direction u8 || match_id u32 || client_id u64 || sequence u64 || ack u64 ||
// ack_bits u32, little-endian: 39 bytes.
std::vector<std::uint8_t> packet_associated_data(const PacketHeader& header, Direction direction);

// The whole datagram: header.size() + message.size() + 16 bytes. The caller keeps the message within
// kMaxDatagramBytes - kPacketOverheadBytes.
std::vector<std::uint8_t> seal_packet(const PacketHeader& header, Direction direction, const Key& key,
                                      std::span<const std::uint8_t> message);

// The full sequence whose low 16 bits are `low` nearest to `newest_received` (never 0), and the
// newest sequence up to `newest_sent` with those low bits (nothing when none is >= 1).
std::uint64_t reconstruct_sequence(std::uint64_t newest_received, std::uint16_t low);
std::optional<std::uint64_t> reconstruct_ack(std::uint64_t newest_sent, std::uint16_t low);

// The low 16 bits of a connected packet's sequence, read without opening it (nothing when the datagram
// is not a connected packet): what recognises a copy of a goodbye after the keys are gone.
std::optional<std::uint16_t> peek_sequence_low_bits(std::span<const std::uint8_t> datagram);

struct OpenedPacket {
  // Malformed (the header is not canonical, or its ack names nothing sent), DecryptFailed.
  wire::ErrorCode error = wire::ErrorCode::Ok;
  PacketHeader header;                // full values, once opened
  std::vector<std::uint8_t> message;  // the authenticated plaintext: read_connected_message's input
};
OpenedPacket open_packet(std::span<const std::uint8_t> datagram, Direction direction, const Key& key,
                         const PacketIdentity& identity, const SequenceContext& context);

}  // namespace shiftcast
