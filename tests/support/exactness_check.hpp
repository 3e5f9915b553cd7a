// ExactnessCheck: the exact trace contract of collision/trace_result.hpp (issue 11), judged query by
// query against the brute-force BrushOracle, which shares no code with the BSP. The one definition of
// every rule, for the test that asserts it (tests/collision/bsp_exact_test.cpp) and the report that
// measures it (bench/exactness_report.cpp).
//
//   const ExactnessCheck check(tree, oracle);
//   const SweepVerdict v = check.sweep(shape, from, to);
//   tally.add(v);                           // v.defects: which rules the answer broke (0: none)
//
// Where exact answers meet float rounding, the oracle settles each doubt with the shape grown or shrunk
// by kSettle (BrushOracle's `grow`), so a defect is only counted when it is certain:
//
//   kFalseStartSolid   start_solid for a start that overlaps no brush deeper than kTouchingErosion.
//   kMissedStartSolid  no start_solid for a start deeper than kDeepErosion in a brush.
//   kThrough           no hit, yet the shape shrunk by kSettle enters a brush along the motion.
//   kPhantom           a hit, yet the shape grown by kSettle touches nothing along the motion (from a
//                      touching start: the shape shrunk by kTouchingErosion never enters a brush).
//   kLate              a hit more than kSettle (units along the motion) after the shrunk shape's first
//                      contact: the trace let the shape in deeper than kSettle. (A hit after the exact
//                      contact but not after the shrunk one passed a graze that was never that deep.)
//   kEarly             a hit more than kSettle before the grown shape's first contact: the trace stopped
//                      the shape while it was still farther than kSettle from every brush.
//   kEndsInSolid       the shape shrunk by kSettle overlaps a brush at end_position.
//   kFarStop           after a hit, the shape at end_position is farther than kSurfaceBackoff + kSettle
//                      from every brush (the gap: BrushOracle::gap, a true distance, not along the motion).
//   kWrongNormal       the normal is not the true one (see normal_is_true in exactness_check.cpp).
//   kWrongOverlap      BspTree::overlap disagrees with a shape deeper than kDeepErosion or shallower
//                      than kTouchingErosion.
//
// Points (rays) have no tolerance: they are in solid when strictly inside a brush, so their starts and
// overlaps are judged with kSettle on either side of the surface instead.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "collision/bsp_tree.hpp"
#include "collision/trace_result.hpp"
#include "tests/support/brush_oracle.hpp"

namespace shiftcast {

// Float rounding the contract allows (its "1e-3"): in units of position or of distance along a motion.
inline constexpr double kSettle = 1e-3;
// A start at least this far from every brush is free: the trace must never refuse it.
inline constexpr double kFreeClearance = 0.01;
// A shape eroded by kTouchingErosion that overlaps nothing is at most about kPenetrationTolerance / 2
// deep (boxes: eroded faces, √3 times that at a corner) and only touching; one still overlapping when
// eroded by kDeepErosion is clearly deeper than the tolerance. Starts and overlaps in between are not
// judged: there the trace's own float rounding decides.
inline constexpr double kTouchingErosion = kPenetrationTolerance / 3;
inline constexpr double kDeepErosion = 2 * kPenetrationTolerance;
// Normals: the oracle's normal, or a supporting plane of the obstacle through the contact up to this.
inline constexpr double kNormalAgreement = 0.999;
inline constexpr double kNormalSupportSlack = kSettle;

enum class Defect : std::uint8_t {
  kFalseStartSolid,
  kMissedStartSolid,
  kThrough,
  kPhantom,
  kLate,
  kEarly,
  kEndsInSolid,
  kFarStop,
  kWrongNormal,
  kWrongOverlap,
};
inline constexpr int kDefectKinds = 10;
const char* to_string(Defect defect);

// How the oracle sees a start: free (not overlapping), touching (overlapping by less than
// kTouchingErosion), deep (more than kDeepErosion), or in between (not judged).
enum class StartClass : std::uint8_t { kFree, kTouching, kDeep, kUnjudged };

struct SweepVerdict {
  StartClass start = StartClass::kUnjudged;
  TraceResult got;
  OracleHit exact;            // the oracle's sweep of the shape itself (free starts only)
  double length = 0;          // of the motion
  std::uint32_t defects = 0;  // bit (1 << Defect)
  // Hits only, when beyond kSurfaceBackoff + kSettle: the gap at end_position (otherwise -1).
  double far_stop_gap = -1;
  // kFalseStartSolid only: the gap at the start (0 for a touching start).
  double start_clearance = -1;

  bool has(Defect d) const { return (defects >> int(d)) & 1u; }
  std::string describe() const;  // the defects and the answers, for failure messages
};

struct OverlapVerdict {
  bool judged = false;
  bool expected = false;
  bool got = false;
  bool wrong() const { return judged && expected != got; }
};

class ExactnessCheck {
 public:
  ExactnessCheck(const BspTree& tree, const BrushOracle& oracle) : tree_(tree), oracle_(oracle) {}

  StartClass classify_start(const Shape& shape, Vec3 p) const;
  // BspTree::trace(shape, from, to) judged by every rule above that applies to its start.
  SweepVerdict sweep(const Shape& shape, Vec3 from, Vec3 to) const;
  // BspTree::overlap(shape, p) against the oracle, when the shape is clearly in or out.
  OverlapVerdict overlap(const Shape& shape, Vec3 p) const;

 private:
  bool normal_is_true(const Shape& shape, const SweepVerdict& v, Vec3d from, Vec3d w) const;
  double far_stop_gap(const Shape& shape, Vec3d p) const;

  const BspTree& tree_;
  const BrushOracle& oracle_;
};

// Counts of verdicts, for assertions and tables.
struct ExactnessTally {
  std::int64_t sweeps = 0;  // judged: free, touching or deep starts
  std::int64_t hits = 0;    // reported hits that are not start_solid
  std::int64_t exact_hits = 0;
  std::int64_t exact_tests = 0;  // sum of TraceResult::exact_tests
  std::array<std::int64_t, kDefectKinds> defects{};
  std::array<std::int64_t, 4> starts{};  // per StartClass
  std::int64_t overlaps = 0;             // judged overlap queries
  std::vector<double> false_start_clearances;
  std::vector<double> far_stop_gaps;  // all > kSurfaceBackoff + kSettle

  void add(const SweepVerdict& v);
  void add(const OverlapVerdict& v);
  void merge(const ExactnessTally& other);
  std::int64_t count(Defect d) const { return defects[std::size_t(d)]; }
  std::int64_t total_defects() const;
  std::int64_t stops_farther_than(double gap) const;
  double mean_exact_tests() const { return sweeps > 0 ? double(exact_tests) / double(sweeps) : 0.0; }
  // One line per figure, for test logs.
  std::string describe(const std::string& what) const;
};

// Median and maximum of a list (0 for none).
double median_of(std::vector<double> values);
double max_of(const std::vector<double>& values);

}  // namespace shiftcast
