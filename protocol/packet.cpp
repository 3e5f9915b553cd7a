#include "protocol/packet.hpp"

#include "protocol/detail/byte_order.hpp"
#include "protocol/envelope.hpp"
#include "protocol/wire_constants.hpp"

namespace shiftcast {
namespace {

constexpr std::size_t kPacketAssociatedDataBytes = 39;

}  // namespace

std::vector<std::uint8_t> packet_associated_data(const PacketHeader& header, Direction direction) {
  std::vector<std::uint8_t> out;
  out.reserve(kPacketAssociatedDataBytes);
  out.insert(out.end(), kFileIdentifier, kFileIdentifier + flatbuffers::kFileIdentifierLength);
  detail::append_le(out, kProtocolVersion);
  detail::append_le(out, static_cast<std::uint8_t>(direction));
  detail::append_le(out, header.match_id);
  detail::append_le(out, header.client_id);
  detail::append_le(out, header.sequence);
  detail::append_le(out, header.ack);
  detail::append_le(out, header.ack_bits);
  return out;
}

std::vector<std::uint8_t> seal_packet(const PacketHeader& header, Direction direction, const Key& key,
                                      std::span<const std::uint8_t> inner_envelope) {
  const auto sealed =
      seal_packet_payload(key, header.sequence, inner_envelope, packet_associated_data(header, direction));
  flatbuffers::FlatBufferBuilder fbb(inner_envelope.size() + kPacketOverheadBytes);
  const auto sealed_offset = fbb.CreateVector(sealed);
  const auto packet = wire::CreatePacket(fbb, header.match_id, header.client_id, header.sequence, header.ack,
                                         header.ack_bits, sealed_offset);
  finish_envelope(fbb, wire::Message::Packet, packet.Union());
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

const wire::Envelope* OpenedPacket::inner_envelope() const {
  if (error != wire::ErrorCode::Ok || inner.empty()) return nullptr;
  return flatbuffers::GetRoot<wire::Envelope>(inner.data());
}

OpenedPacket open_packet(const wire::Packet& packet, Direction direction, const Key& key) {
  OpenedPacket opened;
  opened.header = {packet.match_id(), packet.client_id(), packet.sequence(), packet.ack(), packet.ack_bits()};
  const auto* sealed = packet.sealed();
  if (sealed == nullptr || sealed->size() < kMacBytes || sealed->size() > kMaxDatagramBytes) {
    opened.error = wire::ErrorCode::DecryptFailed;
    return opened;
  }
  auto plain = open_packet_payload(key, opened.header.sequence, {sealed->data(), sealed->size()},
                                   packet_associated_data(opened.header, direction));
  if (!plain) {
    opened.error = wire::ErrorCode::DecryptFailed;
    return opened;
  }
  // Authenticated is not the same as well formed: the peer holds the key and may still be hostile.
  opened.error = verify_envelope(*plain, kMaxDatagramBytes).error;
  if (opened.error == wire::ErrorCode::Ok) opened.inner = std::move(*plain);
  return opened;
}

}  // namespace shiftcast
