// shiftcast-exactness-report: how exact BspTree::trace is (issue 11, collision/trace_result.hpp), measured
// independently: every answer is judged by tests/support/exactness_check against the brute-force
// BrushOracle, which shares no code with the BSP.
//
//   shiftcast-exactness-report                                  the five OpenArena test maps (data/openarena)
//   shiftcast-exactness-report data/openarena/maps/*.bsp        any levels (.bsp, .map, .obj, .level)
//   shiftcast-exactness-report --queries 10000 LEVEL_FILE ...   fewer sweeps per shape, for a quick look
//
// Per level, N sphere sweeps (r uniform in 4–32) and N player-cylinder sweeps (r 15, h 56), default
// 100,000 each, from starts anywhere in the level's bounds that the oracle finds at least 0.01 units
// clear of every brush (as the benchmarks' query sets), with a match's motions (60% 0–16 units, 30%
// 16–256, 10% 2048–4096; tests/support/exactness_queries). Prints one table
// per level and one for all of them: free starts refused as start_solid (and their true clearance),
// hits whose stop pose (end_position) is farther than 0.1, 1 or 4 units from every brush (the true gap,
// not along the motion), hits where the exact sweep touches nothing, tunnels, late hits, stops in
// solid, early hits, wrong normals, the mean exact_tests per sweep, and a checksum of the answers.
// Single thread, fixed seeds: the same build gives the same table.
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "collision/bsp_build.hpp"
#include "tests/support/brush_oracle.hpp"
#include "tests/support/exactness_check.hpp"
#include "tests/support/exactness_queries.hpp"
#include "world/level/compiled_level.hpp"
#include "world/level/query_csv.hpp"

namespace {

using namespace shiftcast;

constexpr std::size_t kDefaultQueries = 100'000;
constexpr float kSphereRadiusMin = 4;
constexpr float kSphereRadiusMax = 32;
constexpr float kPlayerRadius = 15;
constexpr float kPlayerHeight = 56;
constexpr std::uint32_t kSeed = 20261125;
const char* const kDefaultMaps[] = {"oa_dm1", "oa_dm4", "oa_ctf2", "oa_rpg3dm2", "wrackdm17"};

struct Column {
  ExactnessTally tally;
  std::uint64_t checksum = kResultHashSeed;
  std::int64_t no_start = 0;  // shapes for which no free start was found
};

struct Loaded {
  std::vector<Brush> brushes;
  BspTree tree;
};

// FNV-1a over a level's checksum, for the checksum of all levels.
std::uint64_t mix_checksum(std::uint64_t hash, std::uint64_t level) {
  for (int i = 0; i < 8; ++i)
    hash = (hash ^ ((level >> (8 * i)) & 0xff)) * 0x100000001b3ull;
  return hash;
}

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The level's brushes and the tree a server would query: a compiled file's own, or built from the
// source with the default options (what compile_level does).
bool load(const std::string& path, Loaded& out) {
  if (ends_with(path, ".level")) {
    LevelLoadResult loaded = load_compiled_level_file(path);
    if (!loaded.ok()) {
      std::fprintf(stderr, "%s: %s\n", path.c_str(), loaded.message.c_str());
      return false;
    }
    out.brushes = std::move(loaded.level.level.brushes);
    out.tree = std::move(loaded.level.tree);
    return true;
  }
  LevelResult imported = import_level_file(path);
  if (!imported.ok()) {
    std::fprintf(stderr, "%s\n", imported.error.describe().c_str());
    return false;
  }
  out.brushes = std::move(imported.level.brushes);
  BspBuildResult built = build_bsp(out.brushes, {});
  if (built.error != BspBuildError::kNone) {
    std::fprintf(stderr, "%s: the BSP build failed\n", path.c_str());
    return false;
  }
  out.tree = std::move(built.tree);
  return true;
}

void sweep(const BspTree& tree, const BrushOracle& oracle, bool cylinder, std::size_t count,
           std::uint32_t seed, Column& column) {
  ExactnessQueries queries(oracle, tree.bounds(), seed, StartPlaces::kAnywhere);
  const ExactnessCheck check(tree, oracle);
  std::size_t done = 0;
  while (done < count) {
    const Shape shape = cylinder ? Shape::cylinder(kPlayerRadius, kPlayerHeight)
                                 : Shape::sphere(float(queries.uniform(kSphereRadiusMin, kSphereRadiusMax)));
    const std::optional<Vec3> from = queries.free_start(shape);
    if (!from) {
      if (++column.no_start > std::int64_t(count)) return;  // a level with no room for the shape
      continue;
    }
    const SweepVerdict v = check.sweep(shape, *from, *from + queries.motion());
    column.tally.add(v);
    column.checksum = mix_result(column.checksum, v.got);
    ++done;
  }
}

std::string percent(std::int64_t n, std::int64_t of) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%" PRId64 " (%.3f%%)", n, of > 0 ? 100.0 * double(n) / double(of) : 0.0);
  return buf;
}

void row(const char* what, const std::string& a, const std::string& b) {
  std::printf("| %s | %s | %s |\n", what, a.c_str(), b.c_str());
}

void print_table(const std::string& title, const Column& spheres, const Column& cylinders) {
  const Column* c[2] = {&spheres, &cylinders};
  const auto each = [&](auto f) { return std::pair{f(*c[0]), f(*c[1])}; };
  const auto show = [&](const char* what, auto f) {
    const auto [a, b] = each(f);
    row(what, a, b);
  };
  const auto fmt = [](const char* format, auto... args) {
    char buf[128];
    std::snprintf(buf, sizeof buf, format, args...);
    return std::string(buf);
  };
  std::printf("\n%s\n\n", title.c_str());
  std::printf("| | spheres r %.0f–%.0f | player cylinder r %.0f h %.0f |\n|---|---|---|\n",
              double(kSphereRadiusMin), double(kSphereRadiusMax), double(kPlayerRadius),
              double(kPlayerHeight));
  show("sweeps from free starts (≥ 0.01 u clear)",
       [&](const Column& x) { return fmt("%" PRId64, x.tally.sweeps); });
  show("reported hits (exact contacts)",
       [&](const Column& x) { return fmt("%" PRId64 " (%" PRId64 ")", x.tally.hits, x.tally.exact_hits); });
  show("free starts reported start_solid",
       [&](const Column& x) { return percent(x.tally.count(Defect::kFalseStartSolid), x.tally.sweeps); });
  show("— their true clearance, median / max (u)", [&](const Column& x) {
    return fmt("%.3f / %.3f", median_of(x.tally.false_start_clearances),
               max_of(x.tally.false_start_clearances));
  });
  show("hits stopping > 0.1 u / > 1 u / > 4 u from every brush", [&](const Column& x) {
    return fmt("%" PRId64 " / %" PRId64 " / %" PRId64, x.tally.stops_farther_than(0.1),
               x.tally.stops_farther_than(1), x.tally.stops_farther_than(4));
  });
  show("— the farthest stop (u)",
       [&](const Column& x) { return fmt("%.3f", max_of(x.tally.far_stop_gaps)); });
  show("hits stopping > kSurfaceBackoff + 1e-3 u from every brush",
       [&](const Column& x) { return percent(x.tally.count(Defect::kFarStop), x.tally.hits); });
  show("reported hits where the exact sweep touches nothing",
       [&](const Column& x) { return percent(x.tally.count(Defect::kPhantom), x.tally.hits); });
  show("tunnels / late hits / ends in solid", [&](const Column& x) {
    return fmt("%" PRId64 " / %" PRId64 " / %" PRId64, x.tally.count(Defect::kThrough),
               x.tally.count(Defect::kLate), x.tally.count(Defect::kEndsInSolid));
  });
  show("early hits (before the contact, beyond 1e-3 u)",
       [&](const Column& x) { return percent(x.tally.count(Defect::kEarly), x.tally.hits); });
  show("wrong normals (not the touched feature's)",
       [&](const Column& x) { return percent(x.tally.count(Defect::kWrongNormal), x.tally.hits); });
  show("mean exact_tests per sweep",
       [&](const Column& x) { return fmt("%.2f", x.tally.mean_exact_tests()); });
  show("answers checksum", [&](const Column& x) { return fmt("%016" PRIx64, x.checksum); });
  for (const Column* x : c) {
    if (x->no_start > 0) std::printf("(%" PRId64 " shapes found no free start)\n", x->no_start);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t queries = kDefaultQueries;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--queries" && i + 1 < argc) {
      queries = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg.starts_with("-")) {
      std::fprintf(stderr, "usage: %s [--queries N] [LEVEL_FILE ...]   (.bsp, .map, .obj, .level)\n",
                   argv[0]);
      return arg == "--help" || arg == "-h" ? 0 : 2;
    } else {
      files.emplace_back(arg);
    }
  }
  if (queries == 0) {
    std::fprintf(stderr, "--queries must be positive\n");
    return 2;
  }
  if (files.empty()) {
    for (const char* name : kDefaultMaps) {
      files.push_back((std::filesystem::path(SHIFTCAST_SOURCE_DIR) / "data" / "openarena" / "maps" /
                       (std::string(name) + ".bsp"))
                          .string());
    }
  }
  std::printf(
      "shiftcast-exactness-report: %zu sphere and %zu player-cylinder sweeps per level, judged against the "
      "brute-force oracle (tests/support/exactness_check.hpp); single thread, seed %u\n",
      queries, queries, kSeed);
  Column all_spheres;
  Column all_cylinders;
  int failures = 0;
  for (std::size_t f = 0; f < files.size(); ++f) {
    Loaded level;
    if (!load(files[f], level)) {
      ++failures;
      continue;
    }
    const auto start = std::chrono::steady_clock::now();
    const BrushOracle oracle(level.brushes);
    Column spheres;
    Column cylinders;
    sweep(level.tree, oracle, false, queries, kSeed + std::uint32_t(2 * f), spheres);
    sweep(level.tree, oracle, true, queries, kSeed + std::uint32_t(2 * f + 1), cylinders);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    print_table(std::filesystem::path(files[f]).filename().string() + " (" +
                    std::to_string(level.brushes.size()) + " brushes, judged in " +
                    std::to_string(int(seconds + 0.5)) + " s)",
                spheres, cylinders);
    all_spheres.tally.merge(spheres.tally);
    all_cylinders.tally.merge(cylinders.tally);
    all_spheres.checksum = mix_checksum(all_spheres.checksum, spheres.checksum);
    all_cylinders.checksum = mix_checksum(all_cylinders.checksum, cylinders.checksum);
    all_spheres.no_start += spheres.no_start;
    all_cylinders.no_start += cylinders.no_start;
  }
  if (files.size() > 1) print_table("All levels", all_spheres, all_cylinders);
  return failures == 0 ? 0 : 1;
}
