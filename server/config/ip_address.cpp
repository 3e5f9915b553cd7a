#include "server/config/ip_address.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace shiftcast {
namespace {

constexpr std::uint8_t kIpv4LoopbackNet = 127;  // 127.0.0.0/8

struct Parsed {
  bool v6 = false;
  std::array<std::uint8_t, 16> bytes{};  // v4: the first 4
};

std::optional<Parsed> parse(std::string_view text) {
  Parsed out;
  const std::string s(text);
  if (inet_pton(AF_INET, s.c_str(), out.bytes.data()) == 1) return out;
  // A scope (interface name or number) follows '%' on link-local IPv6 addresses.
  const std::string address = s.substr(0, s.find('%'));
  if (address.size() + 1 == s.size()) return std::nullopt;  // '%' with nothing after it
  if (inet_pton(AF_INET6, address.c_str(), out.bytes.data()) != 1) return std::nullopt;
  out.v6 = true;
  return out;
}

}  // namespace

bool is_ip_address(std::string_view text) {
  return parse(text).has_value();
}

bool is_loopback_address(std::string_view address) {
  const std::optional<Parsed> a = parse(address);
  if (!a) return false;
  if (!a->v6) return a->bytes[0] == kIpv4LoopbackNet;
  const auto& b = a->bytes;
  // ::ffff:a.b.c.d, an IPv4 address in IPv6 form.
  const bool v4_mapped = std::all_of(b.begin(), b.begin() + 10, [](std::uint8_t x) { return x == 0; }) &&
                         b[10] == 0xff && b[11] == 0xff;
  if (v4_mapped) return b[12] == kIpv4LoopbackNet;
  return std::all_of(b.begin(), b.begin() + 15, [](std::uint8_t x) { return x == 0; }) && b[15] == 1;
}

}  // namespace shiftcast
