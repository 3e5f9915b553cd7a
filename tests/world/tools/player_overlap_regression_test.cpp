// The rare player-player overlap of the load ladder (docs/replay.md, "The player-player overlap"), as a
// regression test made from its recording: tests/data/oa_dm1_player_overlap.scrp is a 32-client match
// on oa_dm1 recorded by shiftcast-server (the first 462 ticks). Replayed by the simulation as it was, it
// matched every recorded state hash and met the overlap at tick 446 (players 15 and 17, worn through
// the skin by a crease slide: the recording's own tick record counts it). Replayed now, the same
// commands must run without a single overlap: the oracle is the brute-force count over every pair after
// every tick (Simulation::count_overlaps_brute_force), not the tick's own invariant check.
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>

#include "world/level/compiled_level.hpp"
#include "world/tools/replay_command.hpp"

namespace shiftcast {
namespace {

const std::string kRecording = std::string(SHIFTCAST_SOURCE_DIR) + "/tests/data/oa_dm1_player_overlap.scrp";
const std::string kLevel = std::string(SHIFTCAST_SOURCE_DIR) + "/data/openarena/maps/oa_dm1.bsp";
constexpr std::uint64_t kOverlapTick = 446;

TEST(PlayerOverlapRegression, TheRecordedMatchRunsWithoutAnOverlap) {
  if (!std::filesystem::exists(kLevel))
    GTEST_SKIP() << kLevel << " is absent: run scripts/fetch-openarena-maps.sh";
  const RecordingReadResult read = read_recording_file(kRecording);
  ASSERT_TRUE(read.ok()) << to_string(read.error) << ": " << read.message;
  const Recording& rec = read.recording;
  // The recording is the failure: the server's tick 446 re-placed an overlapping player.
  bool recorded_overlap = false;
  for (const RecordedTick& t : rec.ticks)
    recorded_overlap |= t.tick == kOverlapTick && t.invariant_violations == 1;
  ASSERT_TRUE(recorded_overlap);
  ASSERT_GT(rec.ticks.back().tick, kOverlapTick + 8);

  LevelResult imported = import_level_file(kLevel);
  ASSERT_TRUE(imported.ok());
  CompiledLevelResult compiled = compile_level(std::move(imported.level), {}, {});
  ASSERT_TRUE(compiled.ok());
  std::string error;
  const std::unique_ptr<NavMesh> nav = NavMesh::from_data(compiled.level.navmesh, &error);
  ASSERT_NE(nav, nullptr) << error;

  ReplayOptions options;
  options.stop_at_mismatch = false;
  options.audit_queries = false;
  int overlaps = 0;
  std::optional<std::uint64_t> first_guard;
  options.on_tick = [&](const Simulation& sim, const RecordedTick&) {
    overlaps += sim.count_overlaps_brute_force();
    if (!first_guard && sim.last_tick().skin_guards > 0) first_guard = sim.tick();
  };
  const ReplayResult r = replay_recording(rec, compiled.level, nav.get(), options);
  ASSERT_TRUE(r.ok()) << to_string(r.error) << ": " << r.message;
  EXPECT_EQ(r.ticks_replayed, rec.ticks.size());
  EXPECT_EQ(overlaps, 0);
  EXPECT_EQ(r.invariant_violations, 0u);
  // The replay is the recorded match until the skin guard first acts: the hashes cannot differ earlier.
  ASSERT_TRUE(first_guard.has_value());
  ASSERT_TRUE(r.first_mismatch.has_value());
  EXPECT_GE(*r.first_mismatch, *first_guard);
}

}  // namespace
}  // namespace shiftcast
