// IP address text as the config writes it ("127.0.0.1", "::1", "fe80::1%eth0"): whether it is one, and
// whether it names this machine only. The config checks addresses without a network library, so the
// load tester can read the server's config without linking Asio.
//
//   if (!is_ip_address(text)) error("not an IP address");
//   if (!is_loopback_address(config.rpc.bind_address)) refuse_open_reads();
#pragma once

#include <string_view>

namespace shiftcast {

// A numeric IPv4 address (dotted quad) or IPv6 address, the latter with an optional %scope suffix.
bool is_ip_address(std::string_view text);
// True for 127.0.0.0/8 and ::1 (and IPv4-mapped loopback); false for anything else, 0.0.0.0 and :: too.
bool is_loopback_address(std::string_view address);

}  // namespace shiftcast
