#include "protocol/packet.hpp"

#include <algorithm>
#include <array>

#include "protocol/byte_order_internal.hpp"
#include "protocol/envelope.hpp"
#include "protocol/wire_constants.hpp"

namespace shiftcast {
namespace {

constexpr std::size_t kPacketAssociatedDataBytes = 39;

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

}  // namespace

std::vector<std::uint8_t> packet_associated_data(const PacketHeader& header, Direction direction) {
  const AssociatedData a = associated_data(header, direction);
  return {a.begin(), a.end()};
}

std::vector<std::uint8_t> seal_packet(const PacketHeader& header, Direction direction, const Key& key,
                                      std::span<const std::uint8_t> inner_envelope) {
  const AssociatedData associated = associated_data(header, direction);
  flatbuffers::FlatBufferBuilder fbb(inner_envelope.size() + kPacketOverheadBytes);
  // Sealed straight into the builder's vector: the same bytes CreateVector(sealed) would copy there.
  std::uint8_t* sealed = nullptr;
  const auto sealed_offset = fbb.CreateUninitializedVector(inner_envelope.size() + kMacBytes, &sealed);
  seal_packet_payload_into(key, header.sequence, inner_envelope, associated,
                           {sealed, inner_envelope.size() + kMacBytes});
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
                                   associated_data(opened.header, direction));
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
