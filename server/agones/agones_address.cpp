#include "server/agones/agones_address.hpp"

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <thread>

#include "server/agones/sdk_http.hpp"

namespace shiftcast {

namespace asio = boost::asio;

AgonesAddress agones_address_of(const GameServerView& server) {
  if (server.address.empty()) return {{}, "the GameServer has no status.address yet"};
  const auto port = server.ports.find(kAgonesGamePortName);
  if (port == server.ports.end())
    return {{},
            std::string("the GameServer has no port named \"") + kAgonesGamePortName + "\" in status.ports"};
  const bool ipv6 = server.address.find(':') != std::string::npos;
  return {(ipv6 ? "[" + server.address + "]" : server.address) + ":" + std::to_string(port->second), {}};
}

AgonesAddress wait_for_agones_address(std::uint16_t sdk_port, const AgonesSettings& settings,
                                      std::chrono::milliseconds wait) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline = Clock::now() + wait;
  const asio::ip::tcp::endpoint sidecar{asio::ip::make_address("127.0.0.1"), sdk_port};
  std::chrono::milliseconds backoff{std::max(1, settings.retry_ms)};
  constexpr std::chrono::milliseconds kLongestBackoff{5000};
  std::string last;
  for (;;) {
    asio::io_context io;
    SdkReply reply;
    sdk_call(io.get_executor(), sidecar, {boost::beast::http::verb::get, "/gameserver", ""},
             std::chrono::milliseconds(std::max(1, settings.call_timeout_ms)),
             [&reply](SdkReply r) { reply = std::move(r); });
    io.run();
    if (reply.ok()) {
      const GameServerRead read = read_game_server(reply.body);
      if (!read.ok()) {
        last = "GET /gameserver: " + read.error;
      } else {
        AgonesAddress found = agones_address_of(read.server);
        if (found.ok()) return found;
        last = found.error;
      }
    } else {
      last = "GET /gameserver: " + (reply.reached ? "HTTP " + std::to_string(reply.status) : reply.error);
    }
    if (Clock::now() + backoff > deadline)
      return {{}, "public_address = \"agones\": no address from the sidecar within the wait (" + last + ")"};
    std::this_thread::sleep_for(backoff);  // startup only: nothing else runs yet
    backoff = std::min(backoff * 2, kLongestBackoff);
  }
}

}  // namespace shiftcast
