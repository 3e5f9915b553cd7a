// Target: the envelope verifier, then the reader of every message a peer can send that has one outside
// a connection's state (the stateful readers have their own targets: fuzz_packet, fuzz_rpc_handlers).
// Promise: verify_envelope refuses with a typed reason or hands out an envelope every reader may walk;
// each reader answers with an error value, never a crash, over any bytes that verify.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "fuzz/fuzz_support.hpp"
#include "protocol/contact_event_codec.hpp"
#include "protocol/envelope.hpp"
#include "protocol/handshake.hpp"
#include "protocol/input_codec.hpp"
#include "protocol/own_state_codec.hpp"
#include "protocol/packet.hpp"
#include "protocol/reliable_events.hpp"
#include "protocol/snapshot_delta.hpp"

namespace shiftcast::fuzz {
namespace {

struct Fixture {
  ServerKeys keys{kTokenKey, kChallengeKey};
  ConnectToken token = issue_connect_token(kTokenKey, kServerAddress, kMatch, kClient, kTokenExpiry,
                                           fixed_nonce(2), kClientToServerKey, kServerToClientKey);
  SnapshotState held;  // the baseline a client holds: ids 1, 3, 5, ... 31
  Fixture() {
    for (std::uint32_t id = 1; id < 32; id += 2)
      held.push_back(wire::EntityState(id, std::uint8_t(id % 3), 0, std::uint16_t(id * 1000),
                                       wire::QuantizedVec(std::int32_t(id) * 16, -std::int32_t(id), 64)));
  }
};

void check_applied(const AppliedDelta& applied) {
  if (applied.error != wire::ErrorCode::Ok) return;
  for (std::size_t i = 1; i < applied.state.size(); ++i)
    require(applied.state[i - 1].id() < applied.state[i].id(), "apply_delta: state not strictly ascending");
}

void read_message(const Fixture& f, const wire::Envelope& envelope, int depth);

void read_inner(const Fixture& f, const OpenedPacket& opened, int depth) {
  if (opened.error != wire::ErrorCode::Ok) return;
  const wire::Envelope* inner = opened.inner_envelope();
  require(inner != nullptr, "open_packet: Ok without an inner envelope");
  read_message(f, *inner, depth + 1);
}

void read_message(const Fixture& f, const wire::Envelope& envelope, int depth) {
  require(envelope.message() != nullptr, "verify_envelope: Ok without a message");
  if (depth > 1) return;  // a packet inside a packet is refused by the channel; reading it once is enough
  switch (envelope.message_type()) {
    case wire::Message::ConnectionRequest:
      (void)open_connect_token(f.keys.token_key, *envelope.message_as_ConnectionRequest(), kServerAddress,
                               kNowUnix);
      break;
    case wire::Message::ChallengeResponse:
      (void)open_challenge_response(f.keys, *envelope.message_as_ChallengeResponse(), kClientAddress,
                                    kNowUnix);
      break;
    case wire::Message::ConnectionChallenge:
      (void)build_challenge_response(f.token, *envelope.message_as_ConnectionChallenge());
      break;
    case wire::Message::Packet: {
      const wire::Packet& packet = *envelope.message_as_Packet();
      read_inner(f, open_packet(packet, Direction::kClientToServer, kClientToServerKey), depth);
      read_inner(f, open_packet(packet, Direction::kServerToClient, kServerToClientKey), depth);
      break;
    }
    case wire::Message::ServerFrame: {
      const wire::ServerFrame& frame = *envelope.message_as_ServerFrame();
      if (frame.snapshot() != nullptr) check_applied(apply_delta(f.held, *frame.snapshot()));
      if (const auto* packed = frame.own_packed()) {
        // A decoded own state is the one encoding of itself: writing it back gives the same bytes.
        BitReader in({packed->data(), packed->size()});
        const std::optional<wire::OwnState> own = read_own_state(in);
        if (own && in.finish() == BitReadError::kNone) {
          BitWriter again;
          write_own_state(again, *own);
          require(std::equal(again.bytes().begin(), again.bytes().end(), packed->begin(), packed->end()),
                  "own state: a decoded state re-encodes differently");
        }
      }
      if (const auto* packed = frame.events_packed()) {
        // Decoded events are the one encoding of themselves: writing them back gives the same bytes.
        BitReader in({packed->data(), packed->size()});
        const auto events = read_contact_events(in, frame.tick());
        if (events && in.finish() == BitReadError::kNone) {
          BitWriter again;
          const std::size_t sent = write_contact_events(again, *events, frame.tick(), packed->size() * 8);
          require(sent == events->size(), "contact events: decoded events do not fit their own bytes");
          require(std::equal(again.bytes().begin(), again.bytes().end(), packed->begin(), packed->end()),
                  "contact events: decoded events re-encode differently");
          ReliableEventReceiver receiver(64);
          receiver.receive(*events);
          (void)receiver.take();
        }
      }
      break;
    }
    case wire::Message::ClientFrame: {
      const wire::ClientFrame& frame = *envelope.message_as_ClientFrame();
      if (const auto* packed = frame.commands_packed()) {
        // Decoded commands are the one encoding of themselves: writing them back gives the same bytes.
        BitReader in({packed->data(), packed->size()});
        const std::optional<ClientCommands> commands = read_client_commands(in);
        if (commands && in.finish() == BitReadError::kNone) {
          BitWriter again;
          write_client_commands(again, *commands);
          require(std::equal(again.bytes().begin(), again.bytes().end(), packed->begin(), packed->end()),
                  "client commands: decoded commands re-encode differently");
        }
      }
      break;
    }
    default:
      break;  // the RPC's messages: fuzz_rpc_handlers
  }
}

}  // namespace
}  // namespace shiftcast::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace shiftcast;
  static const fuzz::Fixture fixture;
  const std::vector<std::uint8_t> bytes = fuzz::copy({data, size});
  // The RPC's limit (the larger one); the UDP channel's is checked the same way, only smaller.
  const EnvelopeView view = verify_envelope(bytes, kMaxRpcFrameBytes);
  if (view.error != wire::ErrorCode::Ok) {
    fuzz::require(view.envelope == nullptr, "verify_envelope: an error with an envelope");
    return 0;
  }
  fuzz::require(view.envelope != nullptr, "verify_envelope: Ok without an envelope");
  fuzz::read_message(fixture, *view.envelope, 0);
  return 0;
}
