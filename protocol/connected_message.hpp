// The one message a connected packet seals (protocol version 4): a kind byte, then the kind's fields as
// LEB128 varints, a flags byte and length-prefixed sections that hold the bit streams (the entity block,
// the own state, the contact events, the input commands). No FlatBuffers tables, so a frame's framing is
// a few bytes rather than a few hundred. docs/protocol.md, "5. Packet".
//
//   std::vector<std::uint8_t> m;
//   write_server_frame(m, frame);                          // server; then seal_packet(..., m)
//   ReadMessage r = read_connected_message(opened.message);  // client: spans point into opened.message
//   if (r.error == Ok && r.message.kind == MessageKind::kServerFrame) use(r.message.server_frame);
//
// Reading checks everything (shortest-form varints, flags, section lengths, nothing trailing) and
// returns Malformed, or UnexpectedMessage for an unknown kind; it never trusts a length.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "protocol/session_info.hpp"
#include "protocol/shiftcast_generated.h"

namespace shiftcast {

enum class MessageKind : std::uint8_t { kClientFrame = 0, kServerFrame = 1, kKeepAlive = 2, kDisconnect = 3 };

using ByteSpan = std::span<const std::uint8_t>;

struct SnapshotSection {
  std::uint64_t baseline_tick = 0;  // 0: against the empty state; else below the frame's tick
  std::uint32_t own_entity = 0;
  bool complete = true;
  ByteSpan block;  // the entity block (protocol/entity_block.hpp), never empty
};

struct ServerFrameMessage {
  std::uint64_t tick = 0;  // also the snapshot's tick
  std::uint64_t input_ack = 0;
  std::optional<SnapshotSection> snapshot;
  std::optional<ByteSpan> own;     // the own state (protocol/own_state_codec.hpp), never empty
  std::optional<ByteSpan> events;  // the contact events (protocol/contact_event_codec.hpp), never empty
};

struct KeepAliveMessage {
  std::uint64_t tick = 0;
  std::uint64_t events_received = 0;  // client to server; 0 acknowledges nothing
  std::optional<SessionInfoFields> session;
};

struct ConnectedMessage {
  MessageKind kind = MessageKind::kKeepAlive;
  ByteSpan commands;  // ClientFrame: the commands bit stream (protocol/input_codec.hpp); empty: none
  ServerFrameMessage server_frame;
  KeepAliveMessage keep_alive;
  wire::ErrorCode disconnect_code = wire::ErrorCode::Ok;
};

struct ReadMessage {
  wire::ErrorCode error = wire::ErrorCode::Ok;  // Malformed, UnexpectedMessage
  ConnectedMessage message;
};
ReadMessage read_connected_message(ByteSpan plaintext);

// Each appends one message to `out`. Sections are written as given: an empty span given as present is
// the caller's bug (the reader refuses it).
void write_client_frame(std::vector<std::uint8_t>& out, ByteSpan commands);
void write_server_frame(std::vector<std::uint8_t>& out, const ServerFrameMessage& frame);
void write_keep_alive(std::vector<std::uint8_t>& out, const KeepAliveMessage& keep_alive);
void write_disconnect(std::vector<std::uint8_t>& out, wire::ErrorCode code);

// A ServerFrame's bytes other than its sections' content, at most: kind, tick, input_ack, flags, the
// snapshot's baseline and entity, and three section lengths below 16384.
inline constexpr std::size_t kServerFrameOverheadBytes = 1 + 10 + 10 + 1 + 10 + 5 + 3 * 2;

}  // namespace shiftcast
