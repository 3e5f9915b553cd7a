// Issue 11: BspTree's queries are exact (collision/trace_result.hpp). Every query here is judged by
// tests/support/exactness_check against the brute-force oracle, which never touches the BSP:
//   1. start_solid only when the shape truly overlaps a brush deeper than kPenetrationTolerance: free
//      starts (at least 0.01 clear of every brush) are never refused, starts touching within the
//      tolerance move, deeper ones are refused;
//   2. a hit stops the shape within kSurfaceBackoff (+ 1e-3 rounding) of the brushes, never in one;
//      a motion that touches nothing in truth reports no hit;
//   3. never late, never through, never ending in solid;
//   4. the normal is the true one (the oracle's, or a supporting normal of the obstacle at the contact
//      where normals legitimately jump), never a bevel's;
//   5. BspTree::overlap is true exactly when the shape is deeper than the tolerance.
// On a 240-brush procedural level (stairs, ramps, 1-unit walls at any yaw, sharp wedges and spikes,
// overlapping random brushes) and on the five OpenArena maps scripts/fetch-openarena-maps.sh fetches
// into data/openarena/maps (skipped only where a map is absent), for rays, spheres r 0.5–128,
// cylinders r 1–64 h 1–128, axis-aligned boxes and yawed boxes of half extents 1–64, with motions as in
// a match (60% 0–16 units, 30% 16–256, 10% 2048–4096). The figures are printed for the docs; every
// defect count must be zero.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "collision/bsp_build.hpp"
#include "collision/turned_shape.hpp"
#include "tests/support/brush_oracle.hpp"
#include "tests/support/exactness_check.hpp"
#include "tests/support/exactness_queries.hpp"
#include "world/level/procedural_level.hpp"
#include "world/level/q3_bsp_import.hpp"

namespace shiftcast {
namespace {

// Per level and shape kind. Sanitizer builds run the oracle about ten times slower: fewer queries.
#if defined(SHIFTCAST_SANITIZE) || defined(__SANITIZE_ADDRESS__)
constexpr int kSweepsPerShape = 250;
constexpr int kSurfaceStartsPerShape = 60;
constexpr int kOverlapsPerShape = 250;
#else
constexpr int kSweepsPerShape = 1500;
constexpr int kSurfaceStartsPerShape = 300;
constexpr int kOverlapsPerShape = 1500;
#endif
// Defects are reported in detail up to this many per test; the rest are counted.
constexpr int kDetailedDefects = 3;
// Starts against a surface: exactly touching, shallower than the tolerance (along the motion that
// reached the surface, which makes them shallower still across it), and well beyond it.
constexpr double kShallowDepth = kPenetrationTolerance / 4;
constexpr double kDeepDepthMin = 3 * kPenetrationTolerance;
constexpr double kDeepDepthMax = 8 * kPenetrationTolerance;

const char* const kLevels[] = {"procedural", "oa_dm1", "oa_dm4", "oa_ctf2", "oa_rpg3dm2", "wrackdm17"};
constexpr ExactShape kShapes[] = {ExactShape::kRay, ExactShape::kSphere, ExactShape::kCylinder,
                                  ExactShape::kBox, ExactShape::kYawedBox};

struct ExactLevel {
  std::vector<Brush> brushes;
  BspTree tree;
  std::unique_ptr<BrushOracle> oracle;
};

// Levels load once per process (ctest runs each test alone; a whole-binary run shares them).
const ExactLevel* load_level(const std::string& name) {
  static std::map<std::string, std::unique_ptr<ExactLevel>> levels;
  if (auto it = levels.find(name); it != levels.end()) return it->second.get();
  auto level = std::make_unique<ExactLevel>();
  if (name == "procedural") {
    level->brushes = make_procedural_level({.seed = 11, .target_brushes = 240}).brushes;
  } else {
    const std::filesystem::path path =
        std::filesystem::path(SHIFTCAST_SOURCE_DIR) / "data" / "openarena" / "maps" / (name + ".bsp");
    if (!std::filesystem::exists(path)) return nullptr;
    LevelResult imported = import_q3_bsp_file(path.string());
    if (!imported.ok()) throw std::runtime_error(imported.error.describe());
    level->brushes = std::move(imported.level.brushes);
  }
  BspBuildResult built = build_bsp(level->brushes, {});
  if (built.error != BspBuildError::kNone) throw std::runtime_error(name + ": the BSP build failed");
  level->tree = std::move(built.tree);
  level->oracle = std::make_unique<BrushOracle>(level->brushes);
  return levels.emplace(name, std::move(level)).first->second.get();
}

std::uint32_t seed_of(const std::string& level, int purpose) {
  std::uint32_t h = 2166136261u;
  for (char c : level)
    h = (h ^ std::uint8_t(c)) * 16777619u;
  return h ^ std::uint32_t(purpose * 7919);
}

std::string describe(const SampledShape& s, Vec3 from, Vec3 to) {
  char buf[512];
  const Shape& x = s.shape;
  std::snprintf(buf, sizeof buf,
                "shape kind %d r %.9g h %.9g half (%.9g, %.9g, %.9g) offset (%.9g, %.9g, %.9g) yaw %.9g, "
                "from (%.9g, %.9g, %.9g) to (%.9g, %.9g, %.9g)",
                int(x.kind), double(x.radius), double(x.height), double(x.half_extents.x),
                double(x.half_extents.y), double(x.half_extents.z), double(x.offset.x), double(x.offset.y),
                double(x.offset.z), s.yaw, double(from.x), double(from.y), double(from.z), double(to.x),
                double(to.y), double(to.z));
  return buf;
}

void expect_no_defects(const ExactnessTally& tally) {
  for (int d = 0; d < kDefectKinds; ++d)
    EXPECT_EQ(tally.count(Defect(d)), 0) << to_string(Defect(d));
}

class BspExact : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    level_ = load_level(GetParam());
    if (level_ == nullptr) {
      GTEST_SKIP() << GetParam() << ".bsp is absent: run scripts/fetch-openarena-maps.sh";
    }
  }

  // Sweeps of one kind of shape from free starts, judged by every rule.
  void sweep_free_starts(ExactShape kind) {
    ExactnessQueries queries(*level_->oracle, level_->tree.bounds(), seed_of(GetParam(), int(kind)));
    const ExactnessCheck check(level_->tree, *level_->oracle);
    ExactnessTally tally;
    int detailed = 0;
    int no_start = 0;
    while (tally.sweeps < kSweepsPerShape && no_start < kSweepsPerShape) {
      const SampledShape s = queries.shape(kind);
      const TurnedShape turned(s.shape, s.yaw);
      const std::optional<Vec3> from = queries.free_start(turned.shape());
      if (!from) {
        ++no_start;
        continue;
      }
      const Vec3 to = *from + queries.motion();
      const SweepVerdict v = check.sweep(turned.shape(), *from, to);
      tally.add(v);
      if (v.defects != 0 && detailed++ < kDetailedDefects) {
        ADD_FAILURE() << describe(s, *from, to) << "\n  " << v.describe();
      }
    }
    std::printf("%s", tally.describe(std::string(GetParam()) + ", " + to_string(kind)).c_str());
    EXPECT_EQ(tally.sweeps, kSweepsPerShape) << "too few free starts";
    EXPECT_GT(tally.hits, tally.sweeps / 20) << "the queries hardly hit anything";
    expect_no_defects(tally);
  }

  const ExactLevel* level_ = nullptr;
};

TEST_P(BspExact, RaysAreExact) {
  sweep_free_starts(ExactShape::kRay);
}
TEST_P(BspExact, SphereSweepsAreExact) {
  sweep_free_starts(ExactShape::kSphere);
}
TEST_P(BspExact, CylinderSweepsAreExact) {
  sweep_free_starts(ExactShape::kCylinder);
}
TEST_P(BspExact, BoxSweepsAreExact) {
  sweep_free_starts(ExactShape::kBox);
}
TEST_P(BspExact, YawedBoxSweepsAreExact) {
  sweep_free_starts(ExactShape::kYawedBox);
}

// Rule 1 both ways, and rule 5 at the same poses: a shape that reached a surface and went on by less
// than the tolerance is touching (not start_solid, not overlapping; it moves freely away and along, and
// stops at once going in); one that went on well beyond it is start_solid and overlapping. Rays are
// not here: points have no tolerance (they are judged with the overlaps below).
TEST_P(BspExact, StartsWithinTheToleranceMoveAndDeeperOnesAreStartSolid) {
  const ExactnessCheck check(level_->tree, *level_->oracle);
  ExactnessTally tally;
  int detailed = 0;
  for (const ExactShape kind : kShapes) {
    if (kind == ExactShape::kRay) continue;
    ExactnessQueries queries(*level_->oracle, level_->tree.bounds(), seed_of(GetParam(), 10 + int(kind)));
    for (int i = 0; i < kSurfaceStartsPerShape; ++i) {
      const SampledShape s = queries.shape(kind);
      const TurnedShape turned(s.shape, s.yaw);
      const double depth = i % 3 == 0   ? 0.0
                           : i % 3 == 1 ? queries.uniform(0, kShallowDepth)
                                        : queries.uniform(kDeepDepthMin, kDeepDepthMax);
      Vec3 into{};
      const std::optional<Vec3> from = queries.start_against_surface(turned.shape(), depth, &into);
      if (!from) continue;
      // On into the surface, back out of it, or anywhere.
      const float len = float(queries.uniform(0, 16));
      const Vec3 to = *from + (i % 4 == 0 ? into * len : i % 4 == 1 ? into * -len : queries.motion());
      const SweepVerdict v = check.sweep(turned.shape(), *from, to);
      const OverlapVerdict o = check.overlap(turned.shape(), *from);
      tally.add(v);
      tally.add(o);
      if ((v.defects != 0 || o.wrong()) && detailed++ < kDetailedDefects) {
        ADD_FAILURE() << describe(s, *from, to) << "\n  " << v.describe() << "\n  overlap expected "
                      << o.expected << " got " << o.got;
      }
    }
  }
  std::printf("%s", tally.describe(std::string(GetParam()) + ", starts against surfaces").c_str());
  const int attempts = 4 * kSurfaceStartsPerShape;
  EXPECT_GT(tally.starts[std::size_t(StartClass::kTouching)], attempts / 6);
  EXPECT_GT(tally.starts[std::size_t(StartClass::kDeep)], attempts / 6);
  expect_no_defects(tally);
}

// Rule 5 at points near brushes, in solid and out, for every kind of shape.
TEST_P(BspExact, OverlapIsTrueExactlyWhenDeeperThanTheTolerance) {
  const ExactnessCheck check(level_->tree, *level_->oracle);
  ExactnessTally tally;
  int detailed = 0;
  int inside = 0;
  for (const ExactShape kind : kShapes) {
    ExactnessQueries queries(*level_->oracle, level_->tree.bounds(), seed_of(GetParam(), 20 + int(kind)));
    for (int i = 0; i < kOverlapsPerShape; ++i) {
      const SampledShape s = queries.shape(kind);
      const TurnedShape turned(s.shape, s.yaw);
      const Vec3 p = queries.near_brush(turned.shape());
      const OverlapVerdict o = check.overlap(turned.shape(), p);
      tally.add(o);
      inside += o.judged && o.expected;
      if (o.wrong() && detailed++ < kDetailedDefects) {
        ADD_FAILURE() << describe(s, p, p) << ": overlap expected " << o.expected << " got " << o.got;
      }
    }
  }
  std::printf("%s: %lld overlaps judged (%d in solid), %lld wrong\n", GetParam(), (long long)tally.overlaps,
              inside, (long long)tally.count(Defect::kWrongOverlap));
  const int queries = kExactShapes * kOverlapsPerShape;
  EXPECT_GT(tally.overlaps, queries * 9 / 10);
  EXPECT_GT(inside, queries / 10);
  EXPECT_LT(inside, tally.overlaps - queries / 10);
  EXPECT_EQ(tally.count(Defect::kWrongOverlap), 0);
}

INSTANTIATE_TEST_SUITE_P(Levels, BspExact, ::testing::ValuesIn(kLevels),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace shiftcast
