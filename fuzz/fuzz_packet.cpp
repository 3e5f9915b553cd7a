// Target: packet open at both ends of a connected channel, with fixed keys. A connected ClientSession
// and the server's ClientConnection for it are built once (a lossless handshake); every input starts
// from copies of the two and feeds each a series of datagrams. A datagram is either raw bytes or a
// connected packet the harness seals with the right key around a fuzzed message, so the readers behind
// the AEAD (ClientFrame, ServerFrame with snapshot deltas and reliable events, KeepAlive, Disconnect) are
// reached. Sequences and acks are fuzzed in full: the 16 bits on the wire then reconstruct to them or
// not (then the packet does not authenticate).
// Promise: every datagram is accepted or refused with a typed reason; the session stays consistent.
//
// Input: items until the input ends, each  u8 op | [sealed: u16 sequence, u16 ack, u32 ack_bits] |
//        u16 length | bytes.  op bit 0: to the client (else the server); bit 1: sealed by the harness;
//        bit 2: sealed for another client; bit 3: the server builds a frame afterwards.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fuzz/fuzz_support.hpp"
#include "protocol/client_session.hpp"
#include "protocol/envelope.hpp"
#include "protocol/handshake.hpp"
#include "protocol/packet.hpp"
#include "server/client_connection.hpp"

namespace shiftcast::fuzz {
namespace {

constexpr double kStart = double(kNowUnix);
constexpr EntityId kOwnEntity = 1;

struct Fixture {
  ClientSession client{issue_connect_token(kTokenKey, kServerAddress, kMatch, kClient, kTokenExpiry,
                                           fixed_nonce(2), kClientToServerKey, kServerToClientKey),
                       {}};
  std::unique_ptr<ClientConnection> server;

  Fixture() {
    const ServerKeys keys{kTokenKey, kChallengeKey};
    for (int i = 0; i < 4 && client.state() != ClientState::kConnected; ++i) {
      for (const auto& d : client.poll(kStart)) {
        const EnvelopeView view = verify_envelope(d, kMaxDatagramBytes);
        require(view.error == wire::ErrorCode::Ok, "fixture: the client's datagram does not verify");
        if (const auto* request = view.envelope->message_as_ConnectionRequest()) {
          const OpenedToken opened = open_connect_token(keys.token_key, *request, kServerAddress, kNowUnix);
          require(opened.error == wire::ErrorCode::Ok, "fixture: token refused");
          client.on_datagram(make_challenge(keys, opened, kClientAddress, fixed_nonce(6), fixed_nonce(7)),
                             kStart);
        } else if (const auto* response = view.envelope->message_as_ChallengeResponse()) {
          const AcceptedChallenge a = open_challenge_response(keys, *response, kClientAddress, kNowUnix);
          require(a.error == wire::ErrorCode::Ok, "fixture: challenge refused");
          server = std::make_unique<ClientConnection>(
              ConnectionParams{a.match_id, a.client_id, a.client_to_server, a.server_to_client,
                               kClientAddress, kOwnEntity},
              ConnectionSettings{}, kStart);
          client.on_datagram(server->build_keepalive(0, kStart), kStart);
        }
      }
    }
    require(client.state() == ClientState::kConnected && server != nullptr, "fixture: handshake failed");
  }
};

// A small world for the server's frames: the client's own entity and two others.
const wire::EntityState kWorld[] = {
    wire::EntityState(1, 0, 0, 100, wire::QuantizedVec(0, 0, 0)),
    wire::EntityState(2, 1, 0, 200, wire::QuantizedVec(160, 0, 16)),
    wire::EntityState(9, 2, 1, 300, wire::QuantizedVec(-160, 32, 0)),
};

}  // namespace
}  // namespace shiftcast::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace shiftcast;
  using namespace shiftcast::fuzz;
  static const Fixture fixture;
  ClientSession client = fixture.client;
  ClientConnection server = *fixture.server;

  Input in(data, size);
  double now = kStart;
  std::uint64_t tick = 1;
  for (int item = 0; item < 64 && !in.empty(); ++item) {
    const std::uint8_t op = in.u8();
    const bool to_client = op & 1;
    const bool sealed = op & 2;
    std::vector<std::uint8_t> datagram;
    if (sealed) {
      PacketHeader header;
      header.match_id = kMatch;
      header.client_id = op & 4 ? kClient + 1 : kClient;
      header.sequence = in.u16();
      header.ack = in.u16();
      header.ack_bits = in.u32();
      datagram = seal_packet(header, to_client ? Direction::kServerToClient : Direction::kClientToServer,
                             to_client ? kServerToClientKey : kClientToServerKey, in.piece());
    } else {
      datagram = copy(in.piece());
    }
    now += 0.01;
    if (to_client) {
      (void)client.on_datagram(datagram, now);
      for (const auto& e : client.take_events())
        require(e.sequence() >= 1, "client: delivered an event with sequence 0");
      const SnapshotState& state = client.world_state();
      for (std::size_t i = 1; i < state.size(); ++i)
        require(state[i - 1].id() < state[i].id(), "client: held snapshot not strictly ascending");
    } else {
      // As the match does: a connected packet from the client's address goes to its connection.
      if (datagram_form(datagram) == DatagramForm::kConnectedPacket)
        (void)server.on_packet(datagram, kClientAddress, now);
      std::vector<PlayerInput> commands;  // one tick's take, as the match does
      (void)server.take_commands(commands);
    }
    if (op & 8) {
      const std::vector<std::uint8_t> frame = server.build_frame(tick++, kWorld, Vec3{0, 0, 0}, now);
      require(frame.size() <= kMaxDatagramBytes, "server: a frame over the datagram limit");
      if (!frame.empty()) (void)client.on_datagram(frame, now);
    }
  }
  return 0;
}
