#include "tests/support/polytope_oracle.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace shiftcast::narrow_phase_test {
namespace {

// The oracle's 2x2 systems count as singular below this relative determinant (sine² of the angle).
constexpr double kSingular = 1e-12;

Vec3d closest_on_segment(Vec3d p, Vec3d a, Vec3d b) {
  const Vec3d e = b - a;
  const double ee = dot(e, e);
  return ee > 0 ? a + e * std::clamp(dot(p - a, e) / ee, 0.0, 1.0) : a;
}

Vec3d closest_on_triangle(Vec3d p, Vec3d a, Vec3d b, Vec3d c) {
  // Normal equations of min |a + s e1 + t e2 − p|²; if the minimiser is outside, an edge holds the answer.
  const Vec3d e1 = b - a, e2 = c - a, r = p - a;
  const double m11 = dot(e1, e1), m12 = dot(e1, e2), m22 = dot(e2, e2), det = m11 * m22 - m12 * m12;
  if (det > kSingular * m11 * m22) {
    const double s = (m22 * dot(e1, r) - m12 * dot(e2, r)) / det;
    const double t = (m11 * dot(e2, r) - m12 * dot(e1, r)) / det;
    if (s >= 0 && t >= 0 && s + t <= 1) return a + e1 * s + e2 * t;
  }
  Vec3d best = closest_on_segment(p, a, b);
  for (Vec3d q : {closest_on_segment(p, b, c), closest_on_segment(p, c, a)})
    if (length(q - p) < length(best - p)) best = q;
  return best;
}

// A convex quadratic on [0,1]² has its minimum at the interior critical point or on the square's edge.
Pair closest_segments(Vec3d a0, Vec3d a1, Vec3d b0, Vec3d b1) {
  Pair best{a0, closest_on_segment(a0, b0, b1)};
  const auto consider = [&](Pair c) {
    if (c.distance() < best.distance()) best = c;
  };
  consider({a1, closest_on_segment(a1, b0, b1)});
  consider({closest_on_segment(b0, a0, a1), b0});
  consider({closest_on_segment(b1, a0, a1), b1});
  const Vec3d u = a1 - a0, v = b1 - b0, w = a0 - b0;
  const double uu = dot(u, u), uv = dot(u, v), vv = dot(v, v), det = uu * vv - uv * uv;
  if (det > kSingular * uu * vv) {
    const double s = (uv * dot(v, w) - vv * dot(u, w)) / det, t = (uu * dot(v, w) - uv * dot(u, w)) / det;
    if (s > 0 && s < 1 && t > 0 && t < 1) consider({a0 + u * s, b0 + v * t});
  }
  return best;
}

}  // namespace

Pair brute_closest(const std::vector<Vec3d>& P, const std::vector<Vec3d>& Q) {
  Pair best{P[0], Q[0]};
  const auto consider = [&](Pair c) {
    if (c.distance() < best.distance()) best = c;
  };
  const auto vertex_triangles = [&](const std::vector<Vec3d>& V, const std::vector<Vec3d>& T, bool flip) {
    for (Vec3d v : V)
      for (size_t i = 0; i < T.size(); ++i)
        for (size_t j = i; j < T.size(); ++j)
          for (size_t k = j; k < T.size(); ++k) {
            const Vec3d c = closest_on_triangle(v, T[i], T[j], T[k]);
            consider(flip ? Pair{c, v} : Pair{v, c});
          }
  };
  vertex_triangles(P, Q, false);
  vertex_triangles(Q, P, true);
  for (size_t i = 0; i < P.size(); ++i)
    for (size_t j = i + 1; j < P.size(); ++j)
      for (size_t k = 0; k < Q.size(); ++k)
        for (size_t l = k + 1; l < Q.size(); ++l)
          consider(closest_segments(P[i], P[j], Q[k], Q[l]));
  return best;
}

bool separated_by_pair(const std::vector<Vec3d>& P, const std::vector<Vec3d>& Q, const Pair& c) {
  const double d = c.distance();
  if (!(d > kRounding)) return false;
  const Vec3d n = (c.q - c.p) * (1.0 / d);
  for (Vec3d x : P)
    if (dot(n, x - c.p) > kRounding) return false;
  for (Vec3d x : Q)
    if (dot(n, x - c.q) < -kRounding) return false;
  return true;
}

std::vector<FacetPlane> supporting_planes(const std::vector<Vec3d>& pts, bool* full_dimensional) {
  std::vector<FacetPlane> out;
  *full_dimensional = false;
  for (size_t i = 0; i < pts.size(); ++i)
    for (size_t j = i + 1; j < pts.size(); ++j)
      for (size_t k = j + 1; k < pts.size(); ++k) {
        const Vec3d n = normalize(cross(pts[j] - pts[i], pts[k] - pts[i]));
        if (length(n) == 0) continue;
        const double d = dot(n, pts[i]);
        double lo = 0, hi = 0;
        for (Vec3d p : pts) {
          lo = std::min(lo, dot(n, p) - d), hi = std::max(hi, dot(n, p) - d);
          if (lo < -kRounding && hi > kRounding) break;
        }
        if (hi <= kRounding) out.push_back({n, d});
        if (lo >= -kRounding) out.push_back({-n, -d});
        *full_dimensional = *full_dimensional || lo < -kRounding || hi > kRounding;
      }
  return out;
}

double depth_of_origin(const std::vector<Vec3d>& pts) {
  bool full = false;
  double depth = kInf;
  for (const FacetPlane& f : supporting_planes(pts, &full))
    depth = std::min(depth, f.d);
  return full ? depth : 0.0;
}

Shape World::add_hull(std::vector<Vec3> v) {
  HullInfo& h = hulls.emplace_back();
  h.vertices = std::move(v);
  std::vector<Vec3d> d;
  for (Vec3 q : h.vertices)
    d.push_back(to_double(q));
  h.facets = supporting_planes(d, &h.full);
  return Shape::hull(h.vertices);
}

Shape random_shape(Rng& rng, World& w, int kind) {
  const Vec3 off{float(rng.uniform(-4, 4)), float(rng.uniform(-4, 4)), float(rng.uniform(-4, 4))};
  switch (kind) {
    case 0:
      return Shape::point();
    case 1:
      return Shape::sphere(float(rng.uniform(0.5, 20)), off);
    case 2:
      return Shape::cylinder(float(rng.uniform(1, 20)), float(rng.uniform(1, 60)), off);
    case 3:
      return Shape::box(
          {float(rng.uniform(0.5, 20)), float(rng.uniform(0.5, 20)), float(rng.uniform(0.5, 20))}, off);
    default: {
      std::vector<Vec3> v(4 + rng.index(7));
      const Vec3d r{rng.uniform(2, 15), rng.uniform(2, 15), rng.uniform(2, 15)};
      for (Vec3& x : v) {
        const Vec3d u = normalize(Vec3d{rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1)});
        x = to_float(Vec3d{u.x * r.x, u.y * r.y, u.z * r.z} + to_double(off));
      }
      return w.add_hull(std::move(v));
    }
  }
}

Pose random_pose(Rng& rng, double spread) {
  return {{float(rng.uniform(-spread, spread)), float(rng.uniform(-spread, spread)),
           float(rng.uniform(-spread, spread))},
          float(rng.uniform(-kPi, kPi))};
}

std::vector<Vec3d> core_points(const Shape& s, const Pose& p) {
  const Vec3d o = to_double(s.offset), h = to_double(s.half_extents);
  std::vector<Vec3d> out;
  if (s.kind == ShapeKind::kBox)
    for (int c = 0; c < 8; ++c)
      out.push_back(to_world(p, o + Vec3d{c & 1 ? h.x : -h.x, c & 2 ? h.y : -h.y, c & 4 ? h.z : -h.z}));
  else if (s.kind == ShapeKind::kHull)
    for (Vec3 v : s.hull_vertices)
      out.push_back(to_world(p, to_double(v)));
  else
    out.push_back(to_world(p, s.kind == ShapeKind::kPoint ? Vec3d{} : o));
  return out;
}
double core_margin(const Shape& s) {
  return s.kind == ShapeKind::kSphere ? s.radius : 0.0;
}

double inside_margin(const World& w, const Shape& s, const Pose& p, Vec3d x) {
  const Vec3d l = to_local(p, x) - to_double(s.offset);
  switch (s.kind) {
    case ShapeKind::kPoint:
      return -length(to_local(p, x));
    case ShapeKind::kSphere:
      return s.radius - length(l);
    case ShapeKind::kCylinder:
      return std::min({s.radius - std::sqrt(l.x * l.x + l.y * l.y), l.z, s.height - l.z});
    case ShapeKind::kBox:
      return std::min({s.half_extents.x - std::abs(l.x), s.half_extents.y - std::abs(l.y),
                       s.half_extents.z - std::abs(l.z)});
    case ShapeKind::kHull: {
      const HullInfo& h = w.info(s);
      double m = kInf;
      for (const FacetPlane& f : h.facets)
        m = std::min(m, f.d - dot(f.n, to_local(p, x)));
      return h.full ? m : -kInf;
    }
  }
  return -kInf;
}

double outside_distance(const World& w, const Shape& s, const Pose& p, Vec3d x) {
  const Vec3d l = to_local(p, x) - to_double(s.offset);
  switch (s.kind) {
    case ShapeKind::kPoint:
    case ShapeKind::kSphere:
      return std::max(0.0, length(l) - (s.kind == ShapeKind::kSphere ? s.radius : 0.0f));
    case ShapeKind::kCylinder: {
      const double rho = std::sqrt(l.x * l.x + l.y * l.y);
      const double dz = l.z < 0 ? -l.z : std::max(0.0, l.z - s.height);
      return std::hypot(std::max(0.0, rho - s.radius), dz);
    }
    case ShapeKind::kBox: {
      const Vec3d h = to_double(s.half_extents);
      const Vec3d e{std::max(0.0, std::abs(l.x) - h.x), std::max(0.0, std::abs(l.y) - h.y),
                    std::max(0.0, std::abs(l.z) - h.z)};
      return length(e);
    }
    case ShapeKind::kHull: {
      if (inside_margin(w, s, p, x) >= 0) return 0;
      const std::vector<Vec3d> v = core_points(s, p);
      return brute_closest({x}, v).distance();
    }
  }
  return kInf;
}

double overlap_along(const Shape& a, const Pose& pa, const Shape& b, const Pose& pb, Vec3d n) {
  return support_posed(a, pa, n) + support_posed(b, pb, -n);
}

void random_pair(Rng& rng, int kind_a, int kind_b, Sample& s, double spread) {
  s.world.hulls.clear();
  s.a = random_shape(rng, s.world, kind_a);
  s.b = random_shape(rng, s.world, kind_b);
  s.pa = random_pose(rng, 5);
  s.pb = random_pose(rng, spread);
}

}  // namespace shiftcast::narrow_phase_test
