// Minting connect tokens without a round trip to the server (docs/protocol.md, "Minting tokens"): a
// matchmaker that holds the fleet's token key mints a token for any server it knows the public address
// and instance of, with exactly the bytes the admin RPC's IssueConnectToken would produce (both call
// protocol/connect_token.hpp's issue_connect_token). The server publishes its instance in GET
// /api/matches ("server_instance") and, under Agones, in the GameServer annotation
// `shiftcast-server-instance`; without it a token is refused as WrongServer.
//
//   MintRequest r;
//   r.token_key = *key_from_hex(line);                         // the server's [security] token_key_file
//   r.server_address = "203.0.113.7:40000";                    // the server's public_address
//   r.server_instance = *parse_server_instance("0123456789abcdef");
//   r.match_id = 1; r.client_id = 42; r.expires_at = now + 30;
//   MintResult m = mint_connect_token(r, now);
//   if (!m.ok()) refuse(m.error);                              // says which input and why
//   hand_to_client(connect_token_json(*m.token));              // tools/token/token_json.hpp
//
// Everything here is a value: no clock, no file, no global state (the caller passes `now`).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/connect_token.hpp"
#include "protocol/crypto.hpp"

namespace shiftcast {

struct MintRequest {
  Key token_key{};
  std::string server_address;         // "ip:port" or "[ipv6]:port": the server's public_address, exactly
  std::uint64_t server_instance = 0;  // the server process's instance; never 0
  std::uint32_t match_id = 0;         // never 0
  std::uint64_t client_id = 0;        // never 0
  std::uint64_t expires_at = 0;       // unix seconds: after now, at most kMaxTokenValidSeconds ahead
  // Fixed values make the token reproducible (test vectors); absent, each is drawn fresh at random, as
  // every real token's must be.
  std::optional<TokenNonce> nonce;
  std::optional<Key> client_to_server;
  std::optional<Key> server_to_client;
};

struct MintResult {
  std::optional<ConnectToken> token;
  std::string error;  // set when token is not: names the input and the rule
  bool ok() const { return token.has_value(); }
};

// Checks every input (all problems at once, one per line), then seals the token.
MintResult mint_connect_token(const MintRequest& request, std::uint64_t now_unix);

// "ip:port" with a dotted-quad IPv4 address, or "[ipv6]:port"; port 1..65535. The forms the server's
// `public_address` takes; a token names the address byte for byte, so write it as the server does.
bool is_server_address(std::string_view text);

// A server instance as the server publishes it: exactly 16 hex digits (either case). Nothing on any
// other text; 0 parses (the caller refuses it with its own message).
std::optional<std::uint64_t> parse_server_instance(std::string_view hex);
// The published form: 16 lowercase hex digits.
std::string server_instance_hex(std::uint64_t instance);

// Lowercase hex of bytes, and the reverse (exactly `size` bytes; nothing on other text).
std::string to_hex(std::span<const std::uint8_t> bytes);
std::optional<std::vector<std::uint8_t>> from_hex(std::string_view hex, std::size_t size);

}  // namespace shiftcast
