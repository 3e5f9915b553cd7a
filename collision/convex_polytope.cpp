#include "collision/convex_polytope.hpp"

#include <algorithm>
#include <cmath>

namespace shiftcast {
namespace {

// Any unit vector perpendicular to n, picked away from n's largest axis for good conditioning.
Vec3d perpendicular(Vec3d n) {
  const Vec3d axis =
      std::abs(n.x) < 0.6 ? Vec3d{1, 0, 0} : (std::abs(n.y) < 0.6 ? Vec3d{0, 1, 0} : Vec3d{0, 0, 1});
  return normalize(cross(n, axis));
}

// Orders points lying on `plane` into a counter-clockwise loop seen from the front, merging points closer
// than eps. Fewer than three distinct points give an empty loop.
std::vector<Vec3d> order_loop(std::vector<Vec3d> points, const Planed& plane, double eps) {
  std::vector<Vec3d> unique;
  for (Vec3d p : points) {
    const bool seen = std::any_of(unique.begin(), unique.end(),
                                  [&](Vec3d q) { return length_squared(p - q) <= eps * eps; });
    if (!seen) unique.push_back(p);
  }
  if (unique.size() < 3) return {};
  Vec3d centre{};
  for (Vec3d p : unique)
    centre += p;
  centre = centre * (1.0 / double(unique.size()));
  const Vec3d u = perpendicular(plane.normal);
  const Vec3d v = cross(plane.normal, u);
  std::sort(unique.begin(), unique.end(), [&](Vec3d a, Vec3d b) {
    return std::atan2(dot(a - centre, v), dot(a - centre, u)) <
           std::atan2(dot(b - centre, v), dot(b - centre, u));
  });
  return unique;
}

}  // namespace

Aabbd ConvexPolytope::bounds() const {
  Aabbd box;
  for (const PolytopeFace& f : faces) {
    for (Vec3d v : f.vertices)
      box.grow(v);
  }
  return box;
}

std::vector<Vec3d> ConvexPolytope::vertices(double eps) const {
  std::vector<Vec3d> out;
  for (const PolytopeFace& f : faces) {
    for (Vec3d v : f.vertices) {
      const bool seen =
          std::any_of(out.begin(), out.end(), [&](Vec3d q) { return length_squared(v - q) <= eps * eps; });
      if (!seen) out.push_back(v);
    }
  }
  return out;
}

ConvexPolytope polytope_from_planes(std::span<const Planed> planes, double extent, double eps) {
  ConvexPolytope poly;
  for (int axis = 0; axis < 3; ++axis) {
    for (double sign : {-1.0, 1.0}) {
      Vec3d n{};
      n[axis] = sign;
      const Vec3d u = perpendicular(n);
      const Vec3d v = cross(n, u);
      const Vec3d c = n * extent;
      poly.faces.push_back(
          {{n, extent},
           {c + (u + v) * extent, c + (v - u) * extent, c - (u + v) * extent, c + (u - v) * extent},
           kWorldFace,
           false});
    }
  }
  for (std::size_t i = 0; i < planes.size() && !poly.empty(); ++i) {
    poly = clip_behind(poly, planes[i], eps, std::int32_t(i), false);
  }
  return poly;
}

PlaneSide classify(const ConvexPolytope& poly, const Planed& plane, double eps) {
  bool front = false;
  bool back = false;
  for (const PolytopeFace& f : poly.faces) {
    for (Vec3d v : f.vertices) {
      const double s = plane.distance(v);
      front |= s > eps;
      back |= s < -eps;
    }
    if (front && back) return PlaneSide::kSpanning;
  }
  return front ? PlaneSide::kFront : PlaneSide::kBack;
}

ConvexPolytope clip_behind(const ConvexPolytope& poly, const Planed& plane, double eps,
                           std::int32_t cap_source, bool cap_on_splitter) {
  switch (classify(poly, plane, eps)) {
    case PlaneSide::kBack:
      return poly;
    case PlaneSide::kFront:
      return {};
    case PlaneSide::kSpanning:
      break;
  }
  ConvexPolytope out;
  std::vector<Vec3d> cap;
  double deepest_behind = 0.0;
  double highest_in_front = 0.0;
  for (const PolytopeFace& face : poly.faces) {
    std::vector<Vec3d> kept;
    const std::size_t n = face.vertices.size();
    for (std::size_t i = 0; i < n; ++i) {
      const Vec3d a = face.vertices[i];
      const Vec3d b = face.vertices[(i + 1) % n];
      const double sa = plane.distance(a);
      const double sb = plane.distance(b);
      deepest_behind = std::max(deepest_behind, -sa);
      highest_in_front = std::max(highest_in_front, sa);
      if (sa <= eps) kept.push_back(a);
      if (std::abs(sa) <= eps) cap.push_back(a);
      if ((sa > eps && sb < -eps) || (sa < -eps && sb > eps)) {
        const Vec3d x = lerp(a, b, sa / (sa - sb));
        kept.push_back(x);
        cap.push_back(x);
      }
    }
    // A face whose kept part has no vertex strictly behind lies on the plane: the cap replaces it.
    const bool any_behind =
        std::any_of(kept.begin(), kept.end(), [&](Vec3d p) { return plane.distance(p) < -eps; });
    if (kept.size() >= 3 && any_behind)
      out.faces.push_back({face.plane, std::move(kept), face.source, face.on_splitter});
  }
  std::vector<Vec3d> loop = order_loop(std::move(cap), plane, eps);
  if (loop.empty()) {
    // The plane only grazes a corner: its section is narrower than eps, so one side holds a tip thinner
    // than the tolerance. Keep the whole polytope on the side it reaches further into (both on a tie).
    return deepest_behind >= highest_in_front ? poly : ConvexPolytope{};
  }
  out.faces.push_back({plane, std::move(loop), cap_source, cap_on_splitter});
  if (out.empty()) return {};
  return out;
}

}  // namespace shiftcast
