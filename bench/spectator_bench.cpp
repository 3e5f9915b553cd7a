// spectator_bench: what a live view costs the server (docs/server.md, "Pictures"): one spectator frame
// built from a 32-player match on OpenArena's oa_dm1 with 256 projectiles and 200 props (the frame every
// viewer of the match shares, built at most 20 times a second on the HTTP threads), and the floor plan's
// exact BSP cut of the level at a player's height (once per level and height, then cached).
//
//   build/bench/shiftcast_spectator_bench
//   build/bench/shiftcast_spectator_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// Counters: the frame's bytes, and the cut's polygons. The map comes from scripts/fetch-openarena-maps.sh;
// without it the program says so and exits 0.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench/openarena_level.hpp"
#include "server/spectator/spectator_frame.hpp"
#include "world/level/level_slice.hpp"
#include "world/match/match_setup.hpp"

namespace {

using namespace shiftcast;

std::unique_ptr<MatchSetup> make_match(const OpenArenaLevel& level) {
  return make_openarena_match("spectator_bench", level, 64, 32, 256, 200, 1);
}

void BM_SpectatorFrame(benchmark::State& state, const OpenArenaLevel* level) {
  std::unique_ptr<MatchSetup> match = make_match(*level);
  if (!match) {
    state.SkipWithError("no match");
    return;
  }
  for (int i = 0; i < 256; ++i)
    match->step();
  WorldView view;
  view.tick = match->simulation().tick();
  const auto entities = match->simulation().entities();
  view.entities.assign(entities.begin(), entities.end());
  std::size_t bytes = 0;
  for (auto _ : state) {
    const std::string frame = encode_spectator_frame(view, view.tick, {}, {});
    bytes = frame.size();
    benchmark::DoNotOptimize(frame.data());
  }
  state.counters["entities"] = double(view.entities.size());
  state.counters["bytes"] = double(bytes);
}

void BM_FloorPlanCut(benchmark::State& state, const OpenArenaLevel* level) {
  // The default cut's height on oa_dm1: its largest floor, 40 units up (server/spectator/floor_plan.cpp).
  const double z = -144 + 40;
  std::size_t polygons = 0;
  for (auto _ : state) {
    const std::vector<SlicePolygon> cut = slice_solid(level->compiled.tree, z);
    polygons = cut.size();
    benchmark::DoNotOptimize(cut.data());
  }
  state.counters["polygons"] = double(polygons);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  OpenArenaLevel level;
  if (const int status = load_openarena_level("spectator_bench", "oa_dm1", level); status != kLevelLoaded)
    return status == kLevelMissing ? 0 : 1;
  benchmark::RegisterBenchmark("BM_SpectatorFrame/oa_dm1/32_players_256_projectiles_200_props",
                               BM_SpectatorFrame, &level)
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("BM_FloorPlanCut/oa_dm1", BM_FloorPlanCut, &level)
      ->Unit(benchmark::kMicrosecond);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
