// Connect tokens (netcode style): the admin RPC issues one per player; the client passes the sealed
// private part to the server unopened and keeps the two keys. The sealed part is XChaCha20-Poly1305 of
// an Envelope{ConnectTokenPrivate} under the server's token key, with associated data
// token_associated_data(), so a token cannot be moved to another match, client or expiry. The sealed
// part also names the issuing server process (`server_instance`, random per start), so a token outlives
// neither the process that issued it nor that process's replay cache.
//
//   ConnectToken t = issue_connect_token(token_key, "127.0.0.1:40000", match, client, now + 30);
//   std::vector<std::uint8_t> request = build_connection_request(t);    // client: first datagram
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/crypto.hpp"
#include "protocol/shiftcast_generated.h"

namespace shiftcast {

struct ConnectToken {
  std::string server_address;  // "ip:port"
  std::uint32_t match_id = 0;
  std::uint64_t client_id = 0;
  std::uint64_t expires_at = 0;       // unix seconds
  std::uint64_t server_instance = 0;  // inside the sealed part only; clients never need it
  TokenNonce nonce{};
  std::vector<std::uint8_t> sealed;  // the private part, opaque to the client
  Key client_to_server{};
  Key server_to_client{};
};

// "SHC1" || version (u16) || match_id (u32) || client_id (u64) || expires_at (u64), little-endian: 26 bytes.
std::vector<std::uint8_t> token_associated_data(std::uint32_t match_id, std::uint64_t client_id,
                                                std::uint64_t expires_at);

// Fresh random keys and nonce. `server_instance` is the issuing server's ServerKeys::server_instance.
ConnectToken issue_connect_token(const Key& token_key, std::string server_address, std::uint32_t match_id,
                                 std::uint64_t client_id, std::uint64_t expires_at,
                                 std::uint64_t server_instance = 0);
// Everything given: deterministic, for test vectors.
ConnectToken issue_connect_token(const Key& token_key, std::string server_address, std::uint32_t match_id,
                                 std::uint64_t client_id, std::uint64_t expires_at, const TokenNonce& nonce,
                                 const Key& client_to_server, const Key& server_to_client,
                                 std::uint64_t server_instance = 0);

// The token's private part as the server sees it after opening.
struct OpenedToken {
  wire::ErrorCode error = wire::ErrorCode::Ok;  // TokenInvalid, TokenExpired, WrongServer
  std::uint32_t match_id = 0;
  std::uint64_t client_id = 0;
  std::uint64_t expires_at = 0;
  std::uint64_t server_instance = 0;
  Key client_to_server{};
  Key server_to_client{};
  std::array<std::uint8_t, kMacBytes> mac{};  // the sealed part's tag: names the token (replays)
  std::uint64_t opened_at = 0;                // now_unix when it was opened: a challenge's lifetime starts
};

// Opens a ConnectionRequest's token: authenticates it (TokenInvalid: forged, corrupt, or its public
// fields changed), then expiry (TokenExpired when now_unix >= expires_at), then the binding (WrongServer
// when the bound address is not `server_address` or the token was issued by another server instance than
// `server_instance`, e.g. the process before a restart).
OpenedToken open_connect_token(const Key& token_key, const wire::ConnectionRequest& request,
                               std::string_view server_address, std::uint64_t now_unix,
                               std::uint64_t server_instance = 0);

// Client side: the padded ConnectionRequest datagram (>= kMinRequestBytes, <= kMaxDatagramBytes).
std::vector<std::uint8_t> build_connection_request(const ConnectToken& token);

}  // namespace shiftcast
