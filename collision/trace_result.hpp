// The result contract of every sweep, raycast and overlap in shiftcast (after ioquake3's trace_t), stated
// once here and relied on everywhere. Every answer is exact against the level's brushes (the convex solids
// the level was built from), with the tolerances named below:
//
//   status       kOk, or why the query was refused (non-finite input, invalid shape); a refused query
//                reports no hit, fraction 0 and end_position = from, so a caller that ignores the status
//                still never moves anything.
//   hit          the motion takes the shape into a brush's interior (deeper than kContactSkin); the
//                motion stops at `fraction`. Touching is not a hit: a shape may rest on, or slide along,
//                a surface.
//   fraction     in [0, 1]: the exact first contact along from→to (1 when no hit): the shape at that pose
//                touches the brush it enters, up to float rounding of the planes.
//   end_position from + fraction·(to − from), backed off along the motion by kSurfaceBackoff (or to
//                `from` when the contact is closer than that): the shape there is outside every brush and
//                its gap to the brush it hit is at most kSurfaceBackoff. Equals `to` when there is no hit.
//   normal       unit outward normal of the touched feature, seen from the shape: a face's normal for a
//                face contact, the direction from the touched edge or vertex towards the shape for an edge
//                or vertex contact (never a bevel's). Zero when no hit, or start_solid.
//   start_solid  the shape overlaps a brush at `from` deeper than kPenetrationTolerance (fraction 0, hit).
//                A shape that overlaps by less is touching: its motion hits at fraction 0 only if it heads
//                into the brush, and otherwise moves freely (see kContactSkin).
//   all_solid    start_solid and the shape never leaves solid along the whole motion.
//   brush        id of the brush hit (index in the level's brush list), or kNoBrush.
//   exact_tests  diagnostic: how many exact shape-against-brush tests the query ran (0 for rays).
//
// "Overlaps deeper than kPenetrationTolerance": spheres and cylinders overlap a brush by more than the
// tolerance when the shape eroded by it (radius and each end of a cylinder pulled in by the tolerance)
// still overlaps the brush's interior; boxes and hulls when no translation shorter than the tolerance
// separates them. Rays and points are in solid when strictly inside a brush.
#pragma once

#include <cstdint>

#include "collision/vec3.hpp"

namespace shiftcast {

enum class QueryStatus : std::uint8_t {
  kOk,
  kNonFiniteInput,  // NaN or infinity in a position, direction or distance
  kInvalidShape,    // negative or non-finite size, empty hull
};

inline constexpr std::int32_t kNoBrush = -1;

// How far (Quake units, measured along the motion) a stopped shape is moved back from its exact first
// contact, so that it rests outside the brush and its next trace never starts in solid; ioquake3 backs
// off 1/8 for the same purpose (SURFACE_CLIP_EPSILON 0.125, code/qcommon/cm_local.h). Large against float
// rounding at level scale (4096 units ≈ 5e-4).
inline constexpr float kSurfaceBackoff = 1.0f / 32.0f;

// How deep a shape may overlap a brush and still count as touching it (1/1024 unit, below the 1e-3 the
// contract promises): enough to absorb the float rounding of a stopped position at level scale, far below
// anything a player could see. See "Overlaps deeper than" above.
inline constexpr double kPenetrationTolerance = 1.0 / 1024.0;

// How deep a motion must take a shape into a brush to be a hit (units): the shape eroded by this must be
// entered. Far below anything measurable, far above the rounding of the exact tests (~1e-9), so a motion
// sliding exactly along a face or past an edge is never stopped by rounding. A shape that starts
// between this depth and kPenetrationTolerance (float rounding of a stopped position puts it there) hits
// at fraction 0 only when its motion goes deeper, along the normal of the brush's nearest surface.
inline constexpr double kContactSkin = 1e-6;

struct TraceResult {
  QueryStatus status = QueryStatus::kOk;
  bool hit = false;
  bool start_solid = false;
  bool all_solid = false;
  float fraction = 1.0f;
  Vec3 end_position{};
  Vec3 normal{};
  std::int32_t brush = kNoBrush;
  std::uint16_t exact_tests = 0;
};

struct OverlapResult {
  QueryStatus status = QueryStatus::kOk;
  bool overlap = false;
  std::int32_t brush = kNoBrush;
};

}  // namespace shiftcast
