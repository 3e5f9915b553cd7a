// Target: the handshake (ConnectionRequest -> ConnectionChallenge -> ChallengeResponse) with fixed keys,
// both sides. Raw datagrams test the verifiers and the AEAD gates; sealed modes put fuzzed plaintext
// behind a correct seal, so the parsers of authenticated bytes (the ChallengeToken the server reads
// back, the blob the client echoes) are reached too.
// Promise: every datagram is answered with a value (an error code or a datagram); a request the server
// accepts leads to a challenge its token's holder can answer and the server then accepts.
//
// Input: u8 mode | bytes.  mode % 5: 0 raw request to the server, 1 raw challenge response to the
// server, 2 raw challenge to the client, 3 a ChallengeToken plaintext sealed under the challenge key,
// 4 a challenge blob plaintext sealed under the token's server-to-client key.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fuzz/fuzz_support.hpp"
#include "protocol/envelope.hpp"
#include "protocol/handshake.hpp"

namespace shiftcast::fuzz {
namespace {

struct Fixture {
  ServerKeys keys{kTokenKey, kChallengeKey};
  ConnectToken token = issue_connect_token(kTokenKey, kServerAddress, kMatch, kClient, kTokenExpiry,
                                           fixed_nonce(2), kClientToServerKey, kServerToClientKey);
};

std::vector<std::uint8_t> response_datagram(std::span<const std::uint8_t> blob) {
  flatbuffers::FlatBufferBuilder fbb;
  const auto challenge = fbb.CreateVector(blob.data(), blob.size());
  const auto body = wire::CreateChallengeResponse(fbb, kMatch, kClient, challenge);
  finish_envelope(fbb, wire::Message::ChallengeResponse, body.Union());
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

std::vector<std::uint8_t> challenge_datagram(std::span<const std::uint8_t> sealed) {
  flatbuffers::FlatBufferBuilder fbb;
  const TokenNonce n = fixed_nonce(8);
  const auto nonce = fbb.CreateVector(n.data(), n.size());
  const auto s = fbb.CreateVector(sealed.data(), sealed.size());
  const auto body = wire::CreateConnectionChallenge(fbb, kMatch, kClient, nonce, s);
  finish_envelope(fbb, wire::Message::ConnectionChallenge, body.Union());
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

// The server's side of a response: what the match does with it.
AcceptedChallenge server_response(const Fixture& f, std::span<const std::uint8_t> datagram) {
  AcceptedChallenge refused;
  refused.error = wire::ErrorCode::Malformed;
  const EnvelopeView view = verify_envelope(datagram, kMaxDatagramBytes);
  if (view.error != wire::ErrorCode::Ok) return refused;
  const auto* response = view.envelope->message_as_ChallengeResponse();
  if (response == nullptr) return refused;
  const AcceptedChallenge a = open_challenge_response(f.keys, *response, kClientAddress, kNowUnix);
  if (a.error == wire::ErrorCode::Ok) {
    require(a.match_id == response->match_id() && a.client_id == response->client_id(),
            "open_challenge_response: accepted for other ids than the response's");
    require(a.expires_at > kNowUnix, "open_challenge_response: accepted an expired token");
  }
  return a;
}

// The client's side of a challenge; the response it builds must be one the server accepts whenever the
// challenge was the server's own (checked by the caller).
std::optional<std::vector<std::uint8_t>> client_challenge(const Fixture& f,
                                                          std::span<const std::uint8_t> datagram) {
  const EnvelopeView view = verify_envelope(datagram, kMaxDatagramBytes);
  if (view.error != wire::ErrorCode::Ok) return std::nullopt;
  const auto* challenge = view.envelope->message_as_ConnectionChallenge();
  if (challenge == nullptr) return std::nullopt;
  auto response = build_challenge_response(f.token, *challenge);
  if (response) {
    require(response->size() >= kMinRequestBytes, "build_challenge_response: response not padded");
    require(verify_envelope(*response, kMaxRpcFrameBytes).error == wire::ErrorCode::Ok,
            "build_challenge_response: a response that does not verify");
  }
  return response;
}

void server_request(const Fixture& f, std::span<const std::uint8_t> datagram) {
  const EnvelopeView view = verify_envelope(datagram, kMaxDatagramBytes);
  if (view.error != wire::ErrorCode::Ok) return;
  const auto* request = view.envelope->message_as_ConnectionRequest();
  if (request == nullptr) return;
  const OpenedToken opened = open_connect_token(f.keys.token_key, *request, kServerAddress, kNowUnix);
  if (opened.error != wire::ErrorCode::Ok) {
    // The server answers only padded requests (smaller ones are refused as amplification before this).
    require(datagram.size() < kMinRequestBytes || build_denied(opened.error).size() <= datagram.size(),
            "denial larger than a padded request");
    return;
  }
  const std::vector<std::uint8_t> challenge =
      make_challenge(f.keys, opened, kClientAddress, fixed_nonce(6), fixed_nonce(7));
  require(challenge.size() <= datagram.size() || datagram.size() < kMinRequestBytes,
          "make_challenge: amplification (challenge larger than a padded request)");
  // Only the holder of the fixed token can answer; anyone else's accepted token ends here.
  if (opened.server_to_client != f.token.server_to_client || opened.match_id != f.token.match_id ||
      opened.client_id != f.token.client_id || opened.expires_at != f.token.expires_at) {
    return;
  }
  const auto response = client_challenge(f, challenge);
  require(response.has_value(), "a challenge for an accepted token cannot be answered by its holder");
  require(server_response(f, *response).error == wire::ErrorCode::Ok,
          "the server refused the answer to its own challenge");
}

}  // namespace
}  // namespace shiftcast::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace shiftcast;
  using namespace shiftcast::fuzz;
  static const Fixture fixture;
  Input in(data, size);
  const std::uint8_t mode = in.u8() % 5;
  const std::vector<std::uint8_t> bytes = copy(in.rest());
  switch (mode) {
    case 0:
      server_request(fixture, bytes);
      break;
    case 1:
      (void)server_response(fixture, bytes);
      break;
    case 2:
      (void)client_challenge(fixture, bytes);
      break;
    case 3: {
      // inner_nonce || seal(challenge_key, ChallengeToken envelope), as make_challenge writes the blob.
      const TokenNonce inner_nonce = fixed_nonce(7);
      std::vector<std::uint8_t> blob(inner_nonce.begin(), inner_nonce.end());
      const auto sealed =
          seal_xchacha(kChallengeKey, inner_nonce, bytes, token_associated_data(kMatch, kClient, 0));
      blob.insert(blob.end(), sealed.begin(), sealed.end());
      (void)server_response(fixture, response_datagram(blob));
      break;
    }
    default: {
      const auto sealed = seal_xchacha(kServerToClientKey, fixed_nonce(8), bytes,
                                       token_associated_data(kMatch, kClient, kTokenExpiry));
      (void)client_challenge(fixture, challenge_datagram(sealed));
      break;
    }
  }
  return 0;
}
