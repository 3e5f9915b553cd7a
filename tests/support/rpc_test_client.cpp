#include "tests/support/rpc_test_client.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>

#include "protocol/rpc_frame.hpp"

namespace shiftcast {

RpcTestClient::RpcTestClient(std::uint16_t port) {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd_);
    fd_ = -1;
    return;
  }
  int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

RpcTestClient::~RpcTestClient() {
  close();
}

void RpcTestClient::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool RpcTestClient::send_raw(std::span<const std::uint8_t> bytes) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += std::size_t(n);
  }
  return true;
}

bool RpcTestClient::send(flatbuffers::FlatBufferBuilder& finished) {
  std::vector<std::uint8_t> frame;
  append_frame(frame, {finished.GetBufferPointer(), finished.GetSize()});
  return send_raw(frame);
}

std::optional<std::vector<std::uint8_t>> RpcTestClient::receive(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (buffer_.size() >= kRpcPrefixBytes) {
      const std::uint32_t length = std::uint32_t(buffer_[0]) | std::uint32_t(buffer_[1]) << 8 |
                                   std::uint32_t(buffer_[2]) << 16 | std::uint32_t(buffer_[3]) << 24;
      if (buffer_.size() >= kRpcPrefixBytes + length) {
        std::vector<std::uint8_t> payload(buffer_.begin() + kRpcPrefixBytes,
                                          buffer_.begin() + kRpcPrefixBytes + length);
        buffer_.erase(buffer_.begin(), buffer_.begin() + kRpcPrefixBytes + length);
        return payload;
      }
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || fd_ < 0) return std::nullopt;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, int(left.count())) <= 0) return std::nullopt;
    std::uint8_t chunk[65536];
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0) return std::nullopt;
    buffer_.insert(buffer_.end(), chunk, chunk + n);
  }
}

bool RpcTestClient::closed_by_peer(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, int(left.count())) <= 0) return false;
    std::uint8_t chunk[4096];
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0) return true;
  }
}

std::optional<ConnectToken> RpcTestClient::issue_token(const std::string& admin_key, std::uint32_t match_id,
                                                       std::uint64_t client_id, std::uint32_t valid_seconds) {
  flatbuffers::FlatBufferBuilder fbb;
  const auto body =
      wire::CreateIssueConnectTokenDirect(fbb, admin_key.c_str(), match_id, client_id, valid_seconds);
  finish_envelope(fbb, wire::Message::IssueConnectToken, body.Union(), client_id);
  if (!send(fbb)) return std::nullopt;
  const auto reply = receive();
  if (!reply) return std::nullopt;
  const EnvelopeView v = verify_envelope(*reply, kMaxRpcFrameBytes);
  if (v.error != wire::ErrorCode::Ok) return std::nullopt;
  const wire::IssueConnectTokenReply* r = v.envelope->message_as_IssueConnectTokenReply();
  if (r == nullptr || r->token_nonce() == nullptr || r->sealed_token() == nullptr ||
      r->client_to_server_key() == nullptr || r->server_to_client_key() == nullptr ||
      r->token_nonce()->size() != kTokenNonceBytes || r->client_to_server_key()->size() != kKeyBytes ||
      r->server_to_client_key()->size() != kKeyBytes)
    return std::nullopt;
  ConnectToken t;
  t.server_address = r->server_address() ? r->server_address()->str() : "";
  t.match_id = r->match_id();
  t.client_id = r->client_id();
  t.expires_at = r->expires_at();
  std::copy(r->token_nonce()->begin(), r->token_nonce()->end(), t.nonce.begin());
  t.sealed.assign(r->sealed_token()->begin(), r->sealed_token()->end());
  std::copy(r->client_to_server_key()->begin(), r->client_to_server_key()->end(), t.client_to_server.begin());
  std::copy(r->server_to_client_key()->begin(), r->server_to_client_key()->end(), t.server_to_client.begin());
  return t;
}

namespace {

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
    line.pop_back();
  return line;
}

}  // namespace

std::string dev_admin_key() {
  return first_line(std::string(SHIFTCAST_SOURCE_DIR) + "/configs/keys/dev-admin.key");
}

std::string dev_service_key() {
  return first_line(std::string(SHIFTCAST_SOURCE_DIR) + "/configs/keys/dev-service.key");
}

std::string dev_spectator_key() {
  return first_line(std::string(SHIFTCAST_SOURCE_DIR) + "/configs/keys/dev-spectator.key");
}

Key dev_token_key() {
  std::ifstream in(std::string(SHIFTCAST_SOURCE_DIR) + "/configs/keys/dev-token.key");
  std::string line;
  std::getline(in, line);
  return key_from_hex(line).value_or(Key{});
}

}  // namespace shiftcast
