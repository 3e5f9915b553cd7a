// RpcTestClient: a blocking TCP client of shiftcast-server's RPC port for end-to-end tests. Frames are
// sent and received whole (protocol/rpc_frame.hpp's 4-byte length prefix); every wait is bounded (poll on
// the socket), never a sleep.
//
//   RpcTestClient rpc(server.ports().rpc);
//   rpc.send(fbb);                                   // a finished Envelope
//   std::optional<std::vector<std::uint8_t>> reply = rpc.receive();
//   std::optional<ConnectToken> t = rpc.issue_token(dev_admin_key(), match_id, client_id);
//
// dev_admin_key(), dev_service_key() and dev_token_key() read the development keys shipped in configs/keys/.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "protocol/connect_token.hpp"
#include "protocol/crypto.hpp"
#include "protocol/envelope.hpp"
#include "protocol/wire_constants.hpp"

namespace shiftcast {

class RpcTestClient {
 public:
  explicit RpcTestClient(std::uint16_t port);
  ~RpcTestClient();
  RpcTestClient(const RpcTestClient&) = delete;
  RpcTestClient& operator=(const RpcTestClient&) = delete;

  bool connected() const { return fd_ >= 0; }
  void close();
  // Any bytes, unframed (bad-input tests).
  bool send_raw(std::span<const std::uint8_t> bytes);
  // A finished Envelope, framed.
  bool send(flatbuffers::FlatBufferBuilder& finished);
  // The next frame's payload, or nothing after `timeout` or when the server closed.
  std::optional<std::vector<std::uint8_t>> receive(
      std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // True when the server closes the connection within `timeout` (anything it sends first is discarded).
  bool closed_by_peer(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // IssueConnectToken with `admin_key`; nothing when refused.
  std::optional<ConnectToken> issue_token(const std::string& admin_key, std::uint32_t match_id,
                                          std::uint64_t client_id, std::uint32_t valid_seconds = 30);

 private:
  int fd_ = -1;
  std::vector<std::uint8_t> buffer_;  // received bytes not yet returned as frames
};

std::string dev_admin_key();
std::string dev_service_key();    // configs/keys/dev-service.key: RPC reads send it
std::string dev_spectator_key();  // configs/keys/dev-spectator.key: the live match views need it
Key dev_token_key();

}  // namespace shiftcast
