// The BSP against the brute-force oracle (tests/support/brush_oracle), which never touches the BSP, on a
// procedural level of 240+ brushes with stairs, ramps, pillars, 1-unit thin walls, sharp wedges and random
// overlapping brushes:
//   - point-in-solid on 100,000 random points;
//   - raycasts: same hit distance within 1e-3 units, same brush (or one entered at the same distance);
//   - 100,000 sphere sweeps and 100,000 cylinder sweeps from free space, short, medium and 4,096 units
//     long, with and without bevels, held to the exact contract of collision/trace_result.hpp by
//     tests/support/exactness_check (no false start_solid, no phantom, late, early or through hits, never
//     ending in solid, stopping within kSurfaceBackoff of the brushes, true normals) whether or not the
//     tree has bevels. The figures are printed for docs/collision.md; tests/collision/bsp_exact_test.cpp
//     holds every shape to the same contract on real maps.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "collision/bsp_build.hpp"
#include "tests/support/brush_oracle.hpp"
#include "tests/support/exactness_check.hpp"
#include "tests/support/seeded_random.hpp"
#include "world/level/procedural_level.hpp"

namespace shiftcast {
namespace {

constexpr int kPoints = 100000;
constexpr int kRays = 100000;
constexpr int kSweeps = 100000;
// The procedural level's default thin-wall thickness (ProceduralLevelOptions::wall_thickness).
constexpr float kWallThickness = 1.0f;
// Points closer than this to a brush surface may be classified either way by the float planes and the
// build's kPlaneEpsilon; they are skipped.
constexpr double kSurfaceSkip = 1e-3;
// A BSP contact may be this much later (in units along the motion) than the exact one: float rounding of
// the float inputs and the reported float fraction, at 4096 units ≈ 2.5e-4.
constexpr double kLateTolerance = 1e-3;
// Defects are described in full up to this many per test; the rest are counted.
constexpr int kDetailedDefects = 3;

class BspOracleTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    level_ = new ProceduralLevel(make_procedural_level({.seed = 2026, .target_brushes = 240}));
    oracle_ = new BrushOracle(level_->brushes);
    BspBuildResult bevelled = build_bsp(level_->brushes, {});
    BspBuildResult plain = build_bsp(level_->brushes, {.add_bevels = false});
    ASSERT_EQ(bevelled.error, BspBuildError::kNone);
    ASSERT_EQ(plain.error, BspBuildError::kNone);
    std::printf("level: %s\n", format_stats(bevelled.stats).c_str());
    bevelled_ = new BspTree(std::move(bevelled.tree));
    plain_ = new BspTree(std::move(plain.tree));
  }
  static void TearDownTestSuite() {
    delete plain_;
    delete bevelled_;
    delete oracle_;
    delete level_;
  }

  static ProceduralLevel* level_;
  static BrushOracle* oracle_;
  static BspTree* bevelled_;
  static BspTree* plain_;
};

ProceduralLevel* BspOracleTest::level_ = nullptr;
BrushOracle* BspOracleTest::oracle_ = nullptr;
BspTree* BspOracleTest::bevelled_ = nullptr;
BspTree* BspOracleTest::plain_ = nullptr;

// Deterministic on every platform: no std distributions.
class Random {
 public:
  explicit Random(std::uint32_t seed) : rng_(seed) {}
  float uniform(float lo, float hi) { return uniform_float(rng_, lo, hi); }
  Vec3 in_box(const Aabb& b, float margin) {
    return {uniform(b.min.x - margin, b.max.x + margin), uniform(b.min.y - margin, b.max.y + margin),
            uniform(b.min.z - margin, b.max.z + margin)};
  }
  Vec3 direction() {
    for (;;) {
      const Vec3 v{uniform(-1, 1), uniform(-1, 1), uniform(-1, 1)};
      const float l = length(v);
      if (l > 0.1f && l <= 1.0f) return v * (1.0f / l);
    }
  }
  // Short (<= 16), medium (16..512) and long (4096) motions in proportion 4:3:3.
  float motion_length() {
    const float pick = uniform(0, 10);
    if (pick < 4) return uniform(0.01f, 16);
    if (pick < 7) return uniform(16, 512);
    return 4096;
  }

 private:
  std::mt19937 rng_;
};

TEST_F(BspOracleTest, PointInSolidAgreesWithBruteForce) {
  Random random(1);
  int checked = 0;
  int solid = 0;
  for (int i = 0; i < kPoints; ++i) {
    const Vec3 p = random.in_box(bevelled_->bounds(), 32);
    if (oracle_->distance_to_surface(to_double(p)) < kSurfaceSkip) continue;
    ++checked;
    const std::int32_t want = oracle_->point_brush(to_double(p));
    const std::int32_t got = bevelled_->point_brush(p);
    ASSERT_EQ(got != kNoBrush, want != kNoBrush) << "at " << p.x << ", " << p.y << ", " << p.z;
    if (got != kNoBrush) {
      ++solid;
      // Overlapping brushes: the leaf names one brush that contains the point, not always the lowest id.
      ASSERT_TRUE(oracle_->contains(got, to_double(p))) << "brush " << got;
    }
  }
  EXPECT_GT(checked, kPoints * 99 / 100);
  EXPECT_GT(solid, checked / 20);  // the level is not mostly empty space
}

TEST_F(BspOracleTest, RaycastsMatchBruteForceDistanceAndBrush) {
  Random random(2);
  int hits = 0;
  for (int i = 0; i < kRays; ++i) {
    const Vec3 from = random.in_box(bevelled_->bounds(), 0);
    if (oracle_->distance_to_surface(to_double(from)) < kSurfaceSkip) continue;
    const float max_distance = random.motion_length();
    const Vec3 dir = random.direction();
    const TraceResult got = bevelled_->raycast(from, dir, max_distance);
    // The oracle gets the same segment the BSP traced: the float end point.
    const Vec3 to = from + normalize(dir) * max_distance;
    const OracleHit want = oracle_->raycast(to_double(from), to_double(to));
    const double len = length(to_double(to) - to_double(from));
    ASSERT_EQ(got.hit, want.hit) << "ray " << i;
    ASSERT_EQ(got.start_solid, want.start_solid) << "ray " << i;
    if (!want.hit) continue;
    ++hits;
    ASSERT_NEAR(double(got.fraction) * len, want.fraction * len, 1e-3) << "ray " << i;
    if (got.brush != want.brush) {
      // A tie: the reported brush must be entered at the same distance.
      const OracleHit alone =
          BrushOracle({&level_->brushes[std::size_t(got.brush)], 1}).raycast(to_double(from), to_double(to));
      ASSERT_TRUE(alone.hit) << "ray " << i << " brush " << got.brush << " vs " << want.brush;
      ASSERT_NEAR(alone.fraction * len, want.fraction * len, 1e-3) << "ray " << i;
    }
  }
  EXPECT_GT(hits, kRays / 10);
}

struct SweepReport {
  ExactnessTally tally;
  int long_thin_wall_hits = 0;  // exact first contacts with a 1-unit wall on a 4096-unit motion
  int detailed = 0;
};

// Sweeps `shape` from random free starts and judges every answer by the exact contract.
void check_sweeps(const BspTree& tree, const BrushOracle& oracle, const ProceduralLevel& level,
                  const Shape& shape, std::uint32_t seed, SweepReport& report, int count = kSweeps) {
  Random random(seed);
  const ExactnessCheck check(tree, oracle);
  for (int i = 0; i < count; ++i) {
    const Vec3 from = random.in_box(tree.bounds(), 0);
    if (oracle.overlaps(shape, to_double(from)) != kNoBrush) continue;
    const Vec3 to = from + random.direction() * random.motion_length();
    const SweepVerdict v = check.sweep(shape, from, to);
    report.tally.add(v);
    report.long_thin_wall_hits += v.exact.hit && v.length > 4000 &&
                                  level.features[std::size_t(v.exact.brush)] == BrushFeature::kThinWall;
    if (v.defects != 0 && report.detailed++ < kDetailedDefects) {
      ADD_FAILURE() << "sweep " << i << " from (" << from.x << ", " << from.y << ", " << from.z << ") to ("
                    << to.x << ", " << to.y << ", " << to.z << "): " << v.describe();
    }
  }
}

void print(const std::string& what, const SweepReport& r) {
  std::printf("%s  %d exact contacts with 1-unit walls at 4096 units\n", r.tally.describe(what).c_str(),
              r.long_thin_wall_hits);
}

void expect_exact(const SweepReport& r) {
  for (int d = 0; d < kDefectKinds; ++d)
    EXPECT_EQ(r.tally.count(Defect(d)), 0) << to_string(Defect(d));
}

TEST_F(BspOracleTest, SphereSweepsFollowTheExactContractWithAndWithoutBevels) {
  for (float radius : {8.0f, 24.0f}) {
    const Shape sphere = Shape::sphere(radius);
    SweepReport bevelled;
    check_sweeps(*bevelled_, *oracle_, *level_, sphere, 3, bevelled);
    print(radius == 8 ? "sphere r8, bevels" : "sphere r24, bevels", bevelled);
    EXPECT_GT(bevelled.tally.sweeps, kSweeps / 2);
    EXPECT_GT(bevelled.tally.exact_hits, bevelled.tally.sweeps / 10);
    EXPECT_GT(bevelled.long_thin_wall_hits, 200);
    expect_exact(bevelled);
  }
  SweepReport plain;
  check_sweeps(*plain_, *oracle_, *level_, Shape::sphere(8), 3, plain);
  print("sphere r8, no bevels", plain);
  expect_exact(plain);
}

TEST_F(BspOracleTest, CylinderSweepsFollowTheExactContractWithAndWithoutBevels) {
  const Shape player = Shape::cylinder(15, 56);
  SweepReport bevelled;
  check_sweeps(*bevelled_, *oracle_, *level_, player, 4, bevelled);
  print("cylinder r15 h56, bevels", bevelled);
  EXPECT_GT(bevelled.tally.sweeps, kSweeps / 2);
  EXPECT_GT(bevelled.tally.exact_hits, bevelled.tally.sweeps / 10);
  EXPECT_GT(bevelled.long_thin_wall_hits, 200);
  expect_exact(bevelled);
  SweepReport plain;
  check_sweeps(*plain_, *oracle_, *level_, player, 4, plain);
  print("cylinder r15 h56, no bevels", plain);
  expect_exact(plain);
}

TEST_F(BspOracleTest, FastSweepsStraightThroughOneUnitWallsAreAlwaysStopped) {
  // Every thin wall, shot through its broad face from 2048 units away to 2048 units beyond, by a ray, a
  // sphere and the player cylinder: the exact oracle and the BSP must both stop them, the BSP no later.
  Random random(6);
  const ExactnessCheck check(*bevelled_, *oracle_);
  const Shape shapes[] = {Shape::point(), Shape::sphere(8), Shape::cylinder(15, 56)};
  int walls = 0;
  int crossings = 0;
  for (std::size_t b = 0; b < level_->brushes.size(); ++b) {
    if (level_->features[b] != BrushFeature::kThinWall) continue;
    const std::vector<Plane>& planes = level_->brushes[b].planes;
    Vec3 normal{};
    for (const Plane& p : planes) {
      for (const Plane& q : planes) {
        if (dot(p.normal, q.normal) < -0.9999f && std::abs(p.d + q.d - kWallThickness) < 1e-3f)
          normal = p.normal;
      }
    }
    ASSERT_NE(normal, (Vec3{})) << "thin wall " << b << " has no pair of planes one unit apart";
    ++walls;
    const OraclePolytope& poly = oracle_->polytope(std::int32_t(b));
    Vec3d centre{};
    for (Vec3d v : poly.vertices)
      centre += v;
    centre = centre * (1.0 / double(poly.vertices.size()));
    for (int i = 0; i < 600; ++i) {
      const Shape& shape = shapes[i % 3];
      const Vec3d vertex = poly.vertices[std::size_t(random.uniform(0, float(poly.vertices.size()) - 0.01f))];
      const Vec3 target = to_float(lerp(centre, vertex, double(random.uniform(0, 0.9f))));
      // Cylinders are aimed with their middle, not their feet, at the target.
      const Vec3 aim = shape.kind == ShapeKind::kCylinder ? target - Vec3{0, 0, 28} : target;
      const Vec3 from = aim + normal * 2048.0f + random.direction() * 64.0f;
      const Vec3 to = aim - normal * 2048.0f + random.direction() * 64.0f;
      if (oracle_->overlaps(shape, to_double(from)) != kNoBrush) continue;
      const OracleHit want = oracle_->sweep(shape, to_double(from), to_double(to));
      const TraceResult got = bevelled_->trace(shape, from, to);
      ASSERT_TRUE(want.hit) << "the oracle missed wall " << b;
      ASSERT_TRUE(got.hit) << "tunnelled through wall " << b << " shot " << i;
      const double len = length(to_double(to) - to_double(from));
      ASSERT_LE(double(got.fraction) * len, want.fraction * len + kLateTolerance)
          << "wall " << b << " shot " << i;
      // And exact: stopped at the wall, with its normal, never in it.
      const SweepVerdict v = check.sweep(shape, from, to);
      ASSERT_EQ(v.defects, 0u) << "wall " << b << " shot " << i << ": " << v.describe();
      ++crossings;
    }
  }
  std::printf("%d thin walls, %d crossings\n", walls, crossings);
  EXPECT_GE(walls, 5);
  EXPECT_GT(crossings, walls * 400);
}

TEST(BspOracleLargeLevel, SweepsOnTwelveHundredBrushesFollowTheExactContract) {
  // The benchmark level: more tilted wedges and random brushes, cut into more cells.
  const ProceduralLevel level = make_procedural_level({.seed = 1, .target_brushes = 1200});
  const BrushOracle oracle(level.brushes);
  const BspBuildResult built = build_bsp(level.brushes, {});
  ASSERT_EQ(built.error, BspBuildError::kNone);
  for (const Shape& shape : {Shape::sphere(8), Shape::cylinder(15, 56)}) {
    SweepReport report;
    check_sweeps(built.tree, oracle, level, shape, 7, report, 20000);
    print(shape.kind == ShapeKind::kSphere ? "1200 brushes, sphere r8" : "1200 brushes, cylinder r15 h56",
          report);
    EXPECT_GT(report.tally.exact_hits, report.tally.sweeps / 10);
    expect_exact(report);
  }
}

}  // namespace
}  // namespace shiftcast
