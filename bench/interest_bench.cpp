// interest_bench: what interest management costs the server per snapshot, with and without line of sight.
// A 32-player match on OpenArena's oa_dm1 at 64 Hz (bots on the navmesh, projectiles in flight), a
// snapshot every other tick as the server sends them; each snapshot runs what Match::send_frames asks of
// the filter: begin_snapshot once, then select for every player, each with its own SightMemory carried
// from snapshot to snapshot. Only the filter is timed (the simulation steps between snapshots are not).
//
//   build/bench/shiftcast_interest_bench
//   build/bench/shiftcast_interest_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// Counters per snapshot: players sent per viewer, segments traced (line of sight), players the sight test
// culled. The map comes from scripts/fetch-openarena-maps.sh; without it the program says so and exits 0.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench/openarena_level.hpp"
#include "server/interest_filter.hpp"
#include "world/match/match_setup.hpp"

namespace {

using namespace shiftcast;
using Clock = std::chrono::steady_clock;

constexpr int kTickRate = 64;
constexpr int kTicksPerSnapshot = 2;  // 32 Hz snapshots, the shipped configuration
constexpr int kPlayers = 32;
constexpr int kProjectiles = 64;
constexpr std::uint32_t kSeed = 1;

std::unique_ptr<MatchSetup> make_match(const OpenArenaLevel& level) {
  return make_openarena_match("interest_bench", level, kTickRate, kPlayers, kProjectiles, 0, kSeed);
}

// One iteration: the simulation runs to the next snapshot (untimed), then the filter's work for it.
void BM_InterestSnapshot(benchmark::State& state, const OpenArenaLevel* level, int line_of_sight) {
  std::unique_ptr<MatchSetup> match = make_match(*level);
  if (!match) {
    state.SkipWithError("no match");
    return;
  }
  for (int i = 0; i < 256; ++i)
    match->step();
  InterestSettings settings;
  settings.line_of_sight = line_of_sight;
  InterestFilter filter(settings, level->compiled.visibility, &level->compiled.tree);
  std::vector<SightMemory> memories(kPlayers + 1);
  std::vector<std::uint32_t> kept;
  double sent = 0, segments = 0, culled = 0, viewers = 0;
  for (auto _ : state) {
    for (int t = 0; t < kTicksPerSnapshot; ++t)
      match->step();
    const Simulation& sim = match->simulation();
    const Clock::time_point start = Clock::now();
    filter.begin_snapshot(sim.entities(), float(kTicksPerSnapshot) / float(kTickRate));
    std::size_t m = 0;
    for (const Entity& e : sim.entities()) {
      if (e.kind != EntityKind::kPlayer || m >= memories.size()) continue;
      filter.select(filter.viewer(e.id, &e), kept, &memories[m]);
      sent += double(kept.size());
      ++m;
    }
    state.SetIterationTime(std::chrono::duration<double>(Clock::now() - start).count());
    viewers += double(m);
    for (SightMemory& memory : memories) {
      segments += double(memory.take_segments());
      culled += double(memory.take_culled());
    }
  }
  const double snapshots = double(state.iterations());
  state.counters["sent_per_viewer"] = viewers > 0 ? sent / viewers : 0;
  state.counters["segments"] = segments / snapshots;
  state.counters["sight_culled"] = culled / snapshots;
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  OpenArenaLevel level;
  if (const int status = load_openarena_level("interest_bench", "oa_dm1", level); status != kLevelLoaded)
    return status == kLevelMissing ? 0 : 1;
  benchmark::RegisterBenchmark("BM_InterestSnapshot/oa_dm1/set_only", BM_InterestSnapshot, &level, 0)
      ->UseManualTime()
      ->Iterations(2000)
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("BM_InterestSnapshot/oa_dm1/line_of_sight", BM_InterestSnapshot, &level, 1)
      ->UseManualTime()
      ->Iterations(2000)
      ->Unit(benchmark::kMicrosecond);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
