// What the fuzz targets share: fixed keys and addresses (no randomness but libFuzzer's own), a cursor
// that splits one input into fields, and the one way a target reports a broken promise.
//
//   extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
//     fuzz::Input in(data, size);
//     const std::uint8_t mode = in.u8();
//     ...
//     fuzz::require(result.error != Ok || invariant_holds, "what the decoder promised");
//   }
//
// A target's oracle is the decoder's documented contract (errors as values, never a crash, a hang or a
// result that breaks its own invariants); require() aborts, which libFuzzer reports as a crash with the
// input saved.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#include "protocol/crypto.hpp"
#include "tests/support/fixed_keys.hpp"

namespace shiftcast::fuzz {

inline constexpr char kServerAddress[] = "127.0.0.1:40000";
inline constexpr char kClientAddress[] = "10.0.0.7:5000";
inline constexpr std::uint32_t kMatch = 7;
inline constexpr std::uint64_t kClient = 42;
// "Now" for every target, in unix seconds; the fixed tokens expire an hour later.
inline constexpr std::uint64_t kNowUnix = 1'700'000'000;
inline constexpr std::uint64_t kTokenExpiry = kNowUnix + 3600;

// The token, challenge and packet keys every target uses.
inline const Key kTokenKey = fixed_key(1);
inline const Key kClientToServerKey = fixed_key(3);
inline const Key kServerToClientKey = fixed_key(4);
inline const Key kChallengeKey = fixed_key(5);

[[noreturn]] inline void fail(const char* what) {
  std::fprintf(stderr, "fuzz target: broken promise: %s\n", what);
  std::abort();
}

inline void require(bool condition, const char* what) {
  if (!condition) fail(what);
}

// Reads fields off the front of an input; past the end every read gives zeros or an empty span, so a
// target never needs to check the length first.
class Input {
 public:
  Input(const std::uint8_t* data, std::size_t size) : bytes_(data, size) {}
  explicit Input(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}

  bool empty() const { return bytes_.empty(); }
  std::size_t size() const { return bytes_.size(); }

  std::uint8_t u8() {
    if (bytes_.empty()) return 0;
    const std::uint8_t v = bytes_.front();
    bytes_ = bytes_.subspan(1);
    return v;
  }
  std::uint16_t u16() { return static_cast<std::uint16_t>(u8() | u8() << 8); }
  std::uint32_t u32() { return static_cast<std::uint32_t>(u16()) | static_cast<std::uint32_t>(u16()) << 16; }
  std::uint64_t u64() { return static_cast<std::uint64_t>(u32()) | static_cast<std::uint64_t>(u32()) << 32; }

  std::span<const std::uint8_t> bytes(std::size_t n) {
    n = std::min(n, bytes_.size());
    const auto out = bytes_.first(n);
    bytes_ = bytes_.subspan(n);
    return out;
  }
  std::span<const std::uint8_t> rest() { return bytes(bytes_.size()); }
  // A length-prefixed (u16) piece: how targets split one input into several datagrams or frames.
  std::span<const std::uint8_t> piece() { return bytes(u16()); }

 private:
  std::span<const std::uint8_t> bytes_;
};

// An owned, 8-byte aligned copy: FlatBuffers reads structs with 64-bit fields in place, and the server
// hands its decoders buffers aligned like this (rpc_frame.hpp).
inline std::vector<std::uint8_t> copy(std::span<const std::uint8_t> bytes) {
  return {bytes.begin(), bytes.end()};
}

}  // namespace shiftcast::fuzz
