// Target: the envelope verifier and the handshake's readers, the connected packet's opener, and the
// connected message's reader with the bit streams inside it (the stateful readers have their own
// targets: fuzz_packet, fuzz_rpc_handlers). Every input is tried as a datagram and as an opened message.
// Promise: verify_envelope refuses with a typed reason or hands out an envelope every reader may walk;
// each reader answers with an error value, never a crash; and whatever reads is the one encoding of
// itself: written back, it gives the same bytes.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "fuzz/fuzz_support.hpp"
#include "protocol/connected_message.hpp"
#include "protocol/contact_event_codec.hpp"
#include "protocol/entity_prediction.hpp"
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
  SnapshotState held;         // the baseline a client holds: ids 1, 3, 5, ... 31
  SnapshotState predecessor;  // what it was decoded against, two ticks before it: ids 1, 5, 9, ... 29
  Fixture() {
    for (std::uint32_t id = 1; id < 32; id += 2) {
      held.push_back(wire::EntityState(id, std::uint8_t(id % 3), 0, std::uint16_t(id * 1000),
                                       wire::QuantizedVec(std::int32_t(id) * 16, -std::int32_t(id), 64)));
      if (id % 4 == 1) {
        predecessor.push_back(
            wire::EntityState(id, 0, 0, std::uint16_t(id * 999),
                              wire::QuantizedVec(std::int32_t(id) * 8, std::int32_t(id), 60)));
      }
    }
  }
};

void check_applied(const AppliedDelta& applied) {
  if (applied.error != wire::ErrorCode::Ok) return;
  for (std::size_t i = 1; i < applied.state.size(); ++i)
    require(applied.state[i - 1].id() < applied.state[i].id(), "apply_delta: state not strictly ascending");
}

void read_handshake(const Fixture& f, const wire::Envelope& envelope) {
  require(envelope.message() != nullptr, "verify_envelope: Ok without a message");
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
    default:
      break;  // the RPC's messages: fuzz_rpc_handlers
  }
}

void require_same(const std::vector<std::uint8_t>& again, ByteSpan bytes, const char* what) {
  require(std::equal(again.begin(), again.end(), bytes.begin(), bytes.end()), what);
}
void require_same(const BitWriter& again, ByteSpan bytes, const char* what) {
  require(std::equal(again.bytes().begin(), again.bytes().end(), bytes.begin(), bytes.end()), what);
}

void read_server_frame_sections(const Fixture& f, const ServerFrameMessage& frame) {
  if (frame.snapshot) {
    // The held state as the frame's baseline, decoded against the fixture's predecessor two ticks before.
    const std::uint64_t tb = frame.snapshot->baseline_tick;
    check_applied(apply_delta(SnapshotBaseline{f.held, tb, f.predecessor, tb > 2 ? tb - 2 : 0}, frame.tick,
                              frame.snapshot->block));
  }
  if (frame.own) {
    BitReader in(*frame.own);
    const std::optional<OwnStateBits> read = read_own_state(in);
    if (read && in.finish() == BitReadError::kNone) {
      // A state re-encodes against the reference that resolves it (any one does), unless it holds a whole
      // coordinate that the writer would send relative to that reference (then it is Malformed).
      const wire::QuantizedVec reference(16, -32, 48);
      const wire::QuantizedVec* against = read->any_relative() ? &reference : nullptr;
      const ResolvedOwnState own = resolve_own_state(*read, against);
      if (own.state) {
        BitWriter again;
        write_own_state(again, *own.state, against);
        require_same(again, *frame.own, "own state: a decoded state re-encodes differently");
      }
    }
  }
  if (frame.events) {
    BitReader in(*frame.events);
    const auto events = read_contact_events(in, frame.tick);
    if (events && in.finish() == BitReadError::kNone) {
      BitWriter again;
      const std::size_t sent = write_contact_events(again, *events, frame.tick, frame.events->size() * 8);
      require(sent == events->size(), "contact events: decoded events do not fit their own bytes");
      require_same(again, *frame.events, "contact events: decoded events re-encode differently");
      ReliableEventReceiver receiver(64);
      receiver.receive(*events);
      (void)receiver.take();
    }
  }
}

void read_commands(ByteSpan packed) {
  if (packed.empty()) return;
  BitReader in(packed);
  const std::optional<ClientCommands> commands = read_client_commands(in);
  if (commands && in.finish() == BitReadError::kNone) {
    BitWriter again;
    write_client_commands(again, *commands);
    require_same(again, packed, "client commands: decoded commands re-encode differently");
  }
}

// A connected packet's plaintext: read, written back byte for byte, and its sections read.
void read_message(const Fixture& f, ByteSpan bytes) {
  const ReadMessage read = read_connected_message(bytes);
  if (read.error != wire::ErrorCode::Ok) return;
  const ConnectedMessage& m = read.message;
  std::vector<std::uint8_t> again;
  switch (m.kind) {
    case MessageKind::kClientFrame:
      write_client_frame(again, m.commands);
      read_commands(m.commands);
      break;
    case MessageKind::kServerFrame:
      write_server_frame(again, m.server_frame);
      read_server_frame_sections(f, m.server_frame);
      break;
    case MessageKind::kKeepAlive:
      write_keep_alive(again, m.keep_alive);
      (void)read_session_info(m.keep_alive.session);
      break;
    case MessageKind::kDisconnect:
      write_disconnect(again, m.disconnect_code);
      break;
  }
  require_same(again, bytes, "connected message: a decoded message re-encodes differently");
}

}  // namespace
}  // namespace shiftcast::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace shiftcast;
  static const fuzz::Fixture fixture;
  const std::vector<std::uint8_t> bytes = fuzz::copy({data, size});
  // The bytes as an opened message (what a peer holding the key can make the reader see).
  fuzz::read_message(fixture, bytes);
  switch (datagram_form(bytes)) {
    case DatagramForm::kConnectedPacket:
      // Sealed packets open only when the fuzzer finds the tag; the header checks run on everything.
      for (const Direction d : {Direction::kClientToServer, Direction::kServerToClient}) {
        const OpenedPacket opened = open_packet(
            bytes, d, d == Direction::kClientToServer ? fuzz::kClientToServerKey : fuzz::kServerToClientKey,
            {fuzz::kMatch, fuzz::kClient}, {0, 0xFFFF});
        if (opened.error == wire::ErrorCode::Ok) fuzz::read_message(fixture, opened.message);
      }
      return 0;
    case DatagramForm::kInvalid:
      return 0;
    case DatagramForm::kEnvelope:
      break;
  }
  // The RPC's limit (the larger one); the UDP channel's is checked the same way, only smaller.
  const EnvelopeView view = verify_envelope(bytes, kMaxRpcFrameBytes);
  if (view.error != wire::ErrorCode::Ok) {
    fuzz::require(view.envelope == nullptr, "verify_envelope: an error with an envelope");
    return 0;
  }
  fuzz::require(view.envelope != nullptr, "verify_envelope: Ok without an envelope");
  fuzz::read_handshake(fixture, *view.envelope);
  return 0;
}
