// The numbers both ends of the wire must agree on. docs/protocol.md is the written standard; the
// schema is protocol/shiftcast.fbs. Change a value here only together with kProtocolVersion.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace shiftcast {

// 2: the snapshot's entities as a bit-packed block against the baseline (issue 15).
// 3: contact events bit-packed (ServerFrame.events_packed), and lean input commands (issue 15).
// 4: the connected packet is no longer FlatBuffers: a 3- to 9-byte header and a sealed, byte-packed
//    message (protocol/packet.hpp, protocol/connected_message.hpp; issue 15).
// 5: the entity block is encoded against the baseline's prediction (protocol/entity_prediction.hpp):
//    entities are extrapolated from the baseline and the snapshot it was decoded against; contact
//    events quantized (protocol/contact_event_codec.hpp) (issue 15).
// 6: a player's yaw in 1/2048 turn and the entity block's change bits kind first; the own state's
//    position relative to the snapshot's own entity (protocol/own_state_codec.hpp) (issue 15).
inline constexpr std::uint16_t kProtocolVersion = 6;
inline constexpr char kFileIdentifier[] = "SHC1";  // Envelope's FlatBuffers file_identifier

// UDP: one datagram = one Envelope (the handshake) or one connected packet, never larger than this (fits
// every path MTU in practice).
inline constexpr std::size_t kMaxDatagramBytes = 1200;

// Where one datagram is received: one byte more than the largest, so an oversized datagram is seen as
// such rather than cut to fit, rounded up to 16 bytes and aligned to 16. FlatBuffers reads a received
// datagram in place with 4- and 8-byte loads; buffers packed side by side at 1,201 bytes would put every
// other datagram at an odd address (undefined behaviour, which UBSan stops the server for).
inline constexpr std::size_t kDatagramBufferBytes = (kMaxDatagramBytes + 1 + 15) / 16 * 16;
struct alignas(16) DatagramBuffer {
  std::array<std::uint8_t, kDatagramBufferBytes> bytes{};
  std::uint8_t* data() { return bytes.data(); }
  const std::uint8_t* data() const { return bytes.data(); }
  static constexpr std::size_t size() { return kDatagramBufferBytes; }
};
// Pre-connection requests (ConnectionRequest, ChallengeResponse) are padded to at least this, so a
// challenge (smaller) never amplifies traffic towards a spoofed address.
inline constexpr std::size_t kMinRequestBytes = 1000;
// TCP RPC: 4-byte little-endian length prefix, then an Envelope of at most this many bytes.
inline constexpr std::size_t kRpcPrefixBytes = 4;
inline constexpr std::size_t kMaxRpcFrameBytes = 1u << 20;

inline constexpr std::size_t kKeyBytes = 32;         // every symmetric key
inline constexpr std::size_t kTokenNonceBytes = 24;  // XChaCha20-Poly1305 nonces (tokens, challenges)
inline constexpr std::size_t kMacBytes = 16;         // Poly1305 tag

// Snapshot quantization: positions in 1/16 units, yaw in 1/65536 turns.
inline constexpr float kPositionQuantum = 1.0f / 16.0f;
inline constexpr int kCommandsPerFrame = 3;  // ClientFrame carries the newest command and the 2 before

// --- The handshake, keep-alives, goodbyes and limits: docs/protocol.md, "Limits", has one row each. ---

// Snapshot baselines, counted in ticks: the server encodes against a baseline only while
// `tick - baseline_tick < kSnapshotHistory`, else against the empty state. A client keeps its newest
// kSnapshotHistory snapshots: at most one snapshot a tick, so they cover every baseline the server uses.
inline constexpr std::size_t kSnapshotHistory = 64;
// A connect token is valid for at most this long from its issue (IssueConnectToken.valid_seconds).
inline constexpr std::uint32_t kMaxTokenValidSeconds = 3600;
// Props one CreateMatch may ask for.
inline constexpr int kMaxPropsPerMatch = 512;
// The server answers a ChallengeResponse only this long (whole unix seconds) after it opened the
// request the challenge answered, and never past the token's expiry; later: ChallengeInvalid. The
// server keeps no state for a pending handshake: this is how one that never completes expires.
inline constexpr std::uint64_t kChallengeLifetimeSeconds = 10;
// A client gives up a handshake that has not connected this long after it first sent its request
// (ClientSessionSettings::handshake_timeout's default), resending its current step at this pace.
inline constexpr double kHandshakeTimeoutSeconds = 5;
inline constexpr double kHandshakeResendInterval = 0.1;
// A goodbye (Disconnect) is one packet, one sequence, sent this many times back to back by either side.
inline constexpr int kGoodbyeCopies = 3;
// After a client's goodbye closed its connection, a copy of that goodbye arriving this long after is
// still counted as DuplicatePacket (later: UnknownConnection, as any packet for no connection).
inline constexpr double kGoodbyeGraceSeconds = 2;

}  // namespace shiftcast
