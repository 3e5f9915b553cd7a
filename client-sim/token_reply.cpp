#include "client-sim/token_reply.hpp"

#include <algorithm>
#include <exception>

namespace shiftcast {

namespace asio = boost::asio;
using asio::ip::udp;

std::optional<udp::endpoint> token_endpoint(const std::string& address, const asio::ip::address& host) {
  const std::size_t colon = address.rfind(':');
  if (colon == std::string::npos) return std::nullopt;
  boost::system::error_code ec;
  asio::ip::address ip = asio::ip::make_address(address.substr(0, colon), ec);
  if (ec) return std::nullopt;
  int port = 0;
  try {
    port = std::stoi(address.substr(colon + 1));
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (port <= 0 || port > 65535) return std::nullopt;
  if (ip.is_unspecified()) ip = host;
  return udp::endpoint(ip, std::uint16_t(port));
}

std::optional<ConnectToken> token_from_reply(const wire::IssueConnectTokenReply& r) {
  if (r.token_nonce() == nullptr || r.sealed_token() == nullptr || r.client_to_server_key() == nullptr ||
      r.server_to_client_key() == nullptr || r.server_address() == nullptr ||
      r.token_nonce()->size() != kTokenNonceBytes || r.client_to_server_key()->size() != kKeyBytes ||
      r.server_to_client_key()->size() != kKeyBytes)
    return std::nullopt;
  ConnectToken t;
  t.server_address = r.server_address()->str();
  t.match_id = r.match_id();
  t.client_id = r.client_id();
  t.expires_at = r.expires_at();
  std::copy(r.token_nonce()->begin(), r.token_nonce()->end(), t.nonce.begin());
  t.sealed.assign(r.sealed_token()->begin(), r.sealed_token()->end());
  std::copy(r.client_to_server_key()->begin(), r.client_to_server_key()->end(), t.client_to_server.begin());
  std::copy(r.server_to_client_key()->begin(), r.server_to_client_key()->end(), t.server_to_client.begin());
  return t;
}

}  // namespace shiftcast
