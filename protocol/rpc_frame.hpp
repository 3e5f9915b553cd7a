// RPC framing over TCP: a 4-byte little-endian length, then that many bytes of one Envelope.
//
//   FrameReader reader;                             // one per connection
//   reader.feed(received_bytes);
//   while (auto frame = reader.next()) { ... verify_envelope(*frame, kMaxRpcFrameBytes) ... }
//   if (reader.error() != wire::ErrorCode::Ok) close_connection();   // a length over the limit
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "protocol/shiftcast_generated.h"
#include "protocol/wire_constants.hpp"

namespace shiftcast {

// Appends the prefix and the payload to `out`.
void append_frame(std::vector<std::uint8_t>& out, std::span<const std::uint8_t> payload);

class FrameReader {
 public:
  explicit FrameReader(std::size_t max_frame_bytes = kMaxRpcFrameBytes) : max_(max_frame_bytes) {}
  void feed(std::span<const std::uint8_t> bytes);
  // The next complete frame's payload (valid until the next feed or next call), or nothing yet. The
  // payload is 8-byte aligned, so FlatBuffers structs with 64-bit fields can be read in place. After a
  // length over the limit (or zero) the reader stops for good: error() is TooLarge (or Malformed).
  std::optional<std::span<const std::uint8_t>> next();
  wire::ErrorCode error() const { return error_; }
  std::size_t buffered() const { return buffer_.size() - read_; }

 private:
  std::size_t max_;
  std::vector<std::uint8_t> buffer_;
  std::size_t read_ = 0;
  std::vector<std::uint8_t> aligned_;  // a frame copied out when it sits misaligned in buffer_
  wire::ErrorCode error_ = wire::ErrorCode::Ok;
};

}  // namespace shiftcast
