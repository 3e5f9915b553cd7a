// http_get: one blocking HTTP/1.1 GET over a plain TCP socket, for scraping a server's /metrics from a
// tool. Not a general client: it asks for `Connection: close`, reads a Content-Length body (or, with no
// length, up to the end of the stream), and refuses chunked bodies, oversized responses and anything
// slower than the timeout, which bounds the whole exchange (name lookup aside).
//
//   HttpResponse r = http_get("127.0.0.1", 40002, "/metrics", std::chrono::seconds(5));
//   if (!r.error.empty()) return fail(r.error);       // connect refused, timeout, malformed response
//   if (r.status != 200) return fail("HTTP " + std::to_string(r.status));
//   use(r.body);
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace shiftcast {

struct HttpResponse {
  std::string error;  // non-empty: no valid response (the other fields are then meaningless)
  int status = 0;
  std::string body;
};

// Large enough for a /metrics page of many matches, small enough that a broken peer cannot exhaust memory.
inline constexpr std::size_t kHttpGetMaxResponseBytes = 64u << 20;

HttpResponse http_get(const std::string& host, std::uint16_t port, const std::string& target,
                      std::chrono::milliseconds timeout);

}  // namespace shiftcast
