// The minted token as a matchmaker hands it to a game client (docs/protocol.md, "Minting tokens"): a JSON
// object with the fields of IssueConnectTokenReply, numbers as JSON integers and every byte field as
// lowercase hex. The client keeps the two keys and sends the rest in its ConnectionRequest
// (build_connection_request, or `shiftcast-token --format request` for the datagram itself). The keys
// are secrets of that one client: deliver the JSON over a secure channel (HTTPS), as the RPC reply.
//
//   std::string json = connect_token_json(token);                 // what shiftcast-token prints
//   std::optional<ConnectToken> t = connect_token_from_json(json); // a C++ client reading it back
//
// The layout is fixed (two-space indent, one field per line, this order), so the text is a test vector
// too: the same token always prints the same bytes, and so does tests/contract/mint_token.py.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "protocol/connect_token.hpp"

namespace shiftcast {

std::string connect_token_json(const ConnectToken& token);

// Reads the object connect_token_json writes (whitespace between tokens is free, fields in any order,
// every field required, nothing else allowed). Nothing on any other text. server_instance is not part
// of the JSON (a client never needs it) and reads as 0.
std::optional<ConnectToken> connect_token_from_json(std::string_view json);

}  // namespace shiftcast
