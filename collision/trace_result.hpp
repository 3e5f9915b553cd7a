// The result contract of every sweep, raycast and overlap in shiftcast (after ioquake3's trace_t), stated
// once here and relied on everywhere:
//
//   status       kOk, or why the query was refused (non-finite input, invalid shape); a refused query
//                reports no hit, fraction 0 and end_position = from, so a caller that ignores the status
//                still never moves anything.
//   hit          the motion would make the shape overlap solid; the motion stops at `fraction`.
//                Touching is not a hit: a shape may rest on, or slide along, a surface.
//   fraction     in [0, 1]: where along from→to the shape first touches solid (1 when no hit). Exact for
//                rays up to float rounding of the planes; for other shapes conservative: never later than
//                the true first contact, earlier only near convex edges (see docs/collision.md).
//   end_position from + fraction·(to − from) backed off along the motion so that the reference point is
//                kSurfaceBackoff in front of the contact plane: a shape resting there never starts its next
//                trace in solid. Equals `to` when there is no hit.
//   normal       unit outward normal of the plane the shape touched (zero when no hit, or start_solid).
//   start_solid  the shape overlaps solid at `from` (fraction 0, hit).
//   all_solid    start_solid and the shape never leaves solid along the whole motion.
//   brush        id of the brush hit (index in the level's brush list), or kNoBrush.
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

// Distance (Quake units) kept between a stopped reference point and the shifted contact plane; ioquake3
// uses 1/32 for the same purpose. Large against float rounding at level scale (4096 units ≈ 5e-4).
inline constexpr float kSurfaceBackoff = 1.0f / 32.0f;

struct TraceResult {
  QueryStatus status = QueryStatus::kOk;
  bool hit = false;
  bool start_solid = false;
  bool all_solid = false;
  float fraction = 1.0f;
  Vec3 end_position{};
  Vec3 normal{};
  std::int32_t brush = kNoBrush;
};

struct OverlapResult {
  QueryStatus status = QueryStatus::kOk;
  bool overlap = false;
  std::int32_t brush = kNoBrush;
};

}  // namespace shiftcast
