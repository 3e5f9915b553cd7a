#include "protocol/handshake.hpp"

#include <algorithm>

#include "protocol/envelope.hpp"
#include "protocol/wire_constants.hpp"

namespace shiftcast {
namespace {

// The inner seal is opened by the server from a ChallengeResponse, which carries the ids but not the
// expiry: its associated data has expires_at = 0 (the expiry is inside the sealed ChallengeToken).
std::vector<std::uint8_t> inner_associated_data(std::uint32_t match_id, std::uint64_t client_id) {
  return token_associated_data(match_id, client_id, 0);
}

std::span<const std::uint8_t> as_span(const flatbuffers::Vector<std::uint8_t>* v) {
  if (v == nullptr) return {};
  return {v->data(), v->size()};
}

bool copy_key(const flatbuffers::Vector<std::uint8_t>* v, Key& key) {
  if (v == nullptr || v->size() != kKeyBytes) return false;
  std::copy(v->begin(), v->end(), key.begin());
  return true;
}

std::vector<std::uint8_t> build_response(std::uint32_t match_id, std::uint64_t client_id,
                                         std::span<const std::uint8_t> blob, std::size_t padding_bytes) {
  flatbuffers::FlatBufferBuilder fbb(kMaxDatagramBytes);
  const auto challenge = fbb.CreateVector(blob.data(), blob.size());
  const std::vector<std::uint8_t> zeros(padding_bytes, 0);
  const auto padding = fbb.CreateVector(zeros);
  const auto response = wire::CreateChallengeResponse(fbb, match_id, client_id, challenge, padding);
  finish_envelope(fbb, wire::Message::ChallengeResponse, response.Union());
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

}  // namespace

ServerOpenedToken open_connect_token(const ServerKeys& keys, const wire::ConnectionRequest& request,
                                     std::string_view server_address, std::uint64_t now_unix) {
  ServerOpenedToken out;
  out.token = open_connect_token(keys.token_key, request, server_address, now_unix, keys.server_instance);
  if (out.token.error != wire::ErrorCode::TokenInvalid) {
    out.key = TokenKeyUsed::kCurrent;
  } else if (keys.previous_token_key) {
    OpenedToken previous =
        open_connect_token(*keys.previous_token_key, request, server_address, now_unix, keys.server_instance);
    if (previous.error != wire::ErrorCode::TokenInvalid) {
      out.token = previous;
      out.key = TokenKeyUsed::kPrevious;
    }
  }
  return out;
}

std::vector<std::uint8_t> make_challenge(const ServerKeys& keys, const OpenedToken& token,
                                         std::string_view client_address, const TokenNonce& outer_nonce,
                                         const TokenNonce& inner_nonce) {
  flatbuffers::FlatBufferBuilder inner(256);
  const auto address = inner.CreateString(client_address.data(), client_address.size());
  const auto mac = inner.CreateVector(token.mac.data(), token.mac.size());
  const auto c2s = inner.CreateVector(token.client_to_server.data(), token.client_to_server.size());
  const auto s2c = inner.CreateVector(token.server_to_client.data(), token.server_to_client.size());
  const std::uint64_t challenge_expires_at =
      std::min(token.expires_at, token.opened_at + kChallengeLifetimeSeconds);
  const auto body = wire::CreateChallengeToken(inner, token.match_id, token.client_id, token.expires_at,
                                               address, mac, c2s, s2c, challenge_expires_at);
  finish_envelope(inner, wire::Message::ChallengeToken, body.Union());

  std::vector<std::uint8_t> blob(inner_nonce.begin(), inner_nonce.end());
  const auto inner_sealed =
      seal_xchacha(keys.challenge_key, inner_nonce, {inner.GetBufferPointer(), inner.GetSize()},
                   inner_associated_data(token.match_id, token.client_id));
  blob.insert(blob.end(), inner_sealed.begin(), inner_sealed.end());
  const auto outer_sealed =
      seal_xchacha(token.server_to_client, outer_nonce, blob,
                   token_associated_data(token.match_id, token.client_id, token.expires_at));

  flatbuffers::FlatBufferBuilder fbb(512);
  const auto nonce = fbb.CreateVector(outer_nonce.data(), outer_nonce.size());
  const auto sealed = fbb.CreateVector(outer_sealed);
  const auto challenge = wire::CreateConnectionChallenge(fbb, token.match_id, token.client_id, nonce, sealed);
  finish_envelope(fbb, wire::Message::ConnectionChallenge, challenge.Union());
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

std::optional<std::vector<std::uint8_t>> build_challenge_response(
    const ConnectToken& token, const wire::ConnectionChallenge& challenge) {
  if (challenge.match_id() != token.match_id || challenge.client_id() != token.client_id) return std::nullopt;
  const auto* nonce_bytes = challenge.nonce();
  if (nonce_bytes == nullptr || nonce_bytes->size() != kTokenNonceBytes) return std::nullopt;
  TokenNonce nonce;
  std::copy(nonce_bytes->begin(), nonce_bytes->end(), nonce.begin());
  const auto blob = open_xchacha(token.server_to_client, nonce, as_span(challenge.sealed()),
                                 token_associated_data(token.match_id, token.client_id, token.expires_at));
  if (!blob || blob->size() < kTokenNonceBytes + kMacBytes) return std::nullopt;

  // Padded like the request, for the same reason: the server's answer is never larger than this.
  std::size_t padding = 0;
  std::vector<std::uint8_t> datagram = build_response(token.match_id, token.client_id, *blob, padding);
  while (datagram.size() < kMinRequestBytes) {
    padding += kMinRequestBytes - datagram.size();
    datagram = build_response(token.match_id, token.client_id, *blob, padding);
  }
  return datagram;
}

AcceptedChallenge open_challenge_response(const ServerKeys& keys, const wire::ChallengeResponse& response,
                                          std::string_view client_address, std::uint64_t now_unix) {
  AcceptedChallenge accepted;
  accepted.error = wire::ErrorCode::ChallengeInvalid;
  const auto blob = as_span(response.challenge());
  if (blob.size() < kTokenNonceBytes + kMacBytes || blob.size() > kMaxDatagramBytes) return accepted;
  TokenNonce inner_nonce;
  std::copy(blob.begin(), blob.begin() + kTokenNonceBytes, inner_nonce.begin());
  const auto plain = open_xchacha(keys.challenge_key, inner_nonce, blob.subspan(kTokenNonceBytes),
                                  inner_associated_data(response.match_id(), response.client_id()));
  if (!plain) return accepted;

  const EnvelopeView view = verify_envelope(*plain, kMaxDatagramBytes);
  if (view.error != wire::ErrorCode::Ok) return accepted;
  const wire::ChallengeToken* token = view.envelope->message_as_ChallengeToken();
  if (token == nullptr || token->client_address() == nullptr || token->token_mac() == nullptr ||
      token->token_mac()->size() != kMacBytes) {
    return accepted;
  }
  if (token->match_id() != response.match_id() || token->client_id() != response.client_id()) return accepted;
  // A response replayed from another address (an attacker who saw the blob) is refused.
  if (token->client_address()->string_view() != client_address) return accepted;
  Key client_to_server;
  Key server_to_client;
  if (!copy_key(token->client_to_server_key(), client_to_server) ||
      !copy_key(token->server_to_client_key(), server_to_client)) {
    return accepted;
  }

  accepted.match_id = token->match_id();
  accepted.client_id = token->client_id();
  accepted.expires_at = token->expires_at();
  accepted.client_to_server = client_to_server;
  accepted.server_to_client = server_to_client;
  std::copy(token->token_mac()->begin(), token->token_mac()->end(), accepted.token_mac.begin());
  // The token's expiry first: a response after it could never connect, whatever the challenge says.
  if (now_unix >= accepted.expires_at) {
    accepted.error = wire::ErrorCode::TokenExpired;
  } else if (now_unix >= token->challenge_expires_at()) {
    accepted.error = wire::ErrorCode::ChallengeInvalid;  // a handshake left unfinished too long
  } else {
    accepted.error = wire::ErrorCode::Ok;
  }
  return accepted;
}

std::vector<std::uint8_t> build_denied(wire::ErrorCode code) {
  flatbuffers::FlatBufferBuilder fbb(64);
  const auto denied = wire::CreateConnectionDenied(fbb, code);
  finish_envelope(fbb, wire::Message::ConnectionDenied, denied.Union());
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

}  // namespace shiftcast
