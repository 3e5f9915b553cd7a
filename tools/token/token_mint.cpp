#include "tools/token/token_mint.hpp"

#include <arpa/inet.h>

#include <charconv>
#include <vector>

#include "protocol/wire_constants.hpp"

namespace shiftcast {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool parses_as(int family, std::string_view text) {
  if (text.empty() || text.size() > INET6_ADDRSTRLEN) return false;
  unsigned char buffer[sizeof(in6_addr)];
  const std::string s(text);
  return ::inet_pton(family, s.c_str(), buffer) == 1;
}

}  // namespace

bool is_server_address(std::string_view text) {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return false;
  std::string_view host = text.substr(0, colon);
  const std::string_view port = text.substr(colon + 1);
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  // from_chars takes no sign, but it would take leading zeros: "040000" is not how a server writes it.
  if (ec != std::errc() || end != port.data() + port.size() || value < 1 || value > 65535 ||
      port.front() == '0') {
    return false;
  }
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    return parses_as(AF_INET6, host.substr(1, host.size() - 2));
  return parses_as(AF_INET, host);
}

std::optional<std::uint64_t> parse_server_instance(std::string_view hex) {
  if (hex.size() != 16) return std::nullopt;
  std::uint64_t value = 0;
  for (char c : hex) {
    const int digit = hex_value(c);
    if (digit < 0) return std::nullopt;
    value = value << 4 | std::uint64_t(digit);
  }
  return value;
}

std::string server_instance_hex(std::uint64_t instance) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, instance >>= 4)
    out[std::size_t(i)] = kDigits[instance & 0xf];
  return out;
}

std::string to_hex(std::span<const std::uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (std::uint8_t b : bytes) {
    out += kDigits[b >> 4];
    out += kDigits[b & 0xf];
  }
  return out;
}

std::optional<std::vector<std::uint8_t>> from_hex(std::string_view hex, std::size_t size) {
  if (hex.size() != 2 * size) return std::nullopt;
  std::vector<std::uint8_t> out(size);
  for (std::size_t i = 0; i < size; ++i) {
    const int high = hex_value(hex[2 * i]);
    const int low = hex_value(hex[2 * i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    out[i] = std::uint8_t(high * 16 + low);
  }
  return out;
}

MintResult mint_connect_token(const MintRequest& request, std::uint64_t now_unix) {
  std::vector<std::string> problems;
  if (!is_server_address(request.server_address)) {
    problems.push_back("server address \"" + request.server_address +
                       "\": must be ip:port (port 1..65535) or [ipv6]:port, as the server's public_address");
  }
  if (request.server_instance == 0) {
    problems.push_back(
        "server instance 0000000000000000: no server has instance 0 (read the server's own from GET "
        "/api/matches or its shiftcast-server-instance annotation)");
  }
  if (request.match_id == 0) problems.push_back("match id 0: match ids start at 1");
  if (request.client_id == 0) problems.push_back("client id 0: client ids start at 1");
  if (request.expires_at <= now_unix) {
    problems.push_back("expiry " + std::to_string(request.expires_at) + ": not after now (" +
                       std::to_string(now_unix) + "): the token would be refused as TokenExpired");
  } else if (request.expires_at - now_unix > kMaxTokenValidSeconds) {
    problems.push_back("expiry " + std::to_string(request.expires_at) + ": " +
                       std::to_string(request.expires_at - now_unix) + " s from now, more than " +
                       std::to_string(kMaxTokenValidSeconds) +
                       " s (kMaxTokenValidSeconds, as IssueConnectToken)");
  }
  MintResult result;
  if (!problems.empty()) {
    for (const std::string& p : problems)
      result.error += (result.error.empty() ? "" : "\n") + p;
    return result;
  }
  result.token = issue_connect_token(
      request.token_key, request.server_address, request.match_id, request.client_id, request.expires_at,
      request.nonce ? *request.nonce : random_token_nonce(),
      request.client_to_server ? *request.client_to_server : random_key(),
      request.server_to_client ? *request.server_to_client : random_key(), request.server_instance);
  return result;
}

}  // namespace shiftcast
