// The challenge round trip between a ConnectionRequest and a connection. The server keeps no state for
// it: everything it must remember travels inside a ChallengeToken sealed under a per-process challenge
// key, inside a ConnectionChallenge sealed under the token's server-to-client key (so only the holder of
// the connect token can answer it).
//
//   server: ChallengeReply r = make_challenge(keys, opened_token, "10.0.0.7:5000", nonce);  // r.datagram
//   client: auto response = build_challenge_response(token, *challenge);                    // padded
//   server: AcceptedChallenge a = open_challenge_response(keys, *response_msg, "10.0.0.7:5000", now);
//           if (a.error == Ok && !replay_cache.spend(a.token_mac)) ...   // then connect a.client_id
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "protocol/connect_token.hpp"

namespace shiftcast {

struct ServerKeys {
  Key token_key{};      // shared with whoever issues connect tokens (the admin RPC, shiftcast-token)
  Key challenge_key{};  // random per process: challenges die with it
  // Random per process, never 0: written into every connect token this process issues and required of
  // every token it opens, so tokens (spent or not) die with the process too.
  std::uint64_t server_instance = 0;
  // During a rotation of the token key, the key before it: tokens sealed under it are still opened (and
  // counted apart) until the operator drops it. Issued tokens always use token_key.
  std::optional<Key> previous_token_key;
};

// Which of the server's token keys opened a token: the server counts them apart, so an operator sees
// when nobody mints under the previous key any more (docs/server.md, "Rotating the token key").
enum class TokenKeyUsed : std::uint8_t { kNone, kCurrent, kPrevious };

struct ServerOpenedToken {
  OpenedToken token;
  TokenKeyUsed key = TokenKeyUsed::kNone;  // kNone: it opened under neither (token.error TokenInvalid)
};

// The server's open_connect_token: under keys.token_key, then, when the token does not open under it and
// keys.previous_token_key is set, under that one. Instance and address are checked as by
// open_connect_token, whichever key opened it.
ServerOpenedToken open_connect_token(const ServerKeys& keys, const wire::ConnectionRequest& request,
                                     std::string_view server_address, std::uint64_t now_unix);

// The ConnectionChallenge datagram for an opened, valid token. Deterministic given the nonces. The
// ChallengeToken is sealed under keys.challenge_key with AD token_associated_data(match, client, 0) (a
// ChallengeResponse carries no expiry to rebuild it from; the expiry is inside), the blob
// inner_nonce || that under the token's server-to-client key with the token's full associated data.
// docs/protocol.md, "The challenge blob", has the byte layout.
std::vector<std::uint8_t> make_challenge(const ServerKeys& keys, const OpenedToken& token,
                                         std::string_view client_address, const TokenNonce& outer_nonce,
                                         const TokenNonce& inner_nonce);

// Client side: opens the challenge with the token's server-to-client key and echoes the inner blob,
// padded to kMinRequestBytes. Nothing when the challenge does not authenticate or names another
// match or client.
std::optional<std::vector<std::uint8_t>> build_challenge_response(const ConnectToken& token,
                                                                  const wire::ConnectionChallenge& challenge);

struct AcceptedChallenge {
  wire::ErrorCode error = wire::ErrorCode::Ok;  // ChallengeInvalid, TokenExpired
  std::uint32_t match_id = 0;
  std::uint64_t client_id = 0;
  std::uint64_t expires_at = 0;
  Key client_to_server{};
  Key server_to_client{};
  std::array<std::uint8_t, kMacBytes> token_mac{};
};

// ChallengeInvalid when the blob does not open under the challenge key, names another match or client
// than the response's header, came from another address than the request, or arrives
// kChallengeLifetimeSeconds or more after the request was opened; TokenExpired after the connect
// token's expiry (checked before the challenge's own).
AcceptedChallenge open_challenge_response(const ServerKeys& keys, const wire::ChallengeResponse& response,
                                          std::string_view client_address, std::uint64_t now_unix);

// The ConnectionDenied datagram (a few dozen bytes).
std::vector<std::uint8_t> build_denied(wire::ErrorCode code);

}  // namespace shiftcast
