// shiftcast-peer-bench: shiftcast's BSP queries against two peer libraries on the same level, in one
// process on one thread: Bullet 3 (btCollisionWorld with one static btBvhTriangleMeshShape) for rays,
// sphere sweeps (r 15) and player cylinder sweeps (r 15, h 56), and Embree 3 for rays only.
//
// For each level it builds all three from the same brushes (the peers get level_mesh(): the brush faces as
// triangles), draws the same query sets from free space with a fixed seed (rays, spheres, cylinders over
// short ≤ 16 u, medium 16–256 u and long 2048–4096 u motions), warms each engine up, times it, and prints
// queries per second, the speed ratios (also over a match-like mix of 60% short, 30% medium and 10% long
// queries), how often each peer disagrees with shiftcast by more than 0.5 units of hit distance,
// shiftcast's sweep-vs-ray rate factors and a checksum of shiftcast's answers. The peers are in
// bench/peer_engines.hpp.
//
//   shiftcast-peer-bench                                   1,200-brush procedural level, seed 1
//   shiftcast-peer-bench data/openarena/maps/*.bsp         real maps (.bsp, .map)
//   shiftcast-peer-bench --queries 10000 LEVEL_FILE ...    fewer queries per set, for a quick look
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "bench/peer_engines.hpp"
#include "bench/query_sets.hpp"
#include "collision/bsp_build.hpp"
#include "collision/bsp_tree.hpp"
#include "world/level/level.hpp"
#include "world/level/level_mesh.hpp"
#include "world/level/map_import.hpp"
#include "world/level/procedural_level.hpp"
#include "world/level/q3_bsp_import.hpp"

namespace {

using namespace shiftcast;
using namespace shiftcast::bench;

constexpr std::size_t kDefaultQueriesPerSet = 100'000;
// The procedural arena's upper half is open air up to the boundary walls' tops, where queries would
// measure little more than a descent through empty space; imported maps have structure at every height.
constexpr float kProceduralStartHeightFraction = 0.5f;
// Two engines agree on a hit when their hit distances differ by at most this (units).
constexpr float kAgreementTolerance = 0.5f;
// Untimed queries run by each engine before its timed passes: enough to fault in the tree or BVH and
// train the branch predictors on the code paths, not on particular queries.
constexpr std::size_t kWarmupQueries = 10'000;
// Timed passes repeat over the whole set until this much time has been spent; the fastest pass counts,
// so a slow engine is timed once and a fast one is not judged by a single pass hit by an interrupt.
constexpr double kMinTimedSeconds = 0.25;

constexpr int kQuerySets = kQueryKinds * kMotionLengths;
// The match-like mix of motion lengths (short, medium, long) the "mix" rows report: most of a match's
// queries are a player's or a projectile's next tick, a few are hitscan shots across the map.
constexpr double kMixShare[kMotionLengths] = {0.6, 0.3, 0.1};
// The goal for exact sweeps: their mix rate against Embree's ray mix rate on the same level.
constexpr double kSweepMixVsEmbreeRayGoal = 0.75;

Shape shape_of(QueryKind kind) {
  switch (kind) {
    case QueryKind::kRay:
      return Shape::point();
    case QueryKind::kSphere:
      return Shape::sphere(kSphereRadius);
    case QueryKind::kCylinder:
      return Shape::cylinder(kCylinderRadius, kCylinderHeight);
  }
  return Shape::point();
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Runs `answer` over the queries: a warm-up, then whole timed passes until kMinTimedSeconds; returns the
// fastest pass's rate and leaves the last pass's answers in `out`.
template <typename AnswerFn>
double time_engine(const std::vector<Query>& queries, std::vector<Answer>& out, AnswerFn answer) {
  out.assign(queries.size(), Answer{});
  const std::size_t warmup = std::min(kWarmupQueries, queries.size());
  for (std::size_t i = 0; i < warmup; ++i)
    out[i] = answer(queries[i]);
  double best = 0;
  double spent = 0;
  do {
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < queries.size(); ++i)
      out[i] = answer(queries[i]);
    const double seconds = seconds_since(start);
    spent += seconds;
    best = std::max(best, double(queries.size()) / seconds);
  } while (spent < kMinTimedSeconds);
  return best;
}

struct Disagreement {
  std::int64_t shiftcast_only_hits = 0;  // shiftcast hits, the peer misses
  std::int64_t peer_only_hits = 0;       // the peer hits, shiftcast misses
  std::int64_t shiftcast_earlier = 0;    // both hit, shiftcast's contact more than the tolerance earlier
  std::int64_t shiftcast_later = 0;      // both hit, shiftcast's contact more than the tolerance later
  float worst_earlier = 0;               // largest such gaps, units along the motion
  float worst_later = 0;

  std::int64_t hit_miss() const { return shiftcast_only_hits + peer_only_hits; }
  std::int64_t distance() const { return shiftcast_earlier + shiftcast_later; }
};

Disagreement compare(const std::vector<Answer>& ours, const std::vector<Answer>& peer) {
  Disagreement d;
  for (std::size_t i = 0; i < ours.size(); ++i) {
    const Answer& a = ours[i];
    const Answer& b = peer[i];
    if (a.hit != b.hit) {
      ++(a.hit ? d.shiftcast_only_hits : d.peer_only_hits);
      continue;
    }
    if (!a.hit) continue;
    const float gap = b.distance - a.distance;
    if (gap > kAgreementTolerance) {
      ++d.shiftcast_earlier;
      d.worst_earlier = std::max(d.worst_earlier, gap);
    } else if (-gap > kAgreementTolerance) {
      ++d.shiftcast_later;
      d.worst_later = std::max(d.worst_later, -gap);
    }
  }
  return d;
}

struct SetResult {
  QueryKind kind{};
  MotionLength length{};
  std::size_t queries = 0;
  double hit_rate = 0;  // shiftcast's
  double shiftcast_rate = 0;
  double bullet_rate = 0;
  double embree_rate = 0;  // rays only
  Disagreement bullet;
  Disagreement embree;
};

struct BenchLevel {
  std::string name;
  Level level;
  float start_height_fraction = 1.0f;
};

struct LoadResult {
  std::string error;  // empty when loaded
  BenchLevel bench;
};

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

LoadResult load_level(const std::string& path) {
  LoadResult out;
  out.bench.name = path;
  LevelResult imported;
  if (ends_with(path, ".bsp")) {
    imported = import_q3_bsp_file(path);
  } else if (ends_with(path, ".map")) {
    imported = import_map_file(path);
  } else {
    out.error = path + ": not a level file this benchmark reads (.bsp, .map)";
    return out;
  }
  if (!imported.ok()) {
    out.error = imported.error.describe();
    return out;
  }
  out.bench.level = std::move(imported.level);
  return out;
}

BenchLevel procedural_level() {
  BenchLevel b;
  ProceduralLevel p = make_procedural_level({.seed = kBenchLevelSeed, .target_brushes = kBenchLevelBrushes});
  b.name = "procedural (seed " + std::to_string(kBenchLevelSeed) + ", " + std::to_string(kBenchLevelBrushes) +
           " brushes)";
  b.level.name = b.name;
  b.level.brushes = std::move(p.brushes);
  b.level.brush_contents.assign(b.level.brushes.size(), kContentsSolid);
  b.level.brush_surface_flags.assign(b.level.brushes.size(), 0);
  b.level.bounds = p.bounds;
  b.start_height_fraction = kProceduralStartHeightFraction;
  return b;
}

// Queries per second over the mix: the sets' times per query weighted by kMixShare.
double mix_rate(const std::vector<SetResult>& results, QueryKind kind, double SetResult::*rate) {
  double seconds = 0;
  for (const SetResult& r : results) {
    if (r.kind == kind) seconds += kMixShare[int(r.length)] / (r.*rate);
  }
  return 1.0 / seconds;
}

void print_results(const std::vector<SetResult>& results) {
  std::printf("\n%-16s %8s %7s | %10s %10s %10s | %8s %8s\n", "set", "queries", "hit%", "shiftcast", "Bullet",
              "Embree", "sc/Bul", "sc/Emb");
  std::printf("%-16s %8s %7s | %10s %10s %10s | %8s %8s\n", "", "", "", "Mq/s", "Mq/s", "Mq/s", "", "");
  const double embree_ray_mix = mix_rate(results, QueryKind::kRay, &SetResult::embree_rate);
  for (const SetResult& r : results) {
    const std::string set = std::string(to_string(r.kind)) + " " + to_string(r.length);
    char embree[16] = "-";
    char embree_ratio[16] = "-";
    if (r.kind == QueryKind::kRay) {
      std::snprintf(embree, sizeof embree, "%.3f", r.embree_rate / 1e6);
      std::snprintf(embree_ratio, sizeof embree_ratio, "%.2fx", r.shiftcast_rate / r.embree_rate);
    }
    std::printf("%-16s %8zu %6.1f%% | %10.3f %10.3f %10s | %7.1fx %8s\n", set.c_str(), r.queries,
                100.0 * r.hit_rate, r.shiftcast_rate / 1e6, r.bullet_rate / 1e6, embree,
                r.shiftcast_rate / r.bullet_rate, embree_ratio);
    if (r.length != MotionLength::kLong) continue;
    // After each kind's three sets, its mix; a sweep's mix is set against Embree's ray mix (marked *).
    const double ours = mix_rate(results, r.kind, &SetResult::shiftcast_rate);
    const double bullet = mix_rate(results, r.kind, &SetResult::bullet_rate);
    const bool ray = r.kind == QueryKind::kRay;
    std::snprintf(embree, sizeof embree, "%s%.3f", ray ? "" : "*", embree_ray_mix / 1e6);
    std::snprintf(embree_ratio, sizeof embree_ratio, "%s%.2fx", ray ? "" : "*", ours / embree_ray_mix);
    const std::string mix = std::string(to_string(r.kind)) + " mix";
    std::printf("%-16s %8s %7s | %10.3f %10.3f %10s | %7.1fx %8s\n", mix.c_str(), "60/30/10", "", ours / 1e6,
                bullet / 1e6, embree, ours / bullet, embree_ratio);
  }
  std::printf("(mix: %.0f%% short, %.0f%% medium, %.0f%% long; * Embree's ray mix, the sweeps' yardstick)\n",
              100 * kMixShare[0], 100 * kMixShare[1], 100 * kMixShare[2]);

  std::printf(
      "\nDisagreements with shiftcast (hit distance differs by more than %.1f units; counts of the set):\n",
      kAgreementTolerance);
  std::printf("%-16s %-6s | %8s %8s | %8s %8s %8s %8s | %8s %8s\n", "set", "peer", "hit/miss", "dist",
              "sc-only", "peer-only", "sc-early", "sc-late", "max-early", "max-late");
  for (const SetResult& r : results) {
    const std::string set = std::string(to_string(r.kind)) + " " + to_string(r.length);
    auto row = [&](const char* peer, const Disagreement& d) {
      const double n = double(r.queries);
      std::printf("%-16s %-6s | %7.3f%% %7.3f%% | %8lld %9lld %8lld %8lld | %9.2f %8.2f\n", set.c_str(), peer,
                  100.0 * double(d.hit_miss()) / n, 100.0 * double(d.distance()) / n,
                  static_cast<long long>(d.shiftcast_only_hits), static_cast<long long>(d.peer_only_hits),
                  static_cast<long long>(d.shiftcast_earlier), static_cast<long long>(d.shiftcast_later),
                  d.worst_earlier, d.worst_later);
    };
    row("Bullet", r.bullet);
    if (r.kind == QueryKind::kRay) row("Embree", r.embree);
  }

  std::printf("\nshiftcast sweep-vs-ray rate (queries/s of the sweep over queries/s of the ray):\n");
  std::printf("%-8s %12s %12s\n", "length", "sphere/ray", "cylinder/ray");
  for (int m = 0; m < kMotionLengths; ++m) {
    const double ray = results[m].shiftcast_rate;
    std::printf("%-8s %11.2fx %11.2fx\n", to_string(MotionLength(m)),
                results[kMotionLengths + m].shiftcast_rate / ray,
                results[2 * kMotionLengths + m].shiftcast_rate / ray);
  }

  // The goals of the comparison, each checked on the slowest ratio over the three motion lengths.
  auto min_ratio = [&](QueryKind kind, bool embree) {
    double worst = 1e300;
    for (const SetResult& r : results) {
      if (r.kind != kind) continue;
      worst = std::min(worst, r.shiftcast_rate / (embree ? r.embree_rate : r.bullet_rate));
    }
    return worst;
  };
  struct Goal {
    const char* what;
    double ratio;
    double target;
  };
  const Goal goals[] = {
      {"sphere sweeps vs Bullet", min_ratio(QueryKind::kSphere, false), 10.0},
      {"cylinder sweeps vs Bullet", min_ratio(QueryKind::kCylinder, false), 30.0},
      {"rays vs Bullet", min_ratio(QueryKind::kRay, false), 5.0},
      {"rays vs Embree", min_ratio(QueryKind::kRay, true), 0.5},
  };
  const auto vs_embree_rays = [&](QueryKind kind) {
    return mix_rate(results, kind, &SetResult::shiftcast_rate) / embree_ray_mix;
  };
  const Goal mix_goals[] = {
      {"rays vs Embree rays", vs_embree_rays(QueryKind::kRay), 1.0},
      {"spheres vs Embree rays", vs_embree_rays(QueryKind::kSphere), kSweepMixVsEmbreeRayGoal},
      {"cylinders vs Embree rays", vs_embree_rays(QueryKind::kCylinder), kSweepMixVsEmbreeRayGoal},
  };
  const auto print_goal = [](const Goal& g) {
    std::printf("  %-26s %7.2fx  target >= %4.2fx  %s\n", g.what, g.ratio, g.target,
                g.ratio >= g.target ? "met" : "NOT MET");
  };
  std::printf("\nGoals (slowest ratio over short, medium, long):\n");
  for (const Goal& g : goals)
    print_goal(g);
  std::printf("Goals on the mix (the sweeps' target is issue 11's, for exact sweeps):\n");
  for (const Goal& g : mix_goals)
    print_goal(g);
}

// Returns false when the level cannot be benchmarked (build failure, too few free starts).
bool bench_level(const BenchLevel& b, std::size_t queries_per_set) {
  std::printf("== %s\n", b.name.c_str());

  auto start = std::chrono::steady_clock::now();
  const BspBuildResult built = build_bsp(b.level.brushes, {});
  const double bsp_ms = 1e3 * seconds_since(start);
  if (built.error != BspBuildError::kNone) {
    std::fprintf(stderr, "%s: build_bsp failed at brush %d: %s\n", b.name.c_str(), built.error_brush,
                 to_string(built.error));
    return false;
  }
  const BspTree& tree = built.tree;
  const LevelMesh mesh = level_mesh(b.level);

  start = std::chrono::steady_clock::now();
  const auto bullet = std::make_unique<BulletLevel>(mesh);
  const double bullet_ms = 1e3 * seconds_since(start);
  start = std::chrono::steady_clock::now();
  const auto embree = std::make_unique<EmbreeLevel>(mesh);
  const double embree_ms = 1e3 * seconds_since(start);

  std::printf("brushes %zu, triangles %zu; %s\n", b.level.brushes.size(), mesh.triangles.size(),
              format_stats(built.stats).c_str());
  std::printf("build: shiftcast BSP %.1f ms, Bullet BVH %.1f ms, Embree BVH %.1f ms\n", bsp_ms, bullet_ms,
              embree_ms);
  std::fflush(stdout);

  std::vector<SetResult> results;
  std::uint64_t checksum = kResultHashSeed;
  std::vector<Answer> ours;
  std::vector<Answer> peer;
  std::vector<TraceResult> traces;
  for (int k = 0; k < kQueryKinds; ++k) {
    for (int m = 0; m < kMotionLengths; ++m) {
      const int index = k * kMotionLengths + m;
      SetResult r;
      r.kind = QueryKind(k);
      r.length = MotionLength(m);
      const std::vector<Query> queries =
          make_query_set(tree, shape_of(r.kind), r.kind, r.length, queries_per_set, b.start_height_fraction,
                         kBenchQuerySeed + std::uint32_t(index));
      if (queries.size() != queries_per_set) {
        std::fprintf(stderr, "%s: only %zu free starts for %s %s\n", b.name.c_str(), queries.size(),
                     to_string(r.kind), to_string(r.length));
        return false;
      }
      r.queries = queries.size();

      // The full results are kept outside the timed loop only for the checksum.
      traces.resize(queries.size());
      const Shape shape = shape_of(r.kind);
      if (r.kind == QueryKind::kRay) {
        r.shiftcast_rate = time_engine(queries, ours, [&](const Query& q) {
          const TraceResult t = tree.raycast(q.from, q.direction, q.length);
          return Answer{t.hit, t.fraction * q.length};
        });
        for (std::size_t i = 0; i < queries.size(); ++i) {
          traces[i] = tree.raycast(queries[i].from, queries[i].direction, queries[i].length);
        }
        r.bullet_rate = time_engine(queries, peer, [&](const Query& q) { return bullet->raycast(q); });
        r.bullet = compare(ours, peer);
        r.embree_rate = time_engine(queries, peer, [&](const Query& q) { return embree->raycast(q); });
        r.embree = compare(ours, peer);
      } else {
        r.shiftcast_rate = time_engine(queries, ours, [&](const Query& q) {
          const TraceResult t = tree.trace(shape, q.from, q.to);
          return Answer{t.hit, t.fraction * q.length};
        });
        for (std::size_t i = 0; i < queries.size(); ++i) {
          traces[i] = tree.trace(shape, queries[i].from, queries[i].to);
        }
        r.bullet_rate = time_engine(queries, peer, [&](const Query& q) { return bullet->sweep(r.kind, q); });
        r.bullet = compare(ours, peer);
      }
      std::int64_t hits = 0;
      for (const TraceResult& t : traces) {
        checksum = mix_result(checksum, t);
        hits += t.hit;
      }
      r.hit_rate = double(hits) / double(queries.size());
      std::printf("  %s %s done\n", to_string(r.kind), to_string(r.length));
      std::fflush(stdout);
      results.push_back(r);
    }
  }
  print_results(results);
  std::printf("\nshiftcast checksum %016llx (%zu answers, %s)\n\n", static_cast<unsigned long long>(checksum),
              kQuerySets * queries_per_set, b.name.c_str());
  return true;
}

void print_expected_disagreements() {
  std::printf(
      "Expected disagreements:\n"
      "  * Sweeps: shiftcast's are exact against the brushes (docs/collision.md, held to the brute-force\n"
      "    oracle by the test suites), so a disagreement is the peer's.\n"
      "  * Sweeps vs Bullet, either way: Bullet casts against each triangle by conservative advancement\n"
      "    (GJK, stopping within 0.001 units) and drops casts whose contact normal is degenerate, so it may\n"
      "    miss some contacts (edge-on or at shared triangle edges) and can end a contact up to its\n"
      "    margins away; the cylinder keeps a 0.04-unit margin inside its extents (rims rounded).\n"
      "  * Rays: both peers see the brushes' faces as triangles, including faces buried inside other\n"
      "    brushes. A ray starting in free space reaches the union's surface first, which is a real face, "
      "so\n"
      "    buried faces only matter where brushes overlap and a ray slips through a crack between\n"
      "    triangles (float rounding of vertices from the double-precision clip) or grazes coplanar faces.\n"
      "  * Hits within 0.5 units of the segment's end may be a hit for one engine and a miss for another.\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t queries_per_set = kDefaultQueriesPerSet;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--queries" && i + 1 < argc) {
      queries_per_set = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--help" || arg == "-h" || (arg.starts_with("--") && arg != "--queries")) {
      std::fprintf(stderr, "usage: %s [--queries N] [LEVEL_FILE ...]   (.bsp, .map; none: procedural)\n",
                   argv[0]);
      return arg.starts_with("-h") || arg == "--help" ? 0 : 2;
    } else {
      files.emplace_back(arg);
    }
  }
  if (queries_per_set == 0) {
    std::fprintf(stderr, "--queries must be positive\n");
    return 2;
  }

  std::printf(
      "shiftcast-peer-bench: %zu queries per set, single thread; sphere r %.0f, cylinder r %.0f h %.0f\n",
      queries_per_set, kSphereRadius, kCylinderRadius, kCylinderHeight);
  print_expected_disagreements();
  std::printf("\n");
  int failures = 0;
  if (files.empty()) {
    failures += !bench_level(procedural_level(), queries_per_set);
  }
  for (const std::string& path : files) {
    LoadResult loaded = load_level(path);
    if (!loaded.error.empty()) {
      std::fprintf(stderr, "%s\n", loaded.error.c_str());
      ++failures;
      continue;
    }
    failures += !bench_level(loaded.bench, queries_per_set);
  }
  return failures == 0 ? 0 : 1;
}
