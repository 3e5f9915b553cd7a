#include "tests/support/udp_test_client.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace shiftcast {
namespace {

// How long one receive waits before the session is polled again (resends, keep-alives).
constexpr int kPumpSliceMs = 5;

double unix_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

UdpTestClient::UdpTestClient(std::uint16_t server_port, const ConnectToken& token,
                             ClientSessionSettings settings)
    : session_(token,
               [&] {
                 settings.unix_time_offset = 0;
                 return settings;
               }()),
      start_(std::chrono::steady_clock::now()) {
  fd_ = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(server_port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
}

UdpTestClient::~UdpTestClient() {
  if (fd_ >= 0) ::close(fd_);
}

double UdpTestClient::now() const {
  // The session's clock is unix time here, so token expiry is judged on the same clock as the server's.
  return unix_seconds();
}

void UdpTestClient::send_raw(std::span<const std::uint8_t> datagram) {
  ::send(fd_, datagram.data(), datagram.size(), 0);
}

void UdpTestClient::send_all(const std::vector<std::vector<std::uint8_t>>& datagrams) {
  for (const auto& d : datagrams)
    send_raw(d);
}

bool UdpTestClient::receive_once(int timeout_ms) {
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, timeout_ms) <= 0) return false;
  DatagramBuffer buffer;  // aligned: FlatBuffers reads the datagram in place
  const ssize_t n = ::recv(fd_, buffer.data(), buffer.size(), 0);
  if (n <= 0) return false;
  const std::span<const std::uint8_t> datagram(buffer.data(), std::size_t(n));
  const EnvelopeView view = verify_envelope(datagram, kMaxDatagramBytes);
  if (view.error == wire::ErrorCode::Ok) {
    if (const auto* denied = view.envelope->message_as_ConnectionDenied()) denials_.push_back(denied->code());
  }
  session_.on_datagram(datagram, now());
  for (auto& e : session_.take_events())
    events_.push_back(e);
  return true;
}

bool UdpTestClient::pump_until(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    send_all(session_.poll(now()));
    while (receive_once(kPumpSliceMs)) {
    }
  }
  return true;
}

void UdpTestClient::pump_for(std::chrono::milliseconds duration) {
  // At least one pass, even for a zero duration: a client pumped "for 0 ms" still answers the server.
  const auto deadline = std::chrono::steady_clock::now() + duration;
  bool passed = false;
  pump_until(
      [&] {
        const bool done = passed && std::chrono::steady_clock::now() >= deadline;
        passed = true;
        return done;
      },
      duration + std::chrono::seconds(1));
}

bool UdpTestClient::connect(std::chrono::milliseconds timeout) {
  pump_until(
      [&] {
        const ClientState s = session_.state();
        return s != ClientState::kSendingRequest && s != ClientState::kSendingResponse;
      },
      timeout);
  return session_.state() == ClientState::kConnected;
}

void UdpTestClient::send_command(const PlayerInput& input, double view_tick) {
  const std::vector<std::uint8_t> d = session_.send_command(input, view_tick, now());
  if (!d.empty()) send_raw(d);
}

void UdpTestClient::disconnect() {
  // The same goodbye a few times, as the server does: the first copy to arrive is taken.
  const std::vector<std::uint8_t> bye = session_.disconnect(now());
  for (int i = 0; i < kGoodbyeCopies; ++i)
    send_raw(bye);
}

}  // namespace shiftcast
