#include "tests/support/exactness_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

namespace shiftcast {
namespace {

// The contract's bound on the gap of a stopped shape: the back-off along the motion, plus rounding.
constexpr double kFarStop = double(kSurfaceBackoff) + kSettle;
// A float normal is unit to about 1e-7; anything further off was not normalised.
constexpr double kUnitNormal = 1e-4;

std::string format(Vec3 v) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "(%.9g, %.9g, %.9g)", double(v.x), double(v.y), double(v.z));
  return buf;
}

}  // namespace

const char* to_string(Defect defect) {
  switch (defect) {
    case Defect::kFalseStartSolid:
      return "false start_solid";
    case Defect::kMissedStartSolid:
      return "missed start_solid";
    case Defect::kThrough:
      return "through";
    case Defect::kPhantom:
      return "phantom hit";
    case Defect::kLate:
      return "late hit";
    case Defect::kEarly:
      return "early hit";
    case Defect::kEndsInSolid:
      return "ends in solid";
    case Defect::kFarStop:
      return "far stop";
    case Defect::kWrongNormal:
      return "wrong normal";
    case Defect::kWrongOverlap:
      return "wrong overlap";
  }
  return "?";
}

std::string SweepVerdict::describe() const {
  static const char* const kStarts[] = {"free", "touching", "deep", "unjudged"};
  std::string out = std::string("start ") + kStarts[int(start)] + ", length " + std::to_string(length) +
                    "; got hit " + std::to_string(got.hit) + " start_solid " +
                    std::to_string(got.start_solid) + " fraction " + std::to_string(got.fraction) + " end " +
                    format(got.end_position) + " normal " + format(got.normal) + " brush " +
                    std::to_string(got.brush) + "; exact hit " + std::to_string(exact.hit) + " fraction " +
                    std::to_string(exact.fraction) + " normal " + format(to_float(exact.normal)) + " brush " +
                    std::to_string(exact.brush) + "; defects:";
  for (int d = 0; d < kDefectKinds; ++d) {
    if (has(Defect(d))) out += std::string(" ") + to_string(Defect(d));
  }
  if (far_stop_gap >= 0) out += ", stop gap " + std::to_string(far_stop_gap);
  if (start_clearance >= 0) out += ", start clearance " + std::to_string(start_clearance);
  return out;
}

StartClass ExactnessCheck::classify_start(const Shape& shape, Vec3 p) const {
  const Vec3d q = to_double(p);
  if (shape.kind == ShapeKind::kPoint) {
    if (oracle_.overlaps(shape, q, -kSettle) >= 0) return StartClass::kDeep;
    if (oracle_.overlaps(shape, q, kSettle) < 0) return StartClass::kFree;
    return StartClass::kUnjudged;
  }
  if (oracle_.overlaps(shape, q) < 0) return StartClass::kFree;
  if (oracle_.overlaps(shape, q, -kDeepErosion) >= 0) return StartClass::kDeep;
  if (oracle_.overlaps(shape, q, -kTouchingErosion) < 0) return StartClass::kTouching;
  return StartClass::kUnjudged;
}

SweepVerdict ExactnessCheck::sweep(const Shape& shape, Vec3 from, Vec3 to) const {
  SweepVerdict v;
  v.start = classify_start(shape, from);
  if (v.start == StartClass::kUnjudged) return v;
  const Vec3d a = to_double(from);
  const Vec3d b = to_double(to);
  v.length = length(b - a);
  v.got = tree_.trace(shape, from, to);
  const auto flag = [&](Defect d) { v.defects |= 1u << int(d); };
  if (v.start == StartClass::kDeep) {
    if (!v.got.start_solid) flag(Defect::kMissedStartSolid);
    return v;
  }
  const bool free = v.start == StartClass::kFree;
  if (v.got.start_solid) {
    flag(Defect::kFalseStartSolid);
    v.start_clearance = free ? oracle_.gap(shape, a) : 0.0;
    return v;
  }
  if (free) v.exact = oracle_.sweep(shape, a, b);
  const double got_units = v.got.hit ? double(v.got.fraction) * v.length : v.length;
  const double exact_units = v.exact.fraction * v.length;
  // The first contact of the shape shrunk by kSettle: from there on the shape is certainly deeper than
  // the tolerance. It starts free: a touching start is shallower than kTouchingErosion < kSettle.
  std::optional<OracleHit> shrunk;
  const auto shrunk_sweep = [&]() -> const OracleHit& {
    if (!shrunk) shrunk = oracle_.sweep(shape, a, b, -kSettle);
    return *shrunk;
  };

  if (!v.got.hit) {
    if ((!free || v.exact.hit) && shrunk_sweep().hit) flag(Defect::kThrough);
  } else {
    // A free start's motion touches something unless even the grown shape misses; a touching start's
    // may only stop if it goes deeper than the tolerance, which the shape shrunk by kTouchingErosion
    // (still free at the start) must then enter.
    const bool touches = free ? v.exact.hit || oracle_.sweep(shape, a, b, kSettle).hit
                              : oracle_.sweep(shape, a, b, -kTouchingErosion).hit;
    if (!touches) flag(Defect::kPhantom);
    const bool after_exact = !free || !v.exact.hit || got_units > exact_units + kSettle;
    if (after_exact && shrunk_sweep().hit && got_units > shrunk_sweep().fraction * v.length + kSettle) {
      flag(Defect::kLate);
    }
    // Early against the grown shape's contact, which comes before the exact one: by kSettle across the
    // surface, which is far more along a grazing motion.
    if (free && v.exact.hit && got_units < exact_units - kSettle) {
      const OracleHit grown = oracle_.sweep(shape, a, b, kSettle);
      if (got_units < grown.fraction * v.length - kSettle) flag(Defect::kEarly);
    }
    v.far_stop_gap = far_stop_gap(shape, to_double(v.got.end_position));
    if (v.far_stop_gap >= 0) flag(Defect::kFarStop);
    if (!v.has(Defect::kPhantom) && !v.has(Defect::kLate) && !normal_is_true(shape, v, a, b - a)) {
      flag(Defect::kWrongNormal);
    }
  }
  if (oracle_.overlaps(shape, to_double(v.got.end_position), -kSettle) >= 0) flag(Defect::kEndsInSolid);
  return v;
}

// The normal is the true one when it matches the oracle's at the exact contact, or, where normals
// legitimately jump (near an edge or vertex of the configuration obstacle M = B ⊕ (−shape), or at a
// tie between brushes), when it is a supporting normal of M at a contact c: the plane through c with
// normal n has all of M behind it, up to kNormalSupportSlack. Far from a feature boundary only the
// true normal supports M at c (a normal tilted by θ at distance ρ from the boundary misses by about
// ρ sin θ), so a bevel's normal passes only within a hair of the edge it bevels. The contacts tried:
// the exact one (with its brush), when the trace stopped there or earlier, and the trace's own (with
// the brush it names), which must be within the slack of that brush.
bool ExactnessCheck::normal_is_true(const Shape& shape, const SweepVerdict& v, Vec3d from, Vec3d w) const {
  const Vec3d n = to_double(v.got.normal);
  if (std::abs(length(n) - 1) > kUnitNormal) return false;
  const double got_units = double(v.got.fraction) * v.length;
  const bool at_exact =
      v.start == StartClass::kFree && v.exact.hit && got_units <= v.exact.fraction * v.length + kSettle;
  if (at_exact && dot(n, v.exact.normal) >= kNormalAgreement) return true;
  const auto supports = [&](std::int32_t brush, double fraction) {
    if (brush < 0 || brush >= oracle_.brush_count()) return false;
    const Vec3d c = from + w * fraction;
    return oracle_.overlaps_brush(brush, shape, c, kNormalSupportSlack) &&
           oracle_.obstacle_support(brush, shape, n) - dot(n, c) <= kNormalSupportSlack;
  };
  return (at_exact && supports(v.exact.brush, v.exact.fraction)) ||
         supports(v.got.brush, double(v.got.fraction));
}

// The gap at p when it exceeds kFarStop, else -1. The cylinder's exact gap is a search; the grown
// cylinder's overlap decides the common case (gap below the bound) exactly and cheaply.
double ExactnessCheck::far_stop_gap(const Shape& shape, Vec3d p) const {
  if (shape.kind == ShapeKind::kCylinder && oracle_.overlaps(shape, p, kFarStop) >= 0) return -1;
  const double gap = oracle_.gap(shape, p);
  return gap > kFarStop ? gap : -1;
}

OverlapVerdict ExactnessCheck::overlap(const Shape& shape, Vec3 p) const {
  OverlapVerdict o;
  const StartClass c = classify_start(shape, p);
  if (c == StartClass::kUnjudged) return o;
  o.judged = true;
  o.expected = c == StartClass::kDeep;
  o.got = tree_.overlap(shape, p).overlap;
  return o;
}

void ExactnessTally::add(const SweepVerdict& v) {
  if (v.start == StartClass::kUnjudged) return;
  ++sweeps;
  ++starts[std::size_t(v.start)];
  hits += v.got.hit && !v.got.start_solid;
  exact_hits += v.exact.hit;
  exact_tests += v.got.exact_tests;
  for (int d = 0; d < kDefectKinds; ++d)
    defects[std::size_t(d)] += v.has(Defect(d));
  if (v.far_stop_gap >= 0) far_stop_gaps.push_back(v.far_stop_gap);
  if (v.has(Defect::kFalseStartSolid)) false_start_clearances.push_back(v.start_clearance);
}

void ExactnessTally::add(const OverlapVerdict& v) {
  overlaps += v.judged;
  defects[std::size_t(Defect::kWrongOverlap)] += v.wrong();
}

void ExactnessTally::merge(const ExactnessTally& o) {
  sweeps += o.sweeps;
  hits += o.hits;
  exact_hits += o.exact_hits;
  exact_tests += o.exact_tests;
  for (std::size_t d = 0; d < defects.size(); ++d)
    defects[d] += o.defects[d];
  for (std::size_t s = 0; s < starts.size(); ++s)
    starts[s] += o.starts[s];
  overlaps += o.overlaps;
  false_start_clearances.insert(false_start_clearances.end(), o.false_start_clearances.begin(),
                                o.false_start_clearances.end());
  far_stop_gaps.insert(far_stop_gaps.end(), o.far_stop_gaps.begin(), o.far_stop_gaps.end());
}

std::int64_t ExactnessTally::total_defects() const {
  std::int64_t total = 0;
  for (std::int64_t d : defects)
    total += d;
  return total;
}

std::int64_t ExactnessTally::stops_farther_than(double gap) const {
  return std::count_if(far_stop_gaps.begin(), far_stop_gaps.end(), [&](double g) { return g > gap; });
}

std::string ExactnessTally::describe(const std::string& what) const {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%s: %lld sweeps (starts: %lld free, %lld touching, %lld deep), %lld hits (%lld exact "
                "contacts), %.2f exact_tests per sweep, %lld overlaps judged\n",
                what.c_str(), (long long)sweeps, (long long)starts[0], (long long)starts[1],
                (long long)starts[2], (long long)hits, (long long)exact_hits, mean_exact_tests(),
                (long long)overlaps);
  std::string out = buf;
  out += "  defects:";
  for (int d = 0; d < kDefectKinds; ++d)
    out += std::string(" ") + to_string(Defect(d)) + " " + std::to_string(defects[std::size_t(d)]) + ";";
  std::snprintf(buf, sizeof buf,
                "\n  false start_solid clearance median %.4f max %.4f; stops farther than 0.1 u %lld, 1 u "
                "%lld, 4 u %lld (max %.4f)\n",
                median_of(false_start_clearances), max_of(false_start_clearances),
                (long long)stops_farther_than(0.1), (long long)stops_farther_than(1),
                (long long)stops_farther_than(4), max_of(far_stop_gaps));
  return out + buf;
}

double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  const auto mid = values.begin() + std::ptrdiff_t(values.size() / 2);
  std::nth_element(values.begin(), mid, values.end());
  return *mid;
}

double max_of(const std::vector<double>& values) {
  return values.empty() ? 0.0 : *std::max_element(values.begin(), values.end());
}

}  // namespace shiftcast
