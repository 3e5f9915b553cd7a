#include "protocol/bit_stream.hpp"

#include <algorithm>

namespace shiftcast {
namespace {

constexpr unsigned kMaxFieldBits = 64;

std::uint64_t low_bits(std::uint64_t value, unsigned bits) {
  return bits >= kMaxFieldBits ? value : value & ((std::uint64_t{1} << bits) - 1);
}

// How many groups of `group_bits` a value needs (at least one).
unsigned varuint_groups(std::uint64_t value, unsigned group_bits) {
  const unsigned width = std::max(bit_width_of(value), 1u);
  return (width + group_bits - 1) / group_bits;
}

std::size_t tier_of(std::uint64_t value, std::span<const unsigned> widths) {
  const unsigned width = bit_width_of(value);
  for (std::size_t i = 0; i < widths.size(); ++i) {
    if (widths[i] >= width) return i;
  }
  return widths.empty() ? 0 : widths.size() - 1;
}

}  // namespace

std::string_view to_string(BitReadError error) {
  switch (error) {
    case BitReadError::kNone:
      return "none";
    case BitReadError::kPastEnd:
      return "past_end";
    case BitReadError::kOverlong:
      return "overlong";
    case BitReadError::kTrailingBits:
      return "trailing_bits";
  }
  return "unknown";
}

void BitWriter::write_bits(std::uint64_t value, unsigned bits) {
  bits = std::min(bits, kMaxFieldBits);
  if (bits == 0) return;
  value = low_bits(value, bits);
  const std::size_t first = bit_count_ / 8;
  if (buffer_.size() < first + kSlack) buffer_.resize(std::max(first + kSlack, 2 * buffer_.size()), 0);
  // Bit i of the stream is bit i % 8 of byte i / 8: the field shifted to its offset in its first byte,
  // OR-ed into eight bytes read as one little-endian word (the bytes after the stream are zero).
  const unsigned offset = static_cast<unsigned>(bit_count_ % 8);
  std::uint8_t* at = buffer_.data() + first;
  std::uint64_t word = 0;
  for (unsigned i = 0; i < 8; ++i)
    word |= std::uint64_t{at[i]} << (8 * i);
  word |= value << offset;
  for (unsigned i = 0; i < 8; ++i)
    at[i] = static_cast<std::uint8_t>(word >> (8 * i));
  // What did not fit the word: the top `offset` bits of a field of more than 64 - offset bits.
  if (offset + bits > kMaxFieldBits) at[8] = static_cast<std::uint8_t>(at[8] | (value >> (64 - offset)));
  bit_count_ += bits;
}

void BitWriter::clear() {
  std::fill(buffer_.begin(), buffer_.begin() + std::ptrdiff_t(std::min(buffer_.size(), byte_count())), 0);
  bit_count_ = 0;
}

void BitWriter::write_varuint(std::uint64_t value, unsigned group_bits) {
  group_bits = std::clamp(group_bits, 1u, kMaxFieldBits);
  const unsigned groups = varuint_groups(value, group_bits);
  for (unsigned g = 0; g < groups; ++g) {
    write_bits(g + 1 < groups ? 1 : 0, 1);
    write_bits(value, group_bits);
    value = group_bits >= kMaxFieldBits ? 0 : value >> group_bits;
  }
}

void BitWriter::write_tiered(std::uint64_t value, std::span<const unsigned> widths) {
  if (widths.empty()) return;
  const std::size_t tier = tier_of(value, widths);
  // The selector, `tier` one-bits then (unless the last tier) a zero-bit, in one write.
  const unsigned selector_bits = static_cast<unsigned>(tier + (tier + 1 < widths.size() ? 1 : 0));
  write_bits(low_bits(~std::uint64_t{0}, static_cast<unsigned>(tier)), selector_bits);
  write_bits(value, widths[tier]);
}

std::size_t varuint_bits(std::uint64_t value, unsigned group_bits) {
  group_bits = std::clamp(group_bits, 1u, kMaxFieldBits);
  return std::size_t{varuint_groups(value, group_bits)} * (1 + group_bits);
}

std::size_t tiered_bits(std::uint64_t value, std::span<const unsigned> widths) {
  if (widths.empty()) return 0;
  const std::size_t tier = tier_of(value, widths);
  return tier + (tier + 1 < widths.size() ? 1 : 0) + std::min(widths[tier], kMaxFieldBits);
}

std::uint64_t BitReader::read_bits(unsigned bits) {
  bits = std::min(bits, kMaxFieldBits);
  if (!ok()) return 0;
  if (bits > bits_left()) {
    fail(BitReadError::kPastEnd);
    return 0;
  }
  std::uint64_t value = 0;
  unsigned done = 0;
  while (done < bits) {
    const unsigned offset = static_cast<unsigned>(position_ % 8);
    const unsigned take = std::min(bits - done, 8 - offset);
    const std::uint64_t chunk = low_bits(static_cast<std::uint64_t>(bytes_[position_ / 8] >> offset), take);
    value |= chunk << done;
    done += take;
    position_ += take;
  }
  return value;
}

std::uint64_t BitReader::read_varuint(unsigned group_bits) {
  group_bits = std::clamp(group_bits, 1u, kMaxFieldBits);
  const unsigned max_groups = (kMaxFieldBits + group_bits - 1) / group_bits;
  std::uint64_t value = 0;
  for (unsigned g = 0; ok(); ++g) {
    const bool more = read_bool();
    const std::uint64_t group = read_bits(group_bits);
    const unsigned shift = g * group_bits;
    // A group that would carry bits above 64, or a zero last group after the first (not the shortest
    // form), is not something a conforming writer sends.
    const bool overflows = shift + group_bits > kMaxFieldBits && (group >> (kMaxFieldBits - shift)) != 0;
    if (overflows || (!more && g > 0 && group == 0)) {
      fail(BitReadError::kOverlong);
      return 0;
    }
    value |= group << shift;
    if (!more) return ok() ? value : 0;
    if (g + 1 == max_groups) {
      fail(BitReadError::kOverlong);
      return 0;
    }
  }
  return 0;
}

std::uint64_t BitReader::read_tiered(std::span<const unsigned> widths) {
  if (widths.empty()) return 0;
  std::size_t tier = 0;
  while (tier + 1 < widths.size() && ok() && read_bool())
    ++tier;
  const std::uint64_t value = read_bits(widths[tier]);
  // The narrowest width that holds the value is the only form a conforming writer sends.
  if (ok() && tier > 0 && bit_width_of(value) <= widths[tier - 1]) {
    fail(BitReadError::kOverlong);
    return 0;
  }
  return ok() ? value : 0;
}

BitReadError BitReader::finish() {
  if (!ok()) return error_;
  if (bits_left() >= 8 || read_bits(static_cast<unsigned>(bits_left())) != 0)
    fail(BitReadError::kTrailingBits);
  return error_;
}

}  // namespace shiftcast
