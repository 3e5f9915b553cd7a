// UdpTestClient: a ClientSession (protocol/client_session.hpp) on a real loopback UDP socket, for
// end-to-end tests against shiftcast-server. Every wait is bounded and event-driven (poll on the
// socket), never a sleep; `now` is the steady clock.
//
//   UdpTestClient c(ports.udp, token);
//   ASSERT_TRUE(c.connect());
//   c.pump_until([&] { return c.session().latest_snapshot_tick() > 10; });
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "protocol/client_session.hpp"

namespace shiftcast {

class UdpTestClient {
 public:
  UdpTestClient(std::uint16_t server_port, const ConnectToken& token, ClientSessionSettings settings = {});
  ~UdpTestClient();
  UdpTestClient(const UdpTestClient&) = delete;
  UdpTestClient& operator=(const UdpTestClient&) = delete;

  double now() const;
  // Runs the handshake until connected (or denied, timed out, or `timeout`).
  bool connect(std::chrono::milliseconds timeout = std::chrono::seconds(20));
  // Receives and polls until `done` returns true or `timeout` passes; true when done.
  bool pump_until(const std::function<bool()>& done,
                  std::chrono::milliseconds timeout = std::chrono::seconds(20));
  // Receives and polls for `duration` (the server's traffic in the meantime is handled).
  void pump_for(std::chrono::milliseconds duration);
  void send_command(const PlayerInput& input, double view_tick);
  void send_raw(std::span<const std::uint8_t> datagram);
  void disconnect();
  ClientSession& session() { return session_; }
  std::vector<wire::ContactEvent>& events() { return events_; }  // every delivered event, in order
  // The code of every ConnectionDenied received, in order, whatever the session made of it.
  const std::vector<wire::ErrorCode>& denials() const { return denials_; }

 private:
  void send_all(const std::vector<std::vector<std::uint8_t>>& datagrams);
  bool receive_once(int timeout_ms);

  int fd_ = -1;
  ClientSession session_;
  std::vector<wire::ContactEvent> events_;
  std::vector<wire::ErrorCode> denials_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace shiftcast
