// fuzz_seed_corpus: writes the committed seed corpora (fuzz/corpus/<target>/seed-*) from the real
// encoders, the repository's test levels and configuration, so every seed is an input the decoders
// accept (or a named near miss) and the fuzzer starts past their first checks. Deterministic: fixed keys
// and nonces, so rerunning it after a format change rewrites the same files where nothing changed.
//
//   build-sanitize/fuzz/fuzz_seed_corpus .        # from the repository root
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <span>
#include <string>
#include <vector>

#include "fuzz/fuzz_support.hpp"
#include "protocol/client_session.hpp"
#include "protocol/connected_message.hpp"
#include "protocol/contact_event_codec.hpp"
#include "protocol/entity_block.hpp"
#include "protocol/envelope.hpp"
#include "protocol/handshake.hpp"
#include "protocol/input_codec.hpp"
#include "protocol/own_state_codec.hpp"
#include "protocol/packet.hpp"
#include "protocol/rpc_frame.hpp"
#include "world/level/compiled_level.hpp"
#include "world/level/map_import.hpp"

namespace shiftcast::fuzz {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<std::uint8_t>;

void write(const fs::path& root, const std::string& target, const std::string& name,
           std::span<const std::uint8_t> bytes) {
  const fs::path dir = root / "fuzz" / "corpus" / target;
  fs::create_directories(dir);
  std::ofstream out(dir / ("seed-" + name), std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}
void write(const fs::path& root, const std::string& target, const std::string& name,
           const std::string& text) {
  write(root, target, name, std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
}
Bytes with_prefix(std::initializer_list<std::uint8_t> prefix, std::span<const std::uint8_t> bytes) {
  Bytes out(prefix);
  out.insert(out.end(), bytes.begin(), bytes.end());
  return out;
}
Bytes finished(flatbuffers::FlatBufferBuilder& fbb) {
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}
std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}
void put_u16(Bytes& out, std::uint16_t v) {
  out.push_back(std::uint8_t(v));
  out.push_back(std::uint8_t(v >> 8));
}
void put_u32(Bytes& out, std::uint32_t v) {
  put_u16(out, std::uint16_t(v));
  put_u16(out, std::uint16_t(v >> 16));
}

ConnectToken fixed_token() {
  return issue_connect_token(kTokenKey, kServerAddress, kMatch, kClient, kTokenExpiry, fixed_nonce(2),
                             kClientToServerKey, kServerToClientKey);
}

// The connected messages (protocol/connected_message.hpp), as a packet seals them.
Bytes server_frame_inner() {
  const wire::EntityState changed[] = {wire::EntityState(1, 0, 0, 100, wire::QuantizedVec(16, 32, 0)),
                                       wire::EntityState(4, 2, 1, 9000, wire::QuantizedVec(-160, 8, 64))};
  const std::uint32_t removed[] = {3};
  BitWriter block;
  write_entity_block(block, {}, changed, removed);  // against the empty baseline (baseline_tick 0)
  const wire::Vec3f point(8, 0, 0), up(0, 0, 1);
  const wire::ContactEvent events[] = {
      wire::ContactEvent(1, 2, 0.5f, 0, 0, 3, 1, 0, 4, point, up, 0, 320),
      wire::ContactEvent(2, 2, 0.75f, 2, 1, 2, 2, 4, -1, point, up, 0.1f, 90)};
  BitWriter packed;
  write_contact_events(packed, events, 2, kMaxDatagramBytes * 8);
  BitWriter own;
  write_own_state(
      own, wire::OwnState(wire::Vec3f(1, 2, 3), wire::Vec3f(320, 0, 0), wire::Vec3f(0, 0, 1), 0, 5, 1));
  Bytes m;
  write_server_frame(m, {2, 1, SnapshotSection{0, 1, true, block.bytes()}, own.bytes(), packed.bytes()});
  return m;
}

Bytes client_frame_inner() {
  const wire::InputCommand commands[] = {wire::InputCommand(2, 1.5, 1, 0, 0.5f, 0, 1),
                                         wire::InputCommand(1, 0.5, 0.5f, -0.5f, 0.25f, 0.1f, 0)};
  BitWriter packed;
  write_client_commands(packed, {{commands, commands + 2}, 1});
  Bytes m;
  write_client_frame(m, packed.bytes());
  return m;
}

Bytes keepalive_inner() {
  Bytes m;
  write_keep_alive(m, {3, 1, to_session_info({64, 32, 0.1, 5.0})});
  return m;
}

Bytes disconnect_inner() {
  Bytes m;
  write_disconnect(m, wire::ErrorCode::ClientDisconnected);
  return m;
}

// ---- RPC requests against the fuzz_rpc_handlers room (match 1; walls at +-512, floor 0, ceiling 256) ----

flatbuffers::Offset<wire::QueryFilter> filter(flatbuffers::FlatBufferBuilder& fbb) {
  return wire::CreateQueryFilter(fbb);
}
flatbuffers::Offset<wire::AsOf> as_of(flatbuffers::FlatBufferBuilder& fbb, wire::AsOfKind kind, double tick) {
  return wire::CreateAsOf(fbb, kind, tick, 0);
}
flatbuffers::Offset<wire::RaycastRequest> raycast(flatbuffers::FlatBufferBuilder& fbb, wire::AsOfKind kind,
                                                  double tick) {
  const wire::Vec3f origin(0, 0, 64), direction(1, 0.25f, -0.1f);
  return wire::CreateRaycastRequest(fbb, 1, &origin, &direction, 2000, filter(fbb), as_of(fbb, kind, tick));
}
flatbuffers::Offset<wire::SweepRequest> sweep(flatbuffers::FlatBufferBuilder& fbb, wire::ShapeKind kind) {
  const wire::Vec3f half(16, 16, 28), from(-300, 0, 40), to(400, 50, 40);
  const auto shape = wire::CreateShapeSpec(fbb, kind, 15, 56, &half, 0.5f);
  return wire::CreateSweepRequest(fbb, 1, shape, &from, &to, filter(fbb), as_of(fbb, wire::AsOfKind::Now, 0));
}
flatbuffers::Offset<wire::OverlapRequest> overlap(flatbuffers::FlatBufferBuilder& fbb) {
  const wire::Vec3f half(16, 16, 28), position(0, 0, 20);
  const auto shape = wire::CreateShapeSpec(fbb, wire::ShapeKind::Box, 0, 0, &half, 0);
  return wire::CreateOverlapRequest(fbb, 1, shape, &position, filter(fbb),
                                    as_of(fbb, wire::AsOfKind::Now, 0));
}

std::vector<std::pair<std::string, Bytes>> rpc_requests() {
  std::vector<std::pair<std::string, Bytes>> out;
  {
    flatbuffers::FlatBufferBuilder fbb;
    finish_envelope(fbb, wire::Message::RaycastRequest, raycast(fbb, wire::AsOfKind::Now, 0).Union(), 1);
    out.emplace_back("raycast", finished(fbb));
  }
  {
    flatbuffers::FlatBufferBuilder fbb;
    finish_envelope(fbb, wire::Message::RaycastRequest, raycast(fbb, wire::AsOfKind::Tick, 60.5).Union(), 2);
    out.emplace_back("raycast-rewound", finished(fbb));
  }
  for (const auto kind : {wire::ShapeKind::Sphere, wire::ShapeKind::Cylinder, wire::ShapeKind::Box}) {
    flatbuffers::FlatBufferBuilder fbb;
    finish_envelope(fbb, wire::Message::SweepRequest, sweep(fbb, kind).Union(), 3);
    out.emplace_back("sweep-" + std::string(wire::EnumNameShapeKind(kind)), finished(fbb));
  }
  {
    flatbuffers::FlatBufferBuilder fbb;
    finish_envelope(fbb, wire::Message::OverlapRequest, overlap(fbb).Union(), 4);
    out.emplace_back("overlap", finished(fbb));
  }
  {
    flatbuffers::FlatBufferBuilder fbb;
    std::vector<flatbuffers::Offset<wire::BatchQuery>> queries;
    queries.push_back(wire::CreateBatchQuery(fbb, raycast(fbb, wire::AsOfKind::Now, 0)));
    queries.push_back(wire::CreateBatchQuery(fbb, 0, sweep(fbb, wire::ShapeKind::Box)));
    queries.push_back(wire::CreateBatchQuery(fbb, 0, 0, overlap(fbb)));
    queries.push_back(wire::CreateBatchQuery(fbb));  // none set: refused inside the batch
    const auto batch = wire::CreateBatchRequest(fbb, fbb.CreateVector(queries));
    finish_envelope(fbb, wire::Message::BatchRequest, batch.Union(), 5);
    out.emplace_back("batch", finished(fbb));
  }
  {
    flatbuffers::FlatBufferBuilder fbb;
    finish_envelope(fbb, wire::Message::ListMatches, wire::CreateListMatches(fbb).Union(), 6);
    out.emplace_back("list-matches", finished(fbb));
  }
  return out;
}

// ---- A tiny Quake III map: one solid box brush, one 3x3 patch, a worldspawn and a spawn point ----

Bytes tiny_bsp() {
  constexpr int kLumps = 17;
  std::vector<Bytes> lumps(kLumps);
  const std::string entities =
      "{\n\"classname\" \"worldspawn\"\n}\n{\n\"classname\" \"info_player_deathmatch\"\n"
      "\"origin\" \"0 0 88\"\n\"angle\" \"90\"\n}\n";
  lumps[0].assign(entities.begin(), entities.end());
  lumps[0].push_back(0);
  auto f32 = [](Bytes& out, float v) {
    std::uint32_t u;
    std::memcpy(&u, &v, 4);
    put_u32(out, u);
  };
  Bytes shader(72, 0);  // textures/base/wall: solid
  std::memcpy(shader.data(), "textures/base/wall", 18);
  shader[68] = 1;
  lumps[1] = shader;
  const float planes[6][4] = {{1, 0, 0, 64},  {-1, 0, 0, 64}, {0, 1, 0, 64},
                              {0, -1, 0, 64}, {0, 0, 1, 0},   {0, 0, -1, 16}};
  for (const auto& p : planes)
    for (float v : p)
      f32(lumps[2], v);
  // Model 0: mins, maxs, first surface 0, 1 surface, first brush 0, 1 brush.
  for (float v : {-64.f, -64.f, -16.f, 64.f, 64.f, 0.f})
    f32(lumps[7], v);
  for (std::uint32_t v : {0u, 1u, 0u, 1u})
    put_u32(lumps[7], v);
  for (std::uint32_t v : {0u, 6u, 0u})
    put_u32(lumps[8], v);
  for (std::uint32_t s = 0; s < 6; ++s) {
    put_u32(lumps[9], s);
    put_u32(lumps[9], 0);
  }
  // 3x3 control points of an arch over x in [-32, 32], normals up.
  for (int j = 0; j < 3; ++j) {
    for (int i = 0; i < 3; ++i) {
      for (float v : {-32.f + 32.f * float(i), -32.f + 32.f * float(j), i == 1 ? 64.f : 16.f, 0.f, 0.f, 0.f,
                      0.f, 0.f, 0.f, 1.f})
        f32(lumps[10], v);
      put_u32(lumps[10], 0xffffffffu);
    }
  }
  Bytes surface(104, 0);
  surface[8] = 2;   // MST_PATCH
  surface[16] = 9;  // 9 vertices from 0
  surface[96] = 3;
  surface[100] = 3;
  lumps[13] = surface;

  Bytes out;
  put_u32(out, 0x50534249);
  put_u32(out, 46);
  std::uint32_t offset = 8 + 8 * kLumps;
  for (const Bytes& l : lumps) {
    put_u32(out, offset);
    put_u32(out, std::uint32_t(l.size()));
    offset += std::uint32_t(l.size());
  }
  for (const Bytes& l : lumps)
    out.insert(out.end(), l.begin(), l.end());
  return out;
}

void envelope_and_channel_seeds(const fs::path& root) {
  const ConnectToken token = fixed_token();
  const ServerKeys keys{kTokenKey, kChallengeKey};
  const Bytes request = build_connection_request(token);
  const EnvelopeView request_view = verify_envelope(request, kMaxDatagramBytes);
  const OpenedToken opened = open_connect_token(
      kTokenKey, *request_view.envelope->message_as_ConnectionRequest(), kServerAddress, kNowUnix);
  const Bytes challenge = make_challenge(keys, opened, kClientAddress, fixed_nonce(6), fixed_nonce(7));
  const auto response = build_challenge_response(
      token, *verify_envelope(challenge, kMaxDatagramBytes).envelope->message_as_ConnectionChallenge());
  PacketHeader header{kMatch, kClient, 1, 0, 0};
  const Bytes to_client =
      seal_packet(header, Direction::kServerToClient, kServerToClientKey, server_frame_inner());
  const Bytes to_server =
      seal_packet(header, Direction::kClientToServer, kClientToServerKey, client_frame_inner());

  write(root, "envelope", "request", request);
  write(root, "envelope", "challenge", challenge);
  write(root, "envelope", "response", *response);
  write(root, "envelope", "denied", build_denied(wire::ErrorCode::TokenExpired));
  write(root, "envelope", "packet-to-client", to_client);
  write(root, "envelope", "packet-to-server", to_server);
  write(root, "envelope", "server-frame", server_frame_inner());
  write(root, "envelope", "client-frame", client_frame_inner());
  write(root, "envelope", "keepalive", keepalive_inner());
  for (const auto& [name, bytes] : rpc_requests())
    write(root, "envelope", name, bytes);

  write(root, "handshake", "request", with_prefix({0}, request));
  write(root, "handshake", "response", with_prefix({1}, *response));
  write(root, "handshake", "challenge", with_prefix({2}, challenge));
  {
    // The ChallengeToken plaintext make_challenge seals (mode 3) and the blob it seals around it (mode 4).
    flatbuffers::FlatBufferBuilder fbb;
    const auto address = fbb.CreateString(kClientAddress);
    const auto mac = fbb.CreateVector(opened.mac.data(), opened.mac.size());
    const auto c2s = fbb.CreateVector(kClientToServerKey.data(), kClientToServerKey.size());
    const auto s2c = fbb.CreateVector(kServerToClientKey.data(), kServerToClientKey.size());
    finish_envelope(
        fbb, wire::Message::ChallengeToken,
        wire::CreateChallengeToken(fbb, kMatch, kClient, kTokenExpiry, address, mac, c2s, s2c).Union());
    const Bytes plain = finished(fbb);
    write(root, "handshake", "challenge-token", with_prefix({3}, plain));
    const TokenNonce inner_nonce = fixed_nonce(7);
    Bytes blob(inner_nonce.begin(), inner_nonce.end());
    const Bytes sealed =
        seal_xchacha(kChallengeKey, inner_nonce, plain, token_associated_data(kMatch, kClient, 0));
    blob.insert(blob.end(), sealed.begin(), sealed.end());
    write(root, "handshake", "challenge-blob", with_prefix({4}, blob));
  }

  write(root, "connect_token", "request", with_prefix({0}, request));
  {
    flatbuffers::FlatBufferBuilder fbb;
    const auto address = fbb.CreateString(kServerAddress);
    const auto c2s = fbb.CreateVector(kClientToServerKey.data(), kClientToServerKey.size());
    const auto s2c = fbb.CreateVector(kServerToClientKey.data(), kServerToClientKey.size());
    finish_envelope(
        fbb, wire::Message::ConnectTokenPrivate,
        wire::CreateConnectTokenPrivate(fbb, kMatch, kClient, kTokenExpiry, address, c2s, s2c).Union());
    write(root, "connect_token", "private", with_prefix({1}, finished(fbb)));
  }

  // fuzz_packet items: op | [u16 sequence, u16 ack, u32 ack_bits] | u16 length | bytes.
  auto item = [](Bytes& out, std::uint8_t op, std::uint16_t sequence, std::span<const std::uint8_t> bytes) {
    out.push_back(op);
    if (op & 2) {
      put_u16(out, sequence);
      put_u16(out, 0);
      put_u32(out, 0);
    }
    put_u16(out, std::uint16_t(bytes.size()));
    out.insert(out.end(), bytes.begin(), bytes.end());
  };
  {
    Bytes s;
    item(s, 2 | 8, 1, client_frame_inner());
    item(s, 1 | 2, 1, server_frame_inner());
    item(s, 2, 2, keepalive_inner());
    item(s, 1 | 2 | 8, 2, keepalive_inner());
    write(root, "packet", "sealed-both-ways", s);
  }
  {
    Bytes s;
    item(s, 0, 0, to_server);
    item(s, 1, 0, to_client);
    item(s, 2, 3, disconnect_inner());
    write(root, "packet", "raw-and-disconnect", s);
  }

  for (const auto& [name, bytes] : rpc_requests())
    write(root, "rpc_handlers", name, bytes);

  // fuzz_rpc_frame: u16 max - 1 | u8 count, chunk sizes | stream of frames.
  {
    Bytes s;
    put_u16(s, 4095);
    for (std::uint8_t v : {3, 1, 7, 64, 0})
      s.push_back(v);
    const auto frames = rpc_requests();
    Bytes stream;
    for (const auto& [name, bytes] : frames)
      append_frame(stream, bytes);
    s.insert(s.end(), stream.begin(), stream.end());
    write(root, "rpc_frame", "requests", s);
    Bytes big;
    put_u16(big, 99);
    big.push_back(1);
    big.push_back(5);
    append_frame(big, frames[0].second);
    write(root, "rpc_frame", "too-large", big);
  }
}

void state_seeds(const fs::path& root) {
  // fuzz_snapshot_delta: 3 held, mode 0, 2 changed, 1 removed; and mode 1 with a ServerFrame.
  Bytes s = {3};
  for (int i = 0; i < 3; ++i) {
    s.push_back(2);
    for (int k = 0; k < 8; ++k)
      s.push_back(std::uint8_t(i * 8 + k));
  }
  Bytes structured = s;
  structured.push_back(0);
  structured.push_back(2);
  for (std::uint16_t id : {2, 7}) {
    put_u16(structured, id);
    for (int k = 0; k < 8; ++k)
      structured.push_back(std::uint8_t(id + k));
  }
  structured.push_back(1);
  put_u16(structured, 4);
  write(root, "snapshot_delta", "structured", structured);
  Bytes framed = s;
  framed.push_back(1);
  const Bytes frame = server_frame_inner();
  framed.insert(framed.end(), frame.begin(), frame.end());
  write(root, "snapshot_delta", "server-frame", framed);
  // Mode 2: B decoded against A (ta 94, tb 98, the lists at tick 100), A holding the first two entities
  // two-thirds of the way back, so they are predicted.
  Bytes predicted = s;
  predicted.push_back(2);
  put_u16(predicted, 94);
  predicted.push_back(4);
  predicted.push_back(2);
  for (int i = 0; i < 3; ++i) {
    predicted.push_back(i < 2 ? 1 : 0);
    if (i < 2) {
      for (int k = 0; k < 8; ++k)
        predicted.push_back(std::uint8_t(i * 8 + k - (k >= 4 ? 3 : 0)));
    }
  }
  predicted.insert(predicted.end(), structured.begin() + std::ptrdiff_t(s.size()) + 1, structured.end());
  write(root, "snapshot_delta", "predicted", predicted);

  // fuzz_reliable_events: buffer 4; 1, 3 (gap), 2 (closes it), 2 again, far ahead, take.
  write(root, "reliable_events", "gap-and-duplicates",
        Bytes{4, 0, 0, 9, 0, 2, 9, 0, 0, 8, 2, 0xff, 7, 0, 100, 1, 3, 1, 0, 0, 0, 0, 0, 0, 0, 5});
}

void level_seeds(const fs::path& root) {
  write(root, "bsp_import", "tiny", tiny_bsp());
  Bytes truncated = tiny_bsp();
  truncated.resize(200);
  write(root, "bsp_import", "truncated", truncated);

  for (const char* name : {"valve220_room", "arena"})
    write(root, "map_import", name, read_text(root / "configs" / "levels" / (std::string(name) + ".map")));
  write(root, "map_import", "brush-primitives",
        std::string(
            "{\n\"classname\" \"worldspawn\"\n{\nbrushDef\n{\n"
            "( 0 0 1 64 ) ( ( 0.03 0 0 ) ( 0 0.03 0 ) ) common/caulk 0 0 0\n"
            "( 0 0 -1 0 ) ( ( 0.03 0 0 ) ( 0 0.03 0 ) ) common/caulk 0 0 0\n"
            "( 1 0 0 32 ) ( ( 0.03 0 0 ) ( 0 0.03 0 ) ) common/caulk 0 0 0\n}\n}\n"
            "{\npatchDef2\n{\nbase/wall\n( 3 3 0 0 0 )\n(\n( ( 0 0 0 0 0 ) ( 0 0 0 0 0 ) ( 0 0 0 0 0 ) "
            ")\n)\n}\n}\n"
            "}\n{\n\"classname\" \"info_player_start\"\n\"origin\" \"0 0 24\"\n\"angles\" \"0 90 0\"\n}\n"));

  const std::string cube =
      "# a unit cube, metres\nv -1 -1 -1\nv 1 -1 -1\nv 1 1 -1\nv -1 1 -1\nv -1 -1 1\nv 1 -1 1\nv 1 1 1\n"
      "v -1 1 1\nvt 0 0\nvn 0 0 1\nf 1/1/1 4/1/1 3/1/1 2/1/1\nf 5//1 6//1 7//1 8//1\nf -8 -7 -3\n"
      "f 2 3 7 6\no other\ng group\nusemtl stone\nf 4 1 5 8\n";
  write(root, "obj_import", "cube-z", "\x00" + cube);
  write(root, "obj_import", "cube-y", "\x01" + cube);

  // Compiled levels: the room with its navmesh, and a small procedural level without one.
  LevelResult room = import_map_file((root / "configs" / "levels" / "valve220_room.map").string());
  CompiledLevelResult compiled = compile_level(std::move(room.level), {}, {});
  if (compiled.ok()) {
    const Bytes bytes = serialize_compiled_level(compiled.level);
    write(root, "compiled_level", "room", with_prefix({0}, bytes));
    write(root, "navmesh", "room", compiled.level.navmesh);
    compiled.level.navmesh.clear();
    write(root, "compiled_level", "room-without-navmesh",
          with_prefix({0}, serialize_compiled_level(compiled.level)));
  } else {
    std::fprintf(stderr, "room did not compile: %s\n", compiled.message.c_str());
  }
}

void text_seeds(const fs::path& root) {
  write(root, "server_config", "shipped", "\x00" + read_text(root / "configs" / "server.toml"));
  write(root, "server_config", "override", std::string("\x01tick-rate\n64", 13));
  write(root, "prometheus", "scrape",
        std::string("# HELP shiftcast_late_ticks_total Ticks that started late.\n"
                    "# TYPE shiftcast_late_ticks_total counter\n"
                    "shiftcast_late_ticks_total{match=\"1\"} 3\n"
                    "# TYPE shiftcast_tick_seconds histogram\n"
                    "shiftcast_tick_seconds_bucket{match=\"1\",le=\"0.001\"} 10\n"
                    "shiftcast_tick_seconds_bucket{match=\"1\",le=\"+Inf\"} 12\n"
                    "shiftcast_tick_seconds_sum{match=\"1\"} 0.0042\n"
                    "shiftcast_tick_seconds_count{match=\"1\"} 12\n"
                    "shiftcast_rejected_total{reason=\"a\\\\b\\\"c\\nd\"} NaN 1700000000000\n"
                    "shiftcast_up -Inf\n\n# a comment\n"));
}

}  // namespace
}  // namespace shiftcast::fuzz

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_seed_corpus REPOSITORY_ROOT\n");
    return 2;
  }
  const std::filesystem::path root = argv[1];
  shiftcast::fuzz::envelope_and_channel_seeds(root);
  shiftcast::fuzz::state_seeds(root);
  shiftcast::fuzz::level_seeds(root);
  shiftcast::fuzz::text_seeds(root);
  return 0;
}
