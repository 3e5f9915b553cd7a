// Envelope: the one root message of the wire (protocol/shiftcast.fbs). Every inbound buffer, UDP or
// TCP, goes through verify_envelope before anything reads it; every outbound one is finished by
// finish_envelope so the identifier and version are always written the same way.
//
//   EnvelopeView v = verify_envelope(bytes);
//   if (v.error != wire::ErrorCode::Ok) { count(v.error); return; }   // a typed reason, never a crash
//   if (auto* req = v.envelope->message_as_RaycastRequest()) ...
//
//   flatbuffers::FlatBufferBuilder fbb;
//   auto body = wire::CreateKeepAlive(fbb, tick);
//   finish_envelope(fbb, wire::Message::KeepAlive, body.Union(), request_id);
//   std::span<const std::uint8_t> out{fbb.GetBufferPointer(), fbb.GetSize()};
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "protocol/shiftcast_generated.h"

namespace shiftcast {

struct EnvelopeView {
  const wire::Envelope* envelope = nullptr;  // valid while the verified bytes are
  wire::ErrorCode error = wire::ErrorCode::Ok;
};

// Checks, in order: size within `max_bytes` (TooLarge), the file identifier (WrongIdentifier, also for
// buffers too short to hold one: Malformed), the FlatBuffers verifier (Malformed), the version
// (WrongVersion), that a message is present, and that its vectors of 8-byte structs (commands, contact
// events) are 8-byte aligned, as readers take them in place (Malformed).
EnvelopeView verify_envelope(std::span<const std::uint8_t> bytes, std::size_t max_bytes);

void finish_envelope(flatbuffers::FlatBufferBuilder& fbb, wire::Message type,
                     flatbuffers::Offset<void> message, std::uint64_t request_id = 0);

const char* to_string(wire::ErrorCode code);

// Counters indexed by ErrorCode: why datagrams or requests were refused.
inline constexpr std::size_t kErrorCodeCount = static_cast<std::size_t>(wire::ErrorCode::MAX) + 1;
using ErrorCounters =
    std::array<std::uint64_t, kErrorCodeCount>;  // "token_expired", "rate_limited", ...: metric labels

}  // namespace shiftcast
