// Connect tokens as the admin RPC hands them out (IssueConnectTokenReply), for the simulator's clients:
// the reply's fields checked and copied into a protocol ConnectToken, and the UDP endpoint it names.
//
//   std::optional<ConnectToken> token = token_from_reply(*reply);          // nullopt: malformed
//   std::optional<udp::endpoint> server = token_endpoint(token->server_address, host);
#pragma once

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/udp.hpp>
#include <optional>
#include <string>

#include "protocol/connect_token.hpp"
#include "protocol/envelope.hpp"

namespace shiftcast {

// "ip:port" from a connect token; an unspecified ip (a server bound to 0.0.0.0) means `host`.
std::optional<boost::asio::ip::udp::endpoint> token_endpoint(const std::string& address,
                                                             const boost::asio::ip::address& host);
// The token of a reply; nullopt when a field is missing or has the wrong size.
std::optional<ConnectToken> token_from_reply(const wire::IssueConnectTokenReply& reply);

}  // namespace shiftcast
