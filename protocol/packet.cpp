#include "protocol/packet.hpp"

#include <algorithm>
#include <array>

#include "protocol/byte_order_internal.hpp"
#include "protocol/wire_constants.hpp"

namespace shiftcast {
namespace {

constexpr std::size_t kPacketAssociatedDataBytes = 39;

// The prefix byte (docs/protocol.md, "5. Packet").
constexpr std::uint8_t kFormMask = 0x03;
constexpr std::uint8_t kConnectedMark = 0x01;
constexpr std::uint8_t kAckPresent = 0x04;
constexpr int kAckBitsByteShift = 3;  // bit 3 + k: ack_bits byte k is sent
constexpr std::uint8_t kReservedBit = 0x80;
constexpr int kAckBitsBytes = 4;
constexpr std::uint8_t kAllSet = 0xFF;
constexpr std::uint64_t kLowBitsSpan = 1u << 16;

// The associated data on the stack: it is built for every packet sealed or opened.
using AssociatedData = std::array<std::uint8_t, kPacketAssociatedDataBytes>;

template <typename T>
std::size_t put_le(AssociatedData& out, std::size_t at, T value) {
  detail::store_le(out.data() + at, value);
  return at + sizeof(T);
}

AssociatedData associated_data(const PacketHeader& header, Direction direction) {
  AssociatedData out{};
  std::copy(kFileIdentifier, kFileIdentifier + flatbuffers::kFileIdentifierLength, out.begin());
  std::size_t at = flatbuffers::kFileIdentifierLength;
  at = put_le(out, at, kProtocolVersion);
  at = put_le(out, at, static_cast<std::uint8_t>(direction));
  at = put_le(out, at, header.match_id);
  at = put_le(out, at, header.client_id);
  at = put_le(out, at, header.sequence);
  at = put_le(out, at, header.ack);
  at = put_le(out, at, header.ack_bits);
  return out;
}

// The header as sent: at most kPacketHeaderMaxBytes.
struct HeaderBytes {
  std::array<std::uint8_t, kPacketHeaderMaxBytes> bytes{};
  std::size_t size = 0;
};

HeaderBytes write_header(const PacketHeader& header) {
  HeaderBytes out;
  std::uint8_t prefix = kConnectedMark;
  out.size = 1;
  detail::store_le(out.bytes.data() + out.size, static_cast<std::uint16_t>(header.sequence));
  out.size += 2;
  if (header.ack != 0) {
    prefix |= kAckPresent;
    detail::store_le(out.bytes.data() + out.size, static_cast<std::uint16_t>(header.ack));
    out.size += 2;
    for (int k = 0; k < kAckBitsBytes; ++k) {
      const auto byte = static_cast<std::uint8_t>(header.ack_bits >> (8 * k));
      if (byte == kAllSet) continue;
      prefix |= static_cast<std::uint8_t>(1u << (kAckBitsByteShift + k));
      out.bytes[out.size++] = byte;
    }
  }
  out.bytes[0] = prefix;
  return out;
}

struct ParsedHeader {
  std::uint16_t sequence_low = 0;
  bool has_ack = false;
  std::uint16_t ack_low = 0;
  std::uint32_t ack_bits = 0;
  std::size_t size = 0;
};

// Nothing for a header that is cut short or not in its one canonical form.
std::optional<ParsedHeader> parse_header(std::span<const std::uint8_t> datagram) {
  if (datagram_form(datagram) != DatagramForm::kConnectedPacket || datagram.size() < 3) return std::nullopt;
  const std::uint8_t prefix = datagram[0];
  if ((prefix & kReservedBit) != 0) return std::nullopt;
  ParsedHeader h;
  h.sequence_low = detail::load_le<std::uint16_t>(datagram.data() + 1);
  h.size = 3;
  h.has_ack = (prefix & kAckPresent) != 0;
  const std::uint8_t bytes_sent = static_cast<std::uint8_t>(prefix >> kAckBitsByteShift) & 0x0F;
  if (!h.has_ack) return bytes_sent == 0 ? std::optional(h) : std::nullopt;
  if (datagram.size() < h.size + 2) return std::nullopt;
  h.ack_low = detail::load_le<std::uint16_t>(datagram.data() + h.size);
  h.size += 2;
  for (int k = 0; k < kAckBitsBytes; ++k) {
    std::uint8_t byte = kAllSet;
    if ((bytes_sent >> k) & 1u) {
      if (datagram.size() <= h.size) return std::nullopt;
      byte = datagram[h.size++];
      if (byte == kAllSet) return std::nullopt;  // that byte has the shorter form
    }
    h.ack_bits |= static_cast<std::uint32_t>(byte) << (8 * k);
  }
  return h;
}

}  // namespace

DatagramForm datagram_form(std::span<const std::uint8_t> datagram) {
  if (datagram.empty()) return DatagramForm::kInvalid;
  switch (datagram[0] & kFormMask) {
    case 0:
      return DatagramForm::kEnvelope;
    case kConnectedMark:
      return DatagramForm::kConnectedPacket;
    default:
      return DatagramForm::kInvalid;
  }
}

std::vector<std::uint8_t> packet_associated_data(const PacketHeader& header, Direction direction) {
  const AssociatedData a = associated_data(header, direction);
  return {a.begin(), a.end()};
}

std::vector<std::uint8_t> seal_packet(const PacketHeader& header, Direction direction, const Key& key,
                                      std::span<const std::uint8_t> message) {
  const HeaderBytes h = write_header(header);
  std::vector<std::uint8_t> datagram(h.size + message.size() + kMacBytes);
  std::copy(h.bytes.begin(), h.bytes.begin() + static_cast<std::ptrdiff_t>(h.size), datagram.begin());
  seal_packet_payload_into(key, header.sequence, message, associated_data(header, direction),
                           {datagram.data() + h.size, message.size() + kMacBytes});
  return datagram;
}

std::uint64_t reconstruct_sequence(std::uint64_t newest_received, std::uint16_t low) {
  // The signed 16-bit distance from the newest: as far back as forward, whatever the receiver saw.
  const auto distance = static_cast<std::int16_t>(static_cast<std::uint16_t>(low - newest_received));
  std::uint64_t sequence = 0;
  if (distance >= 0) {
    sequence = newest_received + static_cast<std::uint64_t>(distance);
  } else {
    const auto back = static_cast<std::uint64_t>(-static_cast<std::int32_t>(distance));
    sequence = newest_received >= back ? newest_received - back : newest_received + kLowBitsSpan - back;
  }
  return sequence == 0 ? kLowBitsSpan : sequence;
}

std::optional<std::uint64_t> reconstruct_ack(std::uint64_t newest_sent, std::uint16_t low) {
  const auto behind = static_cast<std::uint16_t>(newest_sent - low);
  if (newest_sent <= behind) return std::nullopt;
  return newest_sent - behind;
}

std::optional<std::uint16_t> peek_sequence_low_bits(std::span<const std::uint8_t> datagram) {
  const auto h = parse_header(datagram);
  if (!h) return std::nullopt;
  return h->sequence_low;
}

OpenedPacket open_packet(std::span<const std::uint8_t> datagram, Direction direction, const Key& key,
                         const PacketIdentity& identity, const SequenceContext& context) {
  OpenedPacket opened;
  const auto h = parse_header(datagram);
  if (!h || datagram.size() > kMaxDatagramBytes) {
    opened.error = wire::ErrorCode::Malformed;
    return opened;
  }
  opened.header.match_id = identity.match_id;
  opened.header.client_id = identity.client_id;
  opened.header.sequence = reconstruct_sequence(context.newest_received, h->sequence_low);
  if (h->has_ack) {
    const auto ack = reconstruct_ack(context.newest_sent, h->ack_low);
    if (!ack) {
      opened.error = wire::ErrorCode::Malformed;
      return opened;
    }
    opened.header.ack = *ack;
    opened.header.ack_bits = h->ack_bits;
  }
  const std::span<const std::uint8_t> sealed = datagram.subspan(h->size);
  if (sealed.size() <= kMacBytes) {  // not even a kind byte
    opened.error = wire::ErrorCode::Malformed;
    return opened;
  }
  auto plain =
      open_packet_payload(key, opened.header.sequence, sealed, associated_data(opened.header, direction));
  if (!plain) {
    opened.error = wire::ErrorCode::DecryptFailed;
    return opened;
  }
  opened.message = std::move(*plain);
  return opened;
}

}  // namespace shiftcast
