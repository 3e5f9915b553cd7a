// The test vectors of docs/protocol.md, rebuilt by the library: the written standard and the code
// cannot drift apart. Each vector in the document is a line `<!-- vector: NAME -->` followed by a
// ```hex block. When a change to the wire is intended, the failure message prints the new hex to paste.
#include <gtest/gtest.h>

#include <sodium.h>
#include <bit>

#include <cctype>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "protocol/connect_token.hpp"
#include "protocol/connected_message.hpp"
#include "protocol/contact_event_codec.hpp"
#include "protocol/entity_block.hpp"
#include "protocol/entity_prediction.hpp"
#include "protocol/envelope.hpp"
#include "protocol/handshake.hpp"
#include "protocol/input_codec.hpp"
#include "protocol/own_state_codec.hpp"
#include "protocol/packet.hpp"
#include "protocol/rpc_frame.hpp"
#include "protocol/snapshot_delta.hpp"
#include "protocol/wire_constants.hpp"

namespace shiftcast {
namespace {

using Bytes = std::vector<std::uint8_t>;

// The fixed inputs docs/protocol.md lists under "Test vectors".
template <std::size_t N>
std::array<std::uint8_t, N> counting(std::uint8_t first) {
  std::array<std::uint8_t, N> out;
  for (std::size_t i = 0; i < N; ++i)
    out[i] = static_cast<std::uint8_t>(first + i);
  return out;
}
const Key kTokenKey = counting<kKeyBytes>(0x00);
const Key kChallengeKey = counting<kKeyBytes>(0x20);
const Key kClientToServer = counting<kKeyBytes>(0x40);
const Key kServerToClient = counting<kKeyBytes>(0x60);
const TokenNonce kTokenNonce = counting<kTokenNonceBytes>(0x80);
const TokenNonce kOuterNonce = counting<kTokenNonceBytes>(0xa0);
const TokenNonce kInnerNonce = counting<kTokenNonceBytes>(0xc0);
constexpr std::uint32_t kMatchId = 7;
constexpr std::uint64_t kClientId = 1001;
constexpr std::uint64_t kExpiresAt = 1'700'000'030;
constexpr std::uint64_t kNow = 1'700'000'000;
constexpr std::uint64_t kServerInstance = 0x0123456789abcdefull;
constexpr char kServerAddress[] = "127.0.0.1:40000";
constexpr char kClientAddress[] = "127.0.0.1:50000";
constexpr PacketHeader kPacketHeader{kMatchId, kClientId, 1, 0, 0};
constexpr std::uint64_t kKeepAliveTick = 100;

const std::vector<std::string> kVectorNames = {"token_ad",
                                               "packet_ad",
                                               "packet_nonce",
                                               "connect_token_sealed",
                                               "connection_request",
                                               "connection_challenge",
                                               "packet_keep_alive",
                                               "rpc_raycast_frame",
                                               "entity_block",
                                               "server_frame_snapshot",
                                               "entity_block_predicted",
                                               "own_state",
                                               "contact_events",
                                               "client_commands"};

// The entity block's fixed inputs (docs/protocol.md "Test vectors"): entity 1 unchanged, 2 moved and
// turned, 3 removed, 4 new.
const SnapshotState kBlockBaseline = {
    wire::EntityState(1, 0, 0, 0, wire::QuantizedVec(0, 0, 0)),
    wire::EntityState(2, 1, 0, 100, wire::QuantizedVec(16, 32, 0)),
    wire::EntityState(3, 2, 1, 0, wire::QuantizedVec(-5, 0, 7)),
};
const SnapshotState kBlockWorld = {
    wire::EntityState(1, 0, 0, 0, wire::QuantizedVec(0, 0, 0)),
    wire::EntityState(2, 1, 0, 200, wire::QuantizedVec(36, 29, 0)),
    wire::EntityState(4, 0, 0, 16384, wire::QuantizedVec(1000, -2000, 64)),
};
constexpr std::uint64_t kBlockTick = 100;
constexpr std::uint64_t kBlockBaselineTick = 98;  // itself sent against the empty state: no prediction

// The predicted entity block's fixed inputs (docs/protocol.md "Test vectors"): a snapshot at tick 100
// against B (tick 98), which was decoded against A (tick 94), so entities run on half their A-to-B motion.
// 1 runs straight (predicted exactly, absent; y rounds -40.5 to -41), 2 turns across yaw 0 and is pushed
// aside, 3 is asleep (B's state, unchanged), 4 is new in B (B's state, moved), 5 stopped at B, 6 is
// removed, 7 is new.
const SnapshotState kPredictedA = {
    wire::EntityState(1, 0, 0, 0, wire::QuantizedVec(0, 0, 0)),
    wire::EntityState(2, 1, 0, 65000, wire::QuantizedVec(16, 32, 0)),
    wire::EntityState(3, 2, 1, 0, wire::QuantizedVec(-9, 0, 7)),
    wire::EntityState(5, 0, 0, 0, wire::QuantizedVec(500, 0, 0)),
    wire::EntityState(6, 1, 0, 0, wire::QuantizedVec(0, 0, 300)),
};
const SnapshotState kPredictedB = {
    wire::EntityState(1, 0, 0, 192, wire::QuantizedVec(160, -81, 0)),
    wire::EntityState(2, 1, 0, 100, wire::QuantizedVec(16, 32, 0)),
    wire::EntityState(3, 2, 1, 0, wire::QuantizedVec(-5, 0, 7)),
    wire::EntityState(4, 0, 0, 16384, wire::QuantizedVec(1000, -2000, 64)),
    wire::EntityState(5, 0, 0, 0, wire::QuantizedVec(540, 0, 0)),
    wire::EntityState(6, 1, 0, 0, wire::QuantizedVec(0, 0, 200)),
};
const SnapshotState kPredictedWorld = {
    wire::EntityState(1, 0, 0, 288, wire::QuantizedVec(240, -122, 0)),
    wire::EntityState(2, 1, 0, 418, wire::QuantizedVec(36, 29, 0)),
    wire::EntityState(3, 2, 1, 0, wire::QuantizedVec(-5, 0, 7)),
    wire::EntityState(4, 0, 0, 16384, wire::QuantizedVec(1010, -2000, 64)),
    wire::EntityState(5, 0, 0, 0, wire::QuantizedVec(540, 0, 0)),
    wire::EntityState(7, 2, 0, 0, wire::QuantizedVec(0, 0, 0)),
};
constexpr std::uint64_t kPredictedATick = 94;
const SnapshotBaseline kPredictedBase{kPredictedB, kBlockBaselineTick, kPredictedA, kPredictedATick};

std::string to_hex(const Bytes& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    out.push_back(kDigits[bytes[i] >> 4]);
    out.push_back(kDigits[bytes[i] & 15]);
    if (i % 32 == 31 && i + 1 < bytes.size()) out.push_back('\n');
  }
  return out;
}

// Every `<!-- vector: NAME -->` followed by a ```hex block, as bytes. A malformed block fails the test.
std::map<std::string, Bytes> read_vectors(const std::string& path) {
  std::ifstream file(path);
  EXPECT_TRUE(file.good()) << path;
  std::map<std::string, Bytes> vectors;
  const std::string marker = "<!-- vector: ";
  std::string line;
  while (std::getline(file, line)) {
    const auto at = line.find(marker);
    if (at == std::string::npos) continue;
    const auto end = line.find(" -->", at);
    const std::string name = line.substr(at + marker.size(), end - at - marker.size());
    EXPECT_TRUE(std::getline(file, line) && line == "```hex") << name << ": no ```hex block after the marker";
    std::string digits;
    while (std::getline(file, line) && line != "```") {
      for (char c : line) {
        if (std::isxdigit(static_cast<unsigned char>(c))) {
          digits.push_back(c);
        } else {
          EXPECT_TRUE(std::isspace(static_cast<unsigned char>(c))) << name << ": '" << c << "'";
        }
      }
    }
    EXPECT_EQ(digits.size() % 2, 0u) << name;
    Bytes bytes;
    for (std::size_t i = 0; i + 1 < digits.size(); i += 2) {
      bytes.push_back(static_cast<std::uint8_t>(std::stoi(digits.substr(i, 2), nullptr, 16)));
    }
    EXPECT_FALSE(vectors.count(name)) << name << " appears twice";
    vectors[name] = std::move(bytes);
  }
  return vectors;
}

ConnectToken vector_token() {
  return issue_connect_token(kTokenKey, kServerAddress, kMatchId, kClientId, kExpiresAt, kTokenNonce,
                             kClientToServer, kServerToClient, kServerInstance);
}

Bytes keep_alive_message() {
  Bytes m;
  write_keep_alive(m, {kKeepAliveTick, 0, std::nullopt});
  return m;
}

// Build order matters for the bytes (not for their meaning): filter, then the request, then the envelope.
Bytes raycast_frame() {
  flatbuffers::FlatBufferBuilder fbb;
  const wire::Vec3f origin(0, 0, 64);
  const wire::Vec3f direction(1, 0, 0);
  const auto filter = wire::CreateQueryFilter(fbb, 0xffffffffu, 0, true);
  const auto request = wire::CreateRaycastRequest(fbb, kMatchId, &origin, &direction, 1000.0f, filter);
  finish_envelope(fbb, wire::Message::RaycastRequest, request.Union(), 1);
  Bytes frame;
  append_frame(frame, {fbb.GetBufferPointer(), fbb.GetSize()});
  return frame;
}

Bytes entity_block() {
  const SnapshotDelta d = encode_delta(kBlockBaseline, kBlockWorld, {1, {}}, 1u << 20);
  BitWriter w;
  write_entity_block(w, kBlockBaseline, d.changed, d.removed);
  return {w.bytes().begin(), w.bytes().end()};
}

Bytes entity_block_predicted() {
  SnapshotState scratch;
  const auto predicted = predict_baseline(kPredictedBase, kBlockTick, scratch);
  const SnapshotDelta d = encode_delta(predicted, kPredictedWorld, {1, {}}, 1u << 20);
  BitWriter w;
  write_entity_block(w, predicted, d.changed, d.removed);
  return {w.bytes().begin(), w.bytes().end()};
}

// A player running on flat ground (docs/protocol.md "Own state" vector).
const wire::OwnState kOwnState(wire::Vec3f(100.5f, -20.25f, 24), wire::Vec3f(320, -12.5f, 0),
                               wire::Vec3f(0, 0, 1), 0, 17, 1);
// The ServerFrame's own player: entity 4 of kBlockWorld, at (1000, -2000, 64) quanta = (62.5, -125, 4),
// a little off its quanta (its own section is relative to them).
constexpr std::uint32_t kFrameOwnEntity = 4;
const wire::OwnState kFrameOwnState(wire::Vec3f(62.51f, -125.02f, 4), wire::Vec3f(320, -12.5f, 0),
                                    wire::Vec3f(0, 0, 1), 0, 17, 1);

Bytes server_frame_snapshot() {
  const Bytes block = entity_block();
  BitWriter own;
  const wire::QuantizedVec reference = kBlockWorld[2].position();
  write_own_state(own, kFrameOwnState, &reference);
  Bytes m;
  write_server_frame(m, {kBlockTick, 7, SnapshotSection{kBlockBaselineTick, kFrameOwnEntity, true, block},
                         own.bytes(), std::nullopt});
  return m;
}

Bytes own_state() {
  BitWriter w;
  write_own_state(w, kOwnState);
  return {w.bytes().begin(), w.bytes().end()};
}

// Two events in a frame of tick 1000 (docs/protocol.md "Contact events" vector): a player landing on a
// level brush, then the next event, two players touching (an explicit normal).
constexpr std::uint64_t kEventsFrameTick = 1000;
const wire::ContactEvent kContactEvents[] = {
    wire::ContactEvent(41, 998, 0.5f, 0, 0, 3, 7, 0, 300, wire::Vec3f(100.5f, -20.25f, 24),
                       wire::Vec3f(0, 0, 1), 0, 320),
    wire::ContactEvent(42, 1000, 0, 0, 0, 0, 7, 9, -1, wire::Vec3f(116, -20.25f, 60),
                       wire::Vec3f(0.6f, 0.8f, 0), -0.25f, 0)};

Bytes contact_events() {
  BitWriter w;
  write_contact_events(w, kContactEvents, kEventsFrameTick, kMaxDatagramBytes * 8);
  return {w.bytes().begin(), w.bytes().end()};
}

// Three commands and the events acknowledgement (docs/protocol.md "ClientFrame commands" vector): a
// player running forward and to the left, turning right, jump held in the newest.
ClientCommands client_commands_input() {
  ClientCommands frame;
  frame.events_received = 42;
  frame.commands.emplace_back(300, 1200.5, 1.0f, -0.5f, 0.75f, 0.125f, kButtonJump);
  frame.commands.emplace_back(299, 1200.5, 1.0f, -0.5f, 0.8f, 0.125f, 0);
  frame.commands.emplace_back(298, 1199.5, 1.0f, 0.0f, 0.85f, 0.1f, 0);
  return frame;
}

Bytes client_commands() {
  BitWriter w;
  write_client_commands(w, client_commands_input());
  return {w.bytes().begin(), w.bytes().end()};
}

// Every vector, built by the library from the fixed inputs.
std::map<std::string, Bytes> library_vectors() {
  std::map<std::string, Bytes> v;
  v["token_ad"] = token_associated_data(kMatchId, kClientId, kExpiresAt);
  v["packet_ad"] = packet_associated_data(kPacketHeader, Direction::kClientToServer);
  // Not a library output: the doc's layout, checked below by opening the packet vector with it.
  v["packet_nonce"] = {0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0};
  const ConnectToken token = vector_token();
  v["connect_token_sealed"] = token.sealed;
  v["connection_request"] = build_connection_request(token);

  const EnvelopeView request = verify_envelope(v["connection_request"], kMaxDatagramBytes);
  EXPECT_EQ(request.error, wire::ErrorCode::Ok);
  const OpenedToken opened = open_connect_token(kTokenKey, *request.envelope->message_as_ConnectionRequest(),
                                                kServerAddress, kNow, kServerInstance);
  EXPECT_EQ(opened.error, wire::ErrorCode::Ok);
  const ServerKeys keys{kTokenKey, kChallengeKey};
  v["connection_challenge"] = make_challenge(keys, opened, kClientAddress, kOuterNonce, kInnerNonce);
  v["packet_keep_alive"] =
      seal_packet(kPacketHeader, Direction::kClientToServer, kClientToServer, keep_alive_message());
  v["rpc_raycast_frame"] = raycast_frame();
  v["entity_block"] = entity_block();
  v["server_frame_snapshot"] = server_frame_snapshot();
  v["entity_block_predicted"] = entity_block_predicted();
  v["own_state"] = own_state();
  v["contact_events"] = contact_events();
  v["client_commands"] = client_commands();
  return v;
}

class TestVectorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(crypto_init());
    doc_ = read_vectors(SHIFTCAST_SOURCE_DIR "/docs/protocol.md");
    library_ = library_vectors();
  }
  std::map<std::string, Bytes> doc_;
  std::map<std::string, Bytes> library_;
};

TEST_F(TestVectorsTest, EveryVectorIsInTheDocument) {
  for (const auto& name : kVectorNames)
    EXPECT_TRUE(doc_.count(name)) << name;
  for (const auto& [name, bytes] : doc_) {
    EXPECT_TRUE(library_.count(name)) << "the document has a vector no test rebuilds: " << name;
  }
}

TEST_F(TestVectorsTest, DocumentMatchesTheLibrary) {
  for (const auto& name : kVectorNames) {
    const Bytes& built = library_.at(name);
    EXPECT_EQ(doc_[name], built) << name << " (" << built.size() << " bytes) is, from the library:\n"
                                 << "<!-- vector: " << name << " -->\n```hex\n"
                                 << to_hex(built) << "\n```";
  }
}

TEST_F(TestVectorsTest, DocumentVectorsWorkThroughThePublicApi) {
  // The documented request opens as the documented token, with the documented keys.
  const EnvelopeView request = verify_envelope(doc_["connection_request"], kMaxDatagramBytes);
  ASSERT_EQ(request.error, wire::ErrorCode::Ok);
  EXPECT_EQ(doc_["connection_request"].size(), kMinRequestBytes);
  const OpenedToken opened = open_connect_token(kTokenKey, *request.envelope->message_as_ConnectionRequest(),
                                                kServerAddress, kNow, kServerInstance);
  ASSERT_EQ(opened.error, wire::ErrorCode::Ok);
  EXPECT_EQ(opened.server_instance, kServerInstance);
  EXPECT_EQ(opened.client_to_server, kClientToServer);
  EXPECT_EQ(opened.server_to_client, kServerToClient);

  // The documented challenge is answerable by the token's holder.
  const EnvelopeView challenge = verify_envelope(doc_["connection_challenge"], kMaxDatagramBytes);
  ASSERT_EQ(challenge.error, wire::ErrorCode::Ok);
  EXPECT_TRUE(
      build_challenge_response(vector_token(), *challenge.envelope->message_as_ConnectionChallenge()));

  // The documented packet opens with libsodium called directly under the documented AD and nonce.
  // Its header: the connected mark, no ack, sequence 1.
  const Bytes& packet = doc_["packet_keep_alive"];
  ASSERT_GT(packet.size(), 3 + kMacBytes);
  EXPECT_EQ(datagram_form(packet), DatagramForm::kConnectedPacket);
  EXPECT_EQ((Bytes{packet.begin(), packet.begin() + 3}), (Bytes{0x01, 0x01, 0x00}));
  const std::span<const std::uint8_t> sealed = std::span(packet).subspan(3);
  ASSERT_EQ(doc_["packet_nonce"].size(), 12u);
  Bytes plain(sealed.size() - kMacBytes);
  unsigned long long plain_length = 0;
  ASSERT_EQ(crypto_aead_chacha20poly1305_ietf_decrypt(
                plain.data(), &plain_length, nullptr, sealed.data(), sealed.size(), doc_["packet_ad"].data(),
                doc_["packet_ad"].size(), doc_["packet_nonce"].data(), kClientToServer.data()),
            0);
  EXPECT_EQ(plain, keep_alive_message());
  EXPECT_EQ(plain, (Bytes{0x02, 0x64, 0x00, 0x00}));

  // The documented RPC frame: a 4-byte length, then a RaycastRequest envelope.
  FrameReader reader;
  reader.feed(doc_["rpc_raycast_frame"]);
  const auto frame = reader.next();
  ASSERT_TRUE(frame.has_value());
  const EnvelopeView rpc = verify_envelope(*frame, kMaxRpcFrameBytes);
  ASSERT_EQ(rpc.error, wire::ErrorCode::Ok);
  EXPECT_EQ(rpc.envelope->request_id(), 1u);
  ASSERT_NE(rpc.envelope->message_as_RaycastRequest(), nullptr);
  EXPECT_EQ(rpc.envelope->message_as_RaycastRequest()->max_distance(), 1000.0f);

  // The documented ServerFrame's snapshot, applied to the documented baseline, is the documented world.
  const ReadMessage server_frame = read_connected_message(doc_["server_frame_snapshot"]);
  ASSERT_EQ(server_frame.error, wire::ErrorCode::Ok);
  ASSERT_EQ(server_frame.message.kind, MessageKind::kServerFrame);
  const ServerFrameMessage& frame_read = server_frame.message.server_frame;
  ASSERT_TRUE(frame_read.snapshot.has_value());
  EXPECT_EQ(frame_read.tick, kBlockTick);
  EXPECT_EQ(frame_read.input_ack, 7u);
  EXPECT_EQ(frame_read.snapshot->baseline_tick, kBlockBaselineTick);
  EXPECT_EQ(frame_read.snapshot->own_entity, kFrameOwnEntity);
  const AppliedDelta applied = apply_delta(SnapshotBaseline{kBlockBaseline, kBlockBaselineTick, {}, 0},
                                           kBlockTick, frame_read.snapshot->block);
  ASSERT_EQ(applied.error, wire::ErrorCode::Ok);
  ASSERT_EQ(applied.state.size(), kBlockWorld.size());
  for (std::size_t i = 0; i < kBlockWorld.size(); ++i)
    EXPECT_TRUE(same_entity_state(applied.state[i], kBlockWorld[i])) << i;
  // Its own section is relative to the own entity of that world, and exact.
  ASSERT_TRUE(frame_read.own.has_value());
  BitReader frame_own_bits(*frame_read.own);
  const std::optional<OwnStateBits> frame_own = read_own_state(frame_own_bits);
  ASSERT_TRUE(frame_own.has_value());
  EXPECT_EQ(frame_own_bits.finish(), BitReadError::kNone);
  EXPECT_TRUE(frame_own->relative[0] && frame_own->relative[1] && frame_own->relative[2]);
  const wire::QuantizedVec own_quanta = applied.state[2].position();
  const std::optional<wire::OwnState> resolved = resolve_own_state(*frame_own, &own_quanta).state;
  ASSERT_TRUE(resolved.has_value());
  EXPECT_EQ(resolved->position().x(), 62.51f);
  EXPECT_EQ(resolved->position().y(), -125.02f);
  EXPECT_EQ(resolved->position().z(), 4.0f);
  EXPECT_EQ(resolved->velocity().x(), 320.0f);
  EXPECT_EQ(resolved->ground_brush(), 17);

  // The documented predicted block, against the prediction from the documented A and B, is the documented
  // world; against B alone it is not (the runner would stand at B).
  const AppliedDelta predicted = apply_delta(kPredictedBase, kBlockTick, doc_["entity_block_predicted"]);
  ASSERT_EQ(predicted.error, wire::ErrorCode::Ok);
  ASSERT_EQ(predicted.state.size(), kPredictedWorld.size());
  for (std::size_t i = 0; i < kPredictedWorld.size(); ++i)
    EXPECT_TRUE(same_entity_state(predicted.state[i], kPredictedWorld[i])) << i;
  const AppliedDelta unpredicted =
      apply_delta(std::span<const wire::EntityState>(kPredictedB), doc_["entity_block_predicted"]);
  ASSERT_EQ(unpredicted.error, wire::ErrorCode::Ok);
  EXPECT_FALSE(same_entity_state(unpredicted.state[0], kPredictedWorld[0]));
  // The costs the worked example states: the runner against B alone, the stopped entity against its
  // prediction.
  SnapshotState scratch;
  const auto prediction = predict_baseline(kPredictedBase, kBlockTick, scratch);
  EXPECT_EQ(id_gap_bits(-1, 1) + entity_entry_bits(&kPredictedB[0], kPredictedWorld[0]), 39u);
  EXPECT_EQ(id_gap_bits(4, 5) + entity_entry_bits(&prediction[4], kPredictedWorld[4]), 16u);
  EXPECT_TRUE(same_entity_state(prediction[0], kPredictedWorld[0]));
  EXPECT_EQ(doc_["entity_block_predicted"].size(), 17u);

  // The documented commands read back as the documented values, quantized.
  BitReader command_bits(doc_["client_commands"]);
  const auto commands = read_client_commands(command_bits);
  ASSERT_TRUE(commands.has_value());
  EXPECT_EQ(command_bits.finish(), BitReadError::kNone);
  EXPECT_EQ(commands->events_received, 42u);
  ASSERT_EQ(commands->commands.size(), 3u);
  EXPECT_EQ(commands->commands[2].sequence(), 298u);
  EXPECT_EQ(commands->commands[2].view_tick(), 1199.5);
  EXPECT_EQ(commands->commands[0].forward(), 1.0f);
  EXPECT_EQ(commands->commands[0].right(), -64.0f / 127.0f);
  EXPECT_EQ(commands->commands[0].yaw(), quantize_input({0, 0, 0.75f, 0, 0}).yaw);
  EXPECT_EQ(commands->commands[0].buttons(), kButtonJump);

  // The documented events read back as the documented values.
  BitReader event_bits(doc_["contact_events"]);
  const auto events = read_contact_events(event_bits, kEventsFrameTick);
  ASSERT_TRUE(events.has_value());
  EXPECT_EQ(event_bits.finish(), BitReadError::kNone);
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ((*events)[0].sequence(), 41u);
  EXPECT_EQ((*events)[0].tick(), 998u);
  EXPECT_EQ((*events)[0].brush(), 300);
  EXPECT_EQ((*events)[0].relative_speed(), 320.0f);
  EXPECT_EQ((*events)[1].sequence(), 42u);
  EXPECT_EQ((*events)[1].b(), 9u);
  EXPECT_EQ((*events)[1].brush(), -1);
  EXPECT_EQ((*events)[1].normal().y(), static_cast<float>(409.0 / 511));  // 0.8: round(0.8 x 511) = 409
  EXPECT_EQ((*events)[1].separation(), -0.25f);

  // The documented own state reads back as the documented values.
  BitReader own_bits(doc_["own_state"]);
  const std::optional<OwnStateBits> own_read = read_own_state(own_bits);
  ASSERT_TRUE(own_read.has_value());
  const std::optional<wire::OwnState> own = resolve_own_state(*own_read, nullptr).state;
  ASSERT_TRUE(own.has_value());
  EXPECT_EQ(own_bits.finish(), BitReadError::kNone);
  EXPECT_EQ(own->position().x(), 100.5f);
  EXPECT_EQ(own->position().y(), -20.25f);
  EXPECT_EQ(own->velocity().x(), 320.0f);
  EXPECT_EQ(own->velocity().y(), -12.5f);
  EXPECT_EQ(own->ground_normal().z(), 1.0f);
  EXPECT_EQ(own->ground_brush(), 17);
  EXPECT_EQ(own->flags(), 1);
}

// A decoder written in Python from the document alone (tests/contract/snapshot_decoder.py: the message's
// byte layout, the "Entity block" tables and the "Prediction" rules) decodes the documented ServerFrame
// and the predicted entity block to the same worlds as the library, and refuses every malformed variant
// of the blocks it tries.
TEST_F(TestVectorsTest, APythonDecoderFromTheDocumentAgrees) {
  const std::string command = std::string("/usr/bin/python3 ") + SHIFTCAST_SOURCE_DIR +
                              "/tests/contract/snapshot_decoder.py --doc " + SHIFTCAST_SOURCE_DIR +
                              "/docs/protocol.md --generated " + SHIFTCAST_PYTHON_PROTOCOL_DIR + " 2>&1";
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr)
    out += buffer;
  ASSERT_EQ(::pclose(pipe), 0) << out;
  const auto rows = [](const SnapshotState& states) {
    std::string rows = "[";
    for (const wire::EntityState& e : states) {
      rows += (rows.size() > 1 ? ", [" : "[") + std::to_string(e.id()) + ", " + std::to_string(e.kind()) +
              ", " + std::to_string(e.flags()) + ", " + std::to_string(e.yaw()) + ", " +
              std::to_string(e.position().x()) + ", " + std::to_string(e.position().y()) + ", " +
              std::to_string(e.position().z()) + "]";
    }
    return rows + "]";
  };
  EXPECT_NE(out.find("\"world\": " + rows(kBlockWorld)), std::string::npos) << out;
  // The frame's own position, relative to its own entity in that world, as float bit patterns.
  const auto float_bits = [](float v) { return std::to_string(std::bit_cast<std::uint32_t>(v)); };
  EXPECT_NE(out.find("\"own_position_bits\": [" + float_bits(kFrameOwnState.position().x()) + ", " +
                     float_bits(kFrameOwnState.position().y()) + ", " +
                     float_bits(kFrameOwnState.position().z()) + "]"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("\"predicted_world\": " + rows(kPredictedWorld)), std::string::npos) << out;
  EXPECT_NE(out.find("\"snapshot_tick\": " + std::to_string(kBlockTick)), std::string::npos) << out;
  EXPECT_NE(out.find("\"baseline_tick\": " + std::to_string(kBlockBaselineTick)), std::string::npos) << out;
  // Every variant refused: the two counts are equal, and there were some.
  const auto count = [&](const std::string& key) {
    const auto at = out.find("\"" + key + "\": ");
    return at == std::string::npos ? -1 : std::stoi(out.substr(at + key.size() + 4));
  };
  EXPECT_GT(count("variants"), 10);
  EXPECT_EQ(count("refused"), count("variants")) << out;
}

}  // namespace
}  // namespace shiftcast
