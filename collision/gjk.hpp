// GJK distance between two posed convex shapes: the general path of shape_distance
// (collision/narrow_phase.hpp), internal to collision/. Header-only so that every target compiling
// narrow_phase.cpp gets it without another source file; tests include it to run GJK on the round pairs
// that shape_distance answers in closed form.
//
// The search runs on the Minkowski difference D = B − A, so its closest point v to the origin is the
// vector from a's witness to b's: v/|v| is directly the contact normal from a towards b. Spheres are
// handled as their centre plus a margin (van den Bergen): GJK then meets only points, boxes, hulls and
// cylinders, and a sphere's distance and depth are exact whenever its centre is outside the other shape.
//
// The simplex sub-algorithm solves each sub-simplex by signed areas and volumes relative to the origin
// (Montanari et al. 2017 style) and falls back to the simplex's edges or faces when it is flat, so
// duplicate hull vertices, coplanar hulls and flat boxes only ever shrink the simplex, never divide by
// zero. The loop keeps the best simplex and stops when the distance no longer decreases, so rounding can
// cost accuracy (bounded by kGjkTolerance) but never a loop.
//
// When the origin is inside D (the shapes overlap, or touch within rounding), GJK has no distance to
// give. The depth is then estimated by probing candidate directions s (the last GJK direction, the
// centre difference, ±z, the box axes, the faces of the final tetrahedron): translating b by
// h_A(s) + h_B(−s) along s makes the shapes touch, so the smallest such value is a true upper bound on
// the penetration depth and its direction a move that provably separates them. For two yawed boxes and
// for round pairs the candidates include the minimising axis, so the estimate is exact there. A
// candidate that already separates proves the shapes only touch: that is how face-to-face contact at
// distance 0 is reported as not overlapping.
#pragma once

#include <cmath>
#include <cstdint>

#include "collision/narrow_phase.hpp"
#include "collision/pose.hpp"
#include "collision/shape.hpp"
#include "collision/vec3.hpp"

namespace shiftcast::gjk {

// Below this |v| the search direction is dominated by rounding (coordinates of up to ~1e4 units carry
// ~1e-12 of error in double), so GJK treats the origin as on the simplex and lets the probe decide
// between overlap and touching. Far below kGjkTolerance, so no measurable distance is lost.
inline constexpr double kOriginOnSimplex = 1e-9;
// Sine of the angle below which a triangle or tetrahedron counts as flat and is solved through its
// edges or faces instead: its signed area or volume would be mostly rounding. Double rounding of the
// products is ~1e-16 relative; 1e-9 leaves seven orders of margin, and a simplex this flat loses at
// most 1e-9 of its extent by being replaced with its boundary.
inline constexpr double kFlatSine = 1e-9;

enum class Margins : std::uint8_t {
  kSphereAsMargin,  // a sphere is its centre plus its radius (what shape_distance uses)
  kFullSupport,     // every shape through its full support mapping (tests compare the two)
};

// A shape placed at a pose as GJK sees it: a core with a support-point mapping, plus a margin.
struct PosedShape {
  const Shape* shape = nullptr;
  Vec3d position{};
  double cos_yaw = 1;
  double sin_yaw = 0;
  double margin = 0;         // sphere radius when the sphere is run as its centre
  bool core_is_point = false;

  // A point of the shape's core maximising u·x (world space, any u). Ties go to a fixed choice so
  // results are reproducible bit for bit.
  Vec3d support_point(Vec3d u) const {
    const Vec3d local = rotate_z(u, cos_yaw, -sin_yaw);
    return rotate_z(local_support_point(local), cos_yaw, sin_yaw) + position;
  }
  // Support point and value of the whole shape (core plus margin) for a unit u.
  Vec3d full_support_point(Vec3d unit_u) const { return support_point(unit_u) + unit_u * margin; }
  double full_support(Vec3d unit_u) const { return dot(unit_u, support_point(unit_u)) + margin; }

  // A point inside the shape (its centre, or the vertex mean of a hull), for the first direction.
  Vec3d centre() const {
    const Shape& s = *shape;
    Vec3d c = to_double(s.offset);
    if (s.kind == ShapeKind::kCylinder) c.z += 0.5 * double(s.height);
    if (s.kind == ShapeKind::kHull) {
      c = {};
      for (Vec3 v : s.hull_vertices)
        c += to_double(v);
      c = c * (1.0 / double(s.hull_vertices.size()));
    }
    return rotate_z(c, cos_yaw, sin_yaw) + position;
  }

 private:
  Vec3d local_support_point(Vec3d u) const {
    const Shape& s = *shape;
    const Vec3d o = to_double(s.offset);
    if (core_is_point) return o;
    switch (s.kind) {
      case ShapeKind::kPoint:
        return {};
      case ShapeKind::kSphere: {
        const double len = length(u);
        return len > 0 ? o + u * (double(s.radius) / len) : o;
      }
      case ShapeKind::kCylinder: {
        // Same expression as Shape::support so the two agree to the last bit on the radius term.
        const double rho = std::sqrt(u.x * u.x + u.y * u.y);
        const double k = rho > 0 ? double(s.radius) / rho : 0.0;
        return o + Vec3d{u.x * k, u.y * k, u.z > 0 ? double(s.height) : 0.0};
      }
      case ShapeKind::kBox: {
        const Vec3d h = to_double(s.half_extents);
        return o + Vec3d{u.x >= 0 ? h.x : -h.x, u.y >= 0 ? h.y : -h.y, u.z >= 0 ? h.z : -h.z};
      }
      case ShapeKind::kHull: {
        // First maximum wins: deterministic with duplicate vertices.
        Vec3 best = s.hull_vertices[0];
        double best_dot = dot(u, to_double(best));
        for (Vec3 v : s.hull_vertices.subspan(1)) {
          const double d = dot(u, to_double(v));
          if (d > best_dot) {
            best_dot = d;
            best = v;
          }
        }
        return to_double(best);
      }
    }
    return {};
  }
};

inline PosedShape pose_shape(const Shape& shape, const Pose& pose, Margins margins) {
  PosedShape p;
  p.shape = &shape;
  p.position = to_double(pose.position);
  const double yaw = pose.yaw;  // the same double yaw as collision/pose.hpp, so supports agree
  p.cos_yaw = std::cos(yaw);
  p.sin_yaw = std::sin(yaw);
  if (margins == Margins::kSphereAsMargin && shape.kind == ShapeKind::kSphere) {
    p.core_is_point = true;
    p.margin = shape.radius;
  }
  return p;
}

// One simplex vertex: a point w = b − a of D with the support points it came from (for witnesses).
struct Vertex {
  Vec3d w, a, b;
};

struct Simplex {
  Vertex v[4];
  double lambda[4] = {1, 0, 0, 0};  // barycentric weights of the closest point
  int size = 0;
};

// Closest point to the origin on the segment v[i]v[j]; writes the reduced simplex to `out`.
inline Vec3d solve_segment(const Vertex& p, const Vertex& q, Simplex& out) {
  const Vec3d e = q.w - p.w;
  const double ee = dot(e, e);
  const double t = -dot(p.w, e);  // unnormalised parameter of the projection
  if (t <= 0 || ee <= 0) {
    out.v[0] = p, out.lambda[0] = 1, out.size = 1;
    return p.w;
  }
  if (t >= ee) {
    out.v[0] = q, out.lambda[0] = 1, out.size = 1;
    return q.w;
  }
  const double u = t / ee;
  out.v[0] = p, out.v[1] = q, out.lambda[0] = 1 - u, out.lambda[1] = u, out.size = 2;
  return p.w + e * u;
}

inline Vec3d solve_triangle(const Vertex& p, const Vertex& q, const Vertex& r, Simplex& out) {
  const Vec3d ab = q.w - p.w, ac = r.w - p.w;
  const Vec3d n = cross(ab, ac);
  const double nn = dot(n, n);
  if (nn > kFlatSine * kFlatSine * dot(ab, ab) * dot(ac, ac)) {
    // Signed areas of the origin's projection against each edge, all scaled by |n|^2.
    const double la = dot(cross(q.w, r.w), n);
    const double lb = dot(cross(r.w, p.w), n);
    const double lc = dot(cross(p.w, q.w), n);
    if (la > 0 && lb > 0 && lc > 0) {
      const double inv = 1.0 / (la + lb + lc);
      out.v[0] = p, out.v[1] = q, out.v[2] = r, out.size = 3;
      out.lambda[0] = la * inv, out.lambda[1] = lb * inv, out.lambda[2] = lc * inv;
      return n * (dot(n, p.w) / nn);
    }
  }
  // The projection is outside (or the triangle is flat): the closest point is on an edge.
  Simplex best, trial;
  Vec3d best_v = solve_segment(p, q, best);
  const Vertex* edges[2][2] = {{&p, &r}, {&q, &r}};
  for (const auto& e : edges) {
    const Vec3d v = solve_segment(*e[0], *e[1], trial);
    if (dot(v, v) < dot(best_v, best_v)) best_v = v, best = trial;
  }
  out = best;
  return best_v;
}

// Returns the closest point of the tetrahedron; out.size == 4 means the origin is strictly inside.
inline Vec3d solve_tetrahedron(const Simplex& s, Simplex& out) {
  const Vertex &a = s.v[0], &b = s.v[1], &c = s.v[2], &d = s.v[3];
  const Vec3d ab = b.w - a.w, ac = c.w - a.w, ad = d.w - a.w;
  const double det = dot(ab, cross(ac, ad));
  const bool flat = std::abs(det) <= kFlatSine * length(ab) * length(ac) * length(ad);
  // Signed volumes with the origin replacing each vertex (det[a,b,c,d] expanded); their sum is det.
  const double l[4] = {dot(b.w, cross(c.w, d.w)), -dot(a.w, cross(c.w, d.w)), dot(a.w, cross(b.w, d.w)),
                       -dot(a.w, cross(b.w, c.w))};
  const double sum = l[0] + l[1] + l[2] + l[3];
  if (!flat) {
    if (l[0] * sum > 0 && l[1] * sum > 0 && l[2] * sum > 0 && l[3] * sum > 0) {
      out = s;
      for (int i = 0; i < 4; ++i)
        out.lambda[i] = l[i] / sum;
      return {};
    }
  }
  // Outside: the closest point is on a face the origin sees (vertex i's weight <= 0); when flat, any face.
  const int faces[4][3] = {{1, 2, 3}, {0, 2, 3}, {0, 1, 3}, {0, 1, 2}};
  Simplex trial;
  Vec3d best_v{};
  double best_vv = -1;
  for (int i = 0; i < 4; ++i) {
    if (!flat && l[i] * sum > 0) continue;
    const Vec3d v = solve_triangle(s.v[faces[i][0]], s.v[faces[i][1]], s.v[faces[i][2]], trial);
    if (best_vv < 0 || dot(v, v) < best_vv) best_vv = dot(v, v), best_v = v, out = trial;
  }
  return best_v;
}

inline Vec3d solve(const Simplex& s, Simplex& out) {
  switch (s.size) {
    case 1:
      out = s, out.lambda[0] = 1;
      return s.v[0].w;
    case 2:
      return solve_segment(s.v[0], s.v[1], out);
    case 3:
      return solve_triangle(s.v[0], s.v[1], s.v[2], out);
    default:
      return solve_tetrahedron(s, out);
  }
}

struct Outcome {
  bool origin_inside = false;  // enclosed by a tetrahedron or within kOriginOnSimplex of the simplex
  double distance = 0;         // |v| between the cores when not origin_inside
  Vec3d point_a{}, point_b{};  // core witnesses
  Vec3d direction{};           // the last non-negligible v (a towards b), zero if none
  Simplex simplex;
  int iterations = 0;
};

inline Vertex support_vertex(const PosedShape& a, const PosedShape& b, Vec3d dir) {
  Vertex x;
  x.b = b.support_point(dir);
  x.a = a.support_point(-dir);
  x.w = x.b - x.a;
  return x;
}

inline Outcome run(const PosedShape& a, const PosedShape& b) {
  Outcome o;
  Vec3d d = b.centre() - a.centre();
  if (dot(d, d) == 0) d = {1, 0, 0};
  Simplex& s = o.simplex;
  // The centre difference is a point of D, so the origin lies roughly along −d from it.
  s.v[0] = support_vertex(a, b, -d), s.size = 1;
  Vec3d v = s.v[0].w;
  double vv = dot(v, v);
  while (true) {
    if (vv <= kOriginOnSimplex * kOriginOnSimplex) {
      o.origin_inside = true;
      break;
    }
    o.direction = v;
    if (o.iterations >= kGjkMaxIterations) break;
    ++o.iterations;
    const Vertex w = support_vertex(a, b, -v);
    // |v| is an upper bound on the distance and v·w/|v| a lower bound; stop when they agree.
    if (vv - dot(v, w.w) <= kGjkTolerance * std::sqrt(vv)) break;
    bool duplicate = false;
    for (int i = 0; i < s.size; ++i)
      duplicate = duplicate || s.v[i].w == w.w;
    if (duplicate) break;
    Simplex grown = s, reduced;
    grown.v[grown.size++] = w;
    const Vec3d next = solve(grown, reduced);
    if (reduced.size == 4) {
      s = reduced;
      o.origin_inside = true;
      break;
    }
    const double next_vv = dot(next, next);
    if (next_vv >= vv) break;  // rounding stalled the descent: keep the previous, better simplex
    s = reduced, v = next, vv = next_vv;
  }
  for (int i = 0; i < s.size; ++i) {
    o.point_a += s.v[i].a * s.lambda[i];
    o.point_b += s.v[i].b * s.lambda[i];
  }
  o.distance = std::sqrt(vv);
  return o;
}

// Overlap depth by probing directions (see the file comment); fills an overlapping or touching result.
inline void probe_depth(const PosedShape& a, const PosedShape& b, const Outcome& o, ShapeDistance& r) {
  Vec3d candidates[20];  // 5 generic + 4 per box + 4 tetrahedron faces
  int count = 0;
  const auto add = [&](Vec3d s) {
    const double len = length(s);
    if (len > 0 && std::isfinite(len)) candidates[count++] = s * (1.0 / len);
  };
  add(o.direction);
  const Vec3d centres = b.centre() - a.centre();
  add(centres);
  add({centres.x, centres.y, 0});
  add({0, 0, 1});
  add({0, 0, -1});
  for (const PosedShape* p : {&a, &b}) {
    if (p->shape->kind != ShapeKind::kBox) continue;
    add({p->cos_yaw, p->sin_yaw, 0});
    add({-p->cos_yaw, -p->sin_yaw, 0});
    add({-p->sin_yaw, p->cos_yaw, 0});
    add({p->sin_yaw, -p->cos_yaw, 0});
  }
  if (o.simplex.size == 4) {
    // A face of the enclosing tetrahedron with outward normal m bounds D; moving b along −m exits it.
    const int faces[4][4] = {{1, 2, 3, 0}, {0, 2, 3, 1}, {0, 1, 3, 2}, {0, 1, 2, 3}};
    for (const auto& f : faces) {
      const Vec3d p0 = o.simplex.v[f[0]].w;
      Vec3d m = cross(o.simplex.v[f[1]].w - p0, o.simplex.v[f[2]].w - p0);
      if (dot(m, o.simplex.v[f[3]].w - p0) > 0) m = -m;
      add(-m);
    }
  }
  double best = 0;
  Vec3d best_s{};
  for (int i = 0; i < count; ++i) {
    const double depth = a.full_support(candidates[i]) + b.full_support(-candidates[i]);
    if (i == 0 || depth < best) best = depth, best_s = candidates[i];
  }
  // A non-positive depth is a plane with a on one side and b on the other: touching, not overlapping.
  r.overlapping = best > 0;
  r.distance = -best;
  r.normal = best_s;
  r.point_a = a.full_support_point(best_s);
  r.point_b = b.full_support_point(-best_s);
}

// shape_distance without the closed forms and without the status checks (callers have done them).
inline ShapeDistance shape_distance(const Shape& a, const Pose& pose_a, const Shape& b, const Pose& pose_b,
                                    Margins margins = Margins::kSphereAsMargin) {
  const PosedShape pa = pose_shape(a, pose_a, margins);
  const PosedShape pb = pose_shape(b, pose_b, margins);
  const Outcome o = run(pa, pb);
  ShapeDistance r;
  r.iterations = o.iterations;
  if (o.origin_inside) {
    probe_depth(pa, pb, o, r);
    return r;
  }
  const Vec3d n = (o.point_b - o.point_a) * (1.0 / o.distance);
  // Cores apart: the margins make the distance (or a sphere's depth) exact to kGjkTolerance.
  r.distance = o.distance - (pa.margin + pb.margin);
  r.overlapping = r.distance < 0;
  r.normal = n;
  r.point_a = o.point_a + r.normal * pa.margin;
  r.point_b = o.point_b - r.normal * pb.margin;
  return r;
}

}  // namespace shiftcast::gjk
