// Bit packing for the connected wire: fields of any width from 0 to 64 bits, back to back, with no
// byte alignment between them. Everything bit-packed (the snapshot entity block, the own state, contact
// events, the lean input commands) is written by a BitWriter and read by a BitReader, so no two encoders
// can disagree on the bit order.
//
//   BitWriter w;
//   w.write_bits(5, 3);             // 3-bit unsigned field
//   w.write_signed(-2, 4);          // zig-zag: -2 -> 3 in 4 bits
//   w.write_varuint(300, 4);        // groups of 4 bits, each after a continuation bit
//   std::span<const std::uint8_t> bytes = w.bytes();   // zero-padded to a whole byte
//
//   BitReader r(bytes);
//   std::uint64_t a = r.read_bits(3);
//   std::int64_t b = r.read_signed(4);
//   std::uint64_t c = r.read_varuint(4);
//   if (r.finish() != BitReadError::kNone) ... reject the message ...
//
// Bit order (the written standard, docs/protocol.md): bit i of the stream is bit (i % 8) of byte i / 8,
// least significant first; a field's least significant bit is written first. The stream ends with 0 to 7
// zero bits that fill its last byte.
//
// Reading never goes past the buffer: a read past the end returns 0 and sets a sticky typed error, so a
// decoder may read a whole message and check once (a hostile sender cannot make it loop on reads that
// fail, because every read after an error consumes nothing and returns 0). Bytes are read one at a time:
// no alignment is assumed of the buffer.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace shiftcast {

enum class BitReadError : std::uint8_t {
  kNone = 0,
  kPastEnd,       // a field runs past the last byte
  kOverlong,      // a variable-length integer with more groups than a 64-bit value needs
  kTrailingBits,  // finish(): more than the padding left over, or padding that is not zero
};
std::string_view to_string(BitReadError error);

// Zig-zag: 0, -1, 1, -2, 2 ... -> 0, 1, 2, 3, 4 ..., so small magnitudes of either sign are small.
constexpr std::uint64_t zigzag_encode(std::int64_t value) {
  return (static_cast<std::uint64_t>(value) << 1) ^ static_cast<std::uint64_t>(value >> 63);
}
constexpr std::int64_t zigzag_decode(std::uint64_t value) {
  return static_cast<std::int64_t>(value >> 1) ^ -static_cast<std::int64_t>(value & 1);
}

// The number of bits an unsigned value needs (0 for 0).
constexpr unsigned bit_width_of(std::uint64_t value) {
  return static_cast<unsigned>(std::bit_width(value));
}

class BitWriter {
 public:
  // The low `bits` bits of `value` (bits in [0, 64]; higher bits of value are ignored).
  void write_bits(std::uint64_t value, unsigned bits);
  void write_bool(bool value) { write_bits(value ? 1 : 0, 1); }
  // Zig-zag encoded in `bits` bits: the caller keeps value within [-2^(bits-1), 2^(bits-1)).
  void write_signed(std::int64_t value, unsigned bits) { write_bits(zigzag_encode(value), bits); }
  // Groups of `group_bits` (1..64), least significant first, each preceded by a continuation bit that is 1
  // when a group follows it: 0 costs 1 + group_bits bits. The shortest form is always written.
  void write_varuint(std::uint64_t value, unsigned group_bits);
  void write_varint(std::int64_t value, unsigned group_bits) {
    write_varuint(zigzag_encode(value), group_bits);
  }
  // One of a few widths, chosen by a unary selector: width i (ascending, the last at most 64) is
  // announced by i one-bits then, unless i is the last, a zero-bit. The narrowest width that holds the
  // value is written; a value no width holds is the caller's bug (the last width should be 64 or bound
  // the value).
  void write_tiered(std::uint64_t value, std::span<const unsigned> widths);
  void write_tiered_signed(std::int64_t value, std::span<const unsigned> widths) {
    write_tiered(zigzag_encode(value), widths);
  }

  std::size_t bit_count() const { return bit_count_; }
  std::size_t byte_count() const { return (bit_count_ + 7) / 8; }
  // The stream so far, its last byte zero-padded.
  std::span<const std::uint8_t> bytes() const { return {buffer_.data(), byte_count()}; }
  void clear();

 private:
  // Zero beyond the stream, and at least kSlack bytes longer than it after every write, so a field is
  // OR-ed into place with one 8-byte load and store (and a ninth byte for a field that straddles 64 bits)
  // instead of growing a vector per field: snapshot encoding is hot on the server.
  static constexpr std::size_t kSlack = 9;
  std::vector<std::uint8_t> buffer_;
  std::size_t bit_count_ = 0;
};

// The cost in bits of the variable-length forms, for budgets that must be exact before writing.
std::size_t varuint_bits(std::uint64_t value, unsigned group_bits);
std::size_t tiered_bits(std::uint64_t value, std::span<const unsigned> widths);

class BitReader {
 public:
  explicit BitReader(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}

  std::uint64_t read_bits(unsigned bits);
  bool read_bool() { return read_bits(1) != 0; }
  std::int64_t read_signed(unsigned bits) { return zigzag_decode(read_bits(bits)); }
  std::uint64_t read_varuint(unsigned group_bits);
  std::int64_t read_varint(unsigned group_bits) { return zigzag_decode(read_varuint(group_bits)); }
  std::uint64_t read_tiered(std::span<const unsigned> widths);
  std::int64_t read_tiered_signed(std::span<const unsigned> widths) {
    return zigzag_decode(read_tiered(widths));
  }

  // The end of a message: the error so far, else kTrailingBits unless what is left is the zero padding
  // of the last byte.
  BitReadError finish();

  BitReadError error() const { return error_; }
  bool ok() const { return error_ == BitReadError::kNone; }
  std::size_t bits_read() const { return position_; }
  std::size_t bits_left() const { return bytes_.size() * 8 - position_; }

 private:
  void fail(BitReadError error) {
    if (error_ == BitReadError::kNone) error_ = error;
  }

  std::span<const std::uint8_t> bytes_;
  std::size_t position_ = 0;
  BitReadError error_ = BitReadError::kNone;
};

}  // namespace shiftcast
