// shiftcast_bench: speed of the static-level collision queries on a 1,200-brush procedural level (seed 1).
//
// Measures rays (BspTree::raycast), sphere sweeps (radius 8) and player sweeps (cylinder r15 h56) over
// short (0–16 u), medium (16–256 u) and long (2048–4096 u) motions from free space; the cost of bevel
// planes for player sweeps (same queries against a tree built without them); and build_bsp itself.
// Each query benchmark labels its row with a checksum of every answer in its query set, so a faster
// build is also shown to give the same answers, and reports the fraction of queries that hit.
//
//   scripts/bench.sh                                    Release build, 5 repetitions, medians
//   build/bench/shiftcast_bench --benchmark_filter=cylinder
#include <benchmark/benchmark.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench/query_sets.hpp"
#include "collision/bsp_build.hpp"
#include "collision/bsp_tree.hpp"
#include "world/level/procedural_level.hpp"

namespace {

using namespace shiftcast;
using namespace shiftcast::bench;

// A power of two so the benchmark loop can wrap with a mask; large enough that a timing averages over
// many paths through the tree rather than a few the branch predictor has learnt, small enough to
// generate in milliseconds.
constexpr std::size_t kQueriesPerSet = 4096;
static_assert((kQueriesPerSet & (kQueriesPerSet - 1)) == 0);
constexpr float kStartHeightFraction = 0.5f;
Shape shape_of(QueryKind kind) {
  switch (kind) {
    case QueryKind::kRay:
      return Shape::point();
    case QueryKind::kSphere:
      return Shape::sphere(8);
    case QueryKind::kCylinder:
      return Shape::cylinder(15, 56);
  }
  return Shape::point();
}

struct StaticLevel {
  std::string error;  // empty when the level built
  ProceduralLevel level;
  BspBuildResult with_bevels;
  BspBuildResult without_bevels;
  std::array<std::vector<Query>, kQueryKinds * kMotionLengths> query_sets;

  const std::vector<Query>& queries(QueryKind kind, MotionLength length) const {
    return query_sets[int(kind) * kMotionLengths + int(length)];
  }
};

StaticLevel load_static_level() {
  StaticLevel s;
  s.level = make_procedural_level({.seed = kBenchLevelSeed, .target_brushes = kBenchLevelBrushes});
  s.with_bevels = build_bsp(s.level.brushes, {});
  s.without_bevels = build_bsp(s.level.brushes, {.add_bevels = false});
  for (const BspBuildResult* built : {&s.with_bevels, &s.without_bevels}) {
    if (built->error != BspBuildError::kNone) {
      s.error = std::string("build_bsp failed at brush ") + std::to_string(built->error_brush) + ": " +
                to_string(built->error);
      return s;
    }
  }
  for (int k = 0; k < kQueryKinds; ++k) {
    for (int m = 0; m < kMotionLengths; ++m) {
      const int index = k * kMotionLengths + m;
      s.query_sets[index] =
          make_query_set(s.with_bevels.tree, shape_of(QueryKind(k)), QueryKind(k), MotionLength(m),
                         kQueriesPerSet, kStartHeightFraction, kBenchQuerySeed + index);
      if (s.query_sets[index].size() != kQueriesPerSet) {
        s.error = "too few free starts for query set " + std::to_string(index);
        return s;
      }
    }
  }
  return s;
}

// Built on first use, inside the first benchmark's untimed setup, and shared by every benchmark after.
const StaticLevel& static_level() {
  static const StaticLevel level = load_static_level();
  return level;
}

struct PassSummary {
  std::uint64_t checksum = kResultHashSeed;
  std::int64_t hits = 0;
  std::int64_t start_solid = 0;
  double fraction_sum = 0;
};

// Times `answer` over the query set, cycling through it, after one untimed pass that fingerprints the
// answers: the checksum is the same however many iterations the timing loop happens to run.
template <typename Answer>
PassSummary time_queries(benchmark::State& state, const std::vector<Query>& queries, Answer answer) {
  PassSummary summary;
  for (const Query& q : queries) {
    const TraceResult r = answer(q);
    summary.checksum = mix_result(summary.checksum, r);
    summary.hits += r.hit;
    summary.start_solid += r.start_solid;
    summary.fraction_sum += r.fraction;
  }

  std::size_t next = 0;
  for (auto _ : state) {
    TraceResult r = answer(queries[next]);
    benchmark::DoNotOptimize(r);
    next = (next + 1) & (kQueriesPerSet - 1);
  }

  state.SetItemsProcessed(state.iterations());
  state.counters["hit_rate"] = double(summary.hits) / double(queries.size());
  char label[32];
  std::snprintf(label, sizeof label, "checksum=%016llx", static_cast<unsigned long long>(summary.checksum));
  state.SetLabel(label);
  return summary;
}

PassSummary time_kind(benchmark::State& state, const BspTree& tree, QueryKind kind,
                      const std::vector<Query>& queries) {
  // One lambda per kind rather than a switch per query, so the timed loop holds only the query itself.
  if (kind == QueryKind::kRay) {
    return time_queries(state, queries,
                        [&](const Query& q) { return tree.raycast(q.from, q.direction, q.length); });
  }
  const Shape shape = shape_of(kind);
  return time_queries(state, queries, [&](const Query& q) { return tree.trace(shape, q.from, q.to); });
}

void BM_Query(benchmark::State& state, QueryKind kind, MotionLength length) {
  const StaticLevel& s = static_level();
  if (!s.error.empty()) {
    state.SkipWithError(s.error.c_str());
    return;
  }
  time_kind(state, s.with_bevels.tree, kind, s.queries(kind, length));
}

BENCHMARK_CAPTURE(BM_Query, ray_short, QueryKind::kRay, MotionLength::kShort);
BENCHMARK_CAPTURE(BM_Query, ray_medium, QueryKind::kRay, MotionLength::kMedium);
BENCHMARK_CAPTURE(BM_Query, ray_long, QueryKind::kRay, MotionLength::kLong);
BENCHMARK_CAPTURE(BM_Query, sphere_short, QueryKind::kSphere, MotionLength::kShort);
BENCHMARK_CAPTURE(BM_Query, sphere_medium, QueryKind::kSphere, MotionLength::kMedium);
BENCHMARK_CAPTURE(BM_Query, sphere_long, QueryKind::kSphere, MotionLength::kLong);
BENCHMARK_CAPTURE(BM_Query, cylinder_short, QueryKind::kCylinder, MotionLength::kShort);
BENCHMARK_CAPTURE(BM_Query, cylinder_medium, QueryKind::kCylinder, MotionLength::kMedium);
BENCHMARK_CAPTURE(BM_Query, cylinder_long, QueryKind::kCylinder, MotionLength::kLong);

// The same player sweeps against trees built with and without bevel planes. Starts were chosen free
// in the bevelled tree; without bevels the shifted planes reach further out past convex edges, so
// some starts are reported in solid and some contacts come earlier: start_solid_rate and mean_fraction
// show how much, next to the speed difference.
void BM_CylinderMediumBevels(benchmark::State& state) {
  const StaticLevel& s = static_level();
  if (!s.error.empty()) {
    state.SkipWithError(s.error.c_str());
    return;
  }
  const BspBuildResult& built = state.range(0) != 0 ? s.with_bevels : s.without_bevels;
  const std::vector<Query>& queries = s.queries(QueryKind::kCylinder, MotionLength::kMedium);
  const PassSummary summary = time_kind(state, built.tree, QueryKind::kCylinder, queries);
  state.counters["start_solid_rate"] = double(summary.start_solid) / double(queries.size());
  state.counters["mean_fraction"] = summary.fraction_sum / double(queries.size());
  state.counters["nodes"] = built.stats.nodes;
}
BENCHMARK(BM_CylinderMediumBevels)->ArgName("bevels")->Arg(1)->Arg(0);

void BM_BuildBsp(benchmark::State& state) {
  const ProceduralLevel level =
      make_procedural_level({.seed = kBenchLevelSeed, .target_brushes = std::int32_t(state.range(0))});
  BspBuildStats stats;
  for (auto _ : state) {
    BspBuildResult built = build_bsp(level.brushes, {});
    if (built.error != BspBuildError::kNone) {
      state.SkipWithError(to_string(built.error));
      break;
    }
    stats = built.stats;
    benchmark::DoNotOptimize(built);
  }
  state.counters["brushes"] = double(level.brushes.size());
  state.counters["nodes"] = stats.nodes;
  state.counters["bevel_planes"] = stats.bevel_planes;
  state.counters["depth"] = stats.max_depth;
}
BENCHMARK(BM_BuildBsp)->Arg(240)->Arg(kBenchLevelBrushes)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
