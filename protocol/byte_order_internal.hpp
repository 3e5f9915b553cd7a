// Internal to protocol/: the little-endian byte order every hand-written field of the wire uses (the
// associated data of packets and connect tokens, the RPC length prefix, the packet nonce), written once
// so no two encoders can disagree. FlatBuffers encodes its own fields; these are the bytes around them.
//
//   std::vector<std::uint8_t> out;
//   detail::append_le(out, std::uint16_t{1});            // 01 00
//   detail::store_le(nonce.data() + 4, sequence);        // 8 bytes at a fixed place
//   auto length = detail::load_le<std::uint32_t>(p);     // p[0] | p[1] << 8 | ...
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace shiftcast::detail {

// `value`'s sizeof(T) bytes, least significant first, at out[0..sizeof(T)).
template <std::unsigned_integral T>
void store_le(std::uint8_t* out, T value) {
  for (std::size_t i = 0; i < sizeof(T); ++i)
    out[i] = static_cast<std::uint8_t>(value >> (8 * i));
}

// The same bytes appended to `out`.
template <std::unsigned_integral T>
void append_le(std::vector<std::uint8_t>& out, T value) {
  for (std::size_t i = 0; i < sizeof(T); ++i)
    out.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
}

// The T whose little-endian bytes are in[0..sizeof(T)).
template <std::unsigned_integral T>
T load_le(const std::uint8_t* in) {
  T value = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i)
    value |= static_cast<T>(static_cast<T>(in[i]) << (8 * i));
  return value;
}

}  // namespace shiftcast::detail
