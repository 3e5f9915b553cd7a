#include "protocol/connect_token.hpp"

#include <algorithm>
#include <cstring>

#include "protocol/byte_order_internal.hpp"
#include "protocol/envelope.hpp"
#include "protocol/wire_constants.hpp"

namespace shiftcast {
namespace {

constexpr std::size_t kTokenAssociatedDataBytes = 26;

std::span<const std::uint8_t> as_span(const flatbuffers::Vector<std::uint8_t>* v) {
  if (v == nullptr) return {};
  return {v->data(), v->size()};
}

bool copy_key(const flatbuffers::Vector<std::uint8_t>* v, Key& key) {
  if (v == nullptr || v->size() != kKeyBytes) return false;
  std::copy(v->begin(), v->end(), key.begin());
  return true;
}

std::vector<std::uint8_t> build_request(const ConnectToken& token, std::size_t padding_bytes) {
  flatbuffers::FlatBufferBuilder fbb(kMaxDatagramBytes);
  const auto nonce = fbb.CreateVector(token.nonce.data(), token.nonce.size());
  const auto sealed = fbb.CreateVector(token.sealed);
  const std::vector<std::uint8_t> zeros(padding_bytes, 0);
  const auto padding = fbb.CreateVector(zeros);
  const auto request = wire::CreateConnectionRequest(fbb, token.match_id, token.client_id, token.expires_at,
                                                     nonce, sealed, padding);
  finish_envelope(fbb, wire::Message::ConnectionRequest, request.Union());
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

}  // namespace

std::vector<std::uint8_t> token_associated_data(std::uint32_t match_id, std::uint64_t client_id,
                                                std::uint64_t expires_at) {
  std::vector<std::uint8_t> out;
  out.reserve(kTokenAssociatedDataBytes);
  out.insert(out.end(), kFileIdentifier, kFileIdentifier + flatbuffers::kFileIdentifierLength);
  detail::append_le(out, kProtocolVersion);
  detail::append_le(out, match_id);
  detail::append_le(out, client_id);
  detail::append_le(out, expires_at);
  return out;
}

ConnectToken issue_connect_token(const Key& token_key, std::string server_address, std::uint32_t match_id,
                                 std::uint64_t client_id, std::uint64_t expires_at,
                                 std::uint64_t server_instance) {
  return issue_connect_token(token_key, std::move(server_address), match_id, client_id, expires_at,
                             random_token_nonce(), random_key(), random_key(), server_instance);
}

ConnectToken issue_connect_token(const Key& token_key, std::string server_address, std::uint32_t match_id,
                                 std::uint64_t client_id, std::uint64_t expires_at, const TokenNonce& nonce,
                                 const Key& client_to_server, const Key& server_to_client,
                                 std::uint64_t server_instance) {
  flatbuffers::FlatBufferBuilder fbb(256);
  const auto address = fbb.CreateString(server_address);
  const auto c2s = fbb.CreateVector(client_to_server.data(), client_to_server.size());
  const auto s2c = fbb.CreateVector(server_to_client.data(), server_to_client.size());
  const auto body = wire::CreateConnectTokenPrivate(fbb, match_id, client_id, expires_at, address, c2s, s2c,
                                                    server_instance);
  finish_envelope(fbb, wire::Message::ConnectTokenPrivate, body.Union());

  ConnectToken token;
  token.server_address = std::move(server_address);
  token.match_id = match_id;
  token.client_id = client_id;
  token.expires_at = expires_at;
  token.server_instance = server_instance;
  token.nonce = nonce;
  token.sealed = seal_xchacha(token_key, nonce, {fbb.GetBufferPointer(), fbb.GetSize()},
                              token_associated_data(match_id, client_id, expires_at));
  token.client_to_server = client_to_server;
  token.server_to_client = server_to_client;
  return token;
}

OpenedToken open_connect_token(const Key& token_key, const wire::ConnectionRequest& request,
                               std::string_view server_address, std::uint64_t now_unix,
                               std::uint64_t server_instance) {
  OpenedToken opened;
  opened.error = wire::ErrorCode::TokenInvalid;
  const auto* nonce_bytes = request.token_nonce();
  const auto* sealed = request.sealed_token();
  if (nonce_bytes == nullptr || nonce_bytes->size() != kTokenNonceBytes) return opened;
  if (sealed == nullptr || sealed->size() < kMacBytes || sealed->size() > kMaxDatagramBytes) return opened;

  TokenNonce nonce;
  std::copy(nonce_bytes->begin(), nonce_bytes->end(), nonce.begin());
  // The public fields are the associated data: changing any of them fails authentication here.
  const auto plain =
      open_xchacha(token_key, nonce, as_span(sealed),
                   token_associated_data(request.match_id(), request.client_id(), request.expires_at()));
  if (!plain) return opened;

  // Authenticated bytes are still parsed with the verifier: the token key may be shared with another
  // service that issues tokens, and a bug there must not become a crash here.
  const EnvelopeView view = verify_envelope(*plain, kMaxDatagramBytes);
  if (view.error != wire::ErrorCode::Ok) return opened;
  const wire::ConnectTokenPrivate* inner = view.envelope->message_as_ConnectTokenPrivate();
  if (inner == nullptr || inner->server_address() == nullptr) return opened;
  if (inner->match_id() != request.match_id() || inner->client_id() != request.client_id() ||
      inner->expires_at() != request.expires_at()) {
    return opened;
  }
  Key client_to_server;
  Key server_to_client;
  if (!copy_key(inner->client_to_server_key(), client_to_server) ||
      !copy_key(inner->server_to_client_key(), server_to_client)) {
    return opened;
  }
  opened.client_to_server = client_to_server;
  opened.server_to_client = server_to_client;
  opened.match_id = inner->match_id();
  opened.client_id = inner->client_id();
  opened.expires_at = inner->expires_at();
  opened.server_instance = inner->server_instance();
  opened.opened_at = now_unix;
  std::copy(sealed->end() - kMacBytes, sealed->end(), opened.mac.begin());

  if (now_unix >= opened.expires_at) {
    opened.error = wire::ErrorCode::TokenExpired;
  } else if (inner->server_address()->string_view() != server_address ||
             opened.server_instance != server_instance) {
    opened.error = wire::ErrorCode::WrongServer;
  } else {
    opened.error = wire::ErrorCode::Ok;
  }
  return opened;
}

std::vector<std::uint8_t> build_connection_request(const ConnectToken& token) {
  // FlatBuffers alignment makes the size a little uneven in the padding length, so grow until it fits;
  // the same inputs always take the same steps, so the datagram is deterministic.
  std::size_t padding = 0;
  std::vector<std::uint8_t> datagram = build_request(token, padding);
  while (datagram.size() < kMinRequestBytes) {
    padding += kMinRequestBytes - datagram.size();
    datagram = build_request(token, padding);
  }
  return datagram;
}

}  // namespace shiftcast
