// End to end over loopback: a real shiftcast-server records a match while real UDP clients join, play
// and leave and an RPC client raycasts it; the recording then replays offline with every state hash
// equal (the oracle: the server's own per-tick hashes), and the replayed answers of the recorded queries
// equal the server's. Damaged files (a flipped byte, cut short) and the wrong level are typed errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "protocol/snapshot_delta.hpp"
#include "tests/support/server_fixture.hpp"
#include "world/level/compiled_level.hpp"
#include "world/level/procedural_level.hpp"
#include "world/tools/replay_command.hpp"

namespace shiftcast {
namespace {

CompiledLevel compile_file(const std::string& path) {
  LevelResult imported = import_level_file(path);
  EXPECT_TRUE(imported.ok());
  CompiledLevelResult compiled = compile_level(std::move(imported.level), {}, {});
  EXPECT_TRUE(compiled.ok());
  return std::move(compiled.level);
}

bool raycast_down(RpcTestClient& rpc, Vec3 o, std::uint64_t id) {
  flatbuffers::FlatBufferBuilder fbb;
  const wire::Vec3f origin(o.x, o.y, o.z), direction(0, 0, -1);
  const auto filter = wire::CreateQueryFilter(fbb, kLayerAll, 0, true);
  const auto when = wire::CreateAsOf(fbb, wire::AsOfKind::Now, 0, 0);
  const auto req = wire::CreateRaycastRequest(fbb, 1, &origin, &direction, 400, filter, when,
                                              fbb.CreateString(dev_service_key()));
  finish_envelope(fbb, wire::Message::RaycastRequest, req.Union(), id);
  if (!rpc.send(fbb)) return false;
  const auto bytes = rpc.receive();
  if (!bytes) return false;
  const EnvelopeView v = verify_envelope(*bytes, kMaxRpcFrameBytes);
  return v.error == wire::ErrorCode::Ok && v.envelope->message_as_RaycastReply() != nullptr;
}

class MatchRecordingTest : public ServerTest {};

TEST_F(MatchRecordingTest, ARecordedMatchReplaysBitForBitWithItsQueries) {
  start(test_server_config("props = 4\nseed = 5\n", "[recording]\ndirectory = \"rec\"\n"));
  const CompiledLevel arena = compile_file(std::string(SHIFTCAST_SOURCE_DIR) + "/configs/levels/arena.map");
  {
    UdpTestClient a(server_.ports().udp, token(21));
    UdpTestClient b(server_.ports().udp, token(22));
    ASSERT_TRUE(a.connect());
    ASSERT_TRUE(b.connect());
    RpcTestClient rpc(server_.ports().rpc);
    // Both run and turn (b also jumps and fires); every few commands a raycast down through where they
    // are, so the recorded queries hit players, props and the floor.
    const int commands = 48;
    for (int i = 0; i < commands; ++i) {
      PlayerInput ia{.forward = 1, .right = 0, .yaw = 0.05f * float(i), .pitch = 0, .buttons = 0};
      PlayerInput ib{.forward = 1,
                     .right = 0.5f,
                     .yaw = -0.07f * float(i),
                     .pitch = 0.1f,
                     .buttons = std::uint8_t(i % 12 == 0 ? kButtonJump | kButtonFire : 0)};
      a.send_command(ia, double(a.session().latest_snapshot_tick()));
      b.send_command(ib, double(b.session().latest_snapshot_tick()));
      const std::uint64_t sa = a.session().last_command_sequence();
      const std::uint64_t sb = b.session().last_command_sequence();
      ASSERT_TRUE(a.pump_until([&] { return a.session().input_ack() >= sa; }));
      ASSERT_TRUE(b.pump_until([&] { return b.session().input_ack() >= sb; }));
      if (i % 4 == 0) {
        for (const wire::EntityState& e : a.session().world_state()) {
          const wire::Vec3f p = dequantize_position(e.position());
          ASSERT_TRUE(raycast_down(rpc, {p.x(), p.y(), p.z() + 100}, std::uint64_t(i)));
        }
      }
    }
    a.disconnect();
    b.pump_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(server_.stop(), 0);

  std::vector<std::filesystem::path> files;
  for (const auto& f : std::filesystem::directory_iterator(dir_ / "rec"))
    files.push_back(f.path());
  ASSERT_EQ(files.size(), 1u);
  const RecordingReadResult read = read_recording_file(files[0].string());
  ASSERT_TRUE(read.ok()) << read.message;
  const Recording& rec = read.recording;
  EXPECT_EQ(rec.header.level_name, "arena");
  EXPECT_EQ(rec.header.props, 4);
  EXPECT_EQ(rec.header.seed, 5u);
  std::size_t joins = 0, leaves = 0, commanded = 0;
  for (const RecordedTick& t : rec.ticks) {
    joins += t.joins.size();
    leaves += t.leaves.size();
    for (const RecordedCommands& c : t.commands)
      commanded += c.commands.size();
  }
  EXPECT_EQ(joins, 2u);
  EXPECT_GE(leaves, 1u);
  EXPECT_GE(commanded, 2u * 48u);
  ASSERT_GE(rec.queries.size(), 12u);

  std::unique_ptr<NavMesh> nav;
  std::string error;
  nav = NavMesh::from_data(arena.navmesh, &error);
  ASSERT_NE(nav, nullptr) << error;
  const ReplayResult r = replay_recording(rec, arena, nav.get(), {});
  ASSERT_TRUE(r.ok()) << to_string(r.error) << ": " << r.message << " at tick " << r.tick;
  EXPECT_EQ(r.ticks_replayed, rec.ticks.size());
  ASSERT_EQ(r.queries.size(), rec.queries.size());
  int player_hits = 0;
  for (const AuditedQuery& q : r.queries) {
    EXPECT_TRUE(q.agrees) << "query at tick " << q.recorded.tick_used;
    player_hits += q.recorded.entity != kNoEntity ? 1 : 0;
  }
  EXPECT_GT(player_hits, 0) << "the audit must cover shots that hit someone";

  // The wrong level: refused by its fingerprint before anything runs.
  const CompiledLevel other =
      compile_file(std::string(SHIFTCAST_SOURCE_DIR) + "/configs/levels/valve220_room.map");
  EXPECT_EQ(replay_recording(rec, other, nullptr, {}).error, ReplayError::kWrongLevel);

  // One state hash changed: the replay stops at that tick and says what it expected.
  Recording tampered = rec;
  const std::size_t k = tampered.ticks.size() / 2;
  tampered.ticks[k].state_hash ^= 1;
  const ReplayResult bad = replay_recording(tampered, arena, nav.get(), {});
  EXPECT_EQ(bad.error, ReplayError::kHashMismatch);
  EXPECT_EQ(bad.tick, tampered.ticks[k].tick);
  EXPECT_EQ(bad.expected_hash, tampered.ticks[k].state_hash);

  // The file damaged on disk: a flipped byte in the middle and a cut are typed, never a crash.
  std::ifstream in(files[0], std::ios::binary);
  std::vector<std::uint8_t> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::vector<std::uint8_t> flipped = bytes;
  flipped[flipped.size() / 2] ^= 0x40;
  const RecordingReadResult f = read_recording(flipped);
  EXPECT_TRUE(!f.ok() || f.recording.truncated);
  const std::vector<std::uint8_t> cut(bytes.begin(), bytes.begin() + std::ptrdiff_t(bytes.size() - 3));
  const RecordingReadResult c = read_recording(cut);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c.recording.truncated);
  EXPECT_TRUE(replay_recording(c.recording, arena, nav.get(), {}).ok());
}

}  // namespace
}  // namespace shiftcast
