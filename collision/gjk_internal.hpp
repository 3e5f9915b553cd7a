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
// give. The depth is then found by probing candidate directions s: translating b by h_A(s) + h_B(−s)
// along s makes the shapes touch, so the smallest such value over the candidates is a true upper bound
// on the penetration depth, and its direction a move that provably separates them. The candidates are
// EPA's answer (a bounded expanding polytope from GJK's final tetrahedron: within kGjkTolerance of the
// depth when it converges), the last GJK direction, the centre difference and its horizontal part, ±z
// and the box axes. With yaw-only rotation the last three hold the exact answer for two boxes and for
// round shapes, whatever EPA does. A candidate that already separates proves the shapes only touch:
// that is how face-to-face contact at distance 0 is reported as not overlapping.
#pragma once

#include <algorithm>
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
  double margin = 0;  // sphere radius when the sphere is run as its centre
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
        // rho as Shape::support computes it, so support points and values agree closely.
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
  // The same double yaw as collision/pose.hpp, so supports agree; cos(0) and sin(0) are exactly 1 and 0,
  // so skipping them for unrotated entities changes no bit. Shapes the yaw cannot change (players,
  // projectiles) skip them too: the turn would only add rounding.
  const double yaw = pose.yaw;
  if (yaw != 0 && !shape.yaw_symmetric()) p.cos_yaw = std::cos(yaw), p.sin_yaw = std::sin(yaw);
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

// The closest point to the origin of a sub-simplex, as the (ascending) indices of the vertices that
// carry it and their weights. Solvers work on the points alone and never copy vertices.
struct Solution {
  Vec3d point{};
  int size = 0;
  int index[4] = {};
  double lambda[4] = {};
};

inline Solution solve_segment(const Vec3d* w, int i, int j) {
  Solution s;
  const Vec3d e = w[j] - w[i];
  const double ee = dot(e, e);
  const double t = -dot(w[i], e);  // unnormalised parameter of the projection
  if (t <= 0 || ee <= 0) {
    s.point = w[i], s.size = 1, s.index[0] = i, s.lambda[0] = 1;
  } else if (t >= ee) {
    s.point = w[j], s.size = 1, s.index[0] = j, s.lambda[0] = 1;
  } else {
    const double u = t / ee;
    s.point = w[i] + e * u, s.size = 2, s.index[0] = i, s.index[1] = j, s.lambda[0] = 1 - u, s.lambda[1] = u;
  }
  return s;
}

inline Solution solve_triangle(const Vec3d* w, int i, int j, int k) {
  const Vec3d ab = w[j] - w[i], ac = w[k] - w[i];
  const Vec3d n = cross(ab, ac);
  const double nn = dot(n, n);
  if (nn > kFlatSine * kFlatSine * dot(ab, ab) * dot(ac, ac)) {
    // Signed areas of the origin's projection against each edge, all scaled by |n|^2.
    const double la = dot(cross(w[j], w[k]), n);
    const double lb = dot(cross(w[k], w[i]), n);
    const double lc = dot(cross(w[i], w[j]), n);
    if (la > 0 && lb > 0 && lc > 0) {
      const double inv = 1.0 / (la + lb + lc);
      return {n * (dot(n, w[i]) / nn), 3, {i, j, k, 0}, {la * inv, lb * inv, lc * inv, 0}};
    }
  }
  // The projection is outside (or the triangle is flat): the closest point is on an edge.
  Solution best = solve_segment(w, i, j);
  for (const Solution& e : {solve_segment(w, i, k), solve_segment(w, j, k)})
    if (dot(e.point, e.point) < dot(best.point, best.point)) best = e;
  return best;
}

// size == 4 means the origin is strictly inside the tetrahedron w[0..3].
inline Solution solve_tetrahedron(const Vec3d* w) {
  const Vec3d ab = w[1] - w[0], ac = w[2] - w[0], ad = w[3] - w[0];
  const double det = dot(ab, cross(ac, ad));
  const bool flat = std::abs(det) <= kFlatSine * length(ab) * length(ac) * length(ad);
  // Signed volumes with the origin replacing each vertex (det[a,b,c,d] expanded); their sum is det.
  const double l[4] = {dot(w[1], cross(w[2], w[3])), -dot(w[0], cross(w[2], w[3])),
                       dot(w[0], cross(w[1], w[3])), -dot(w[0], cross(w[1], w[2]))};
  const double sum = l[0] + l[1] + l[2] + l[3];
  if (!flat && l[0] * sum > 0 && l[1] * sum > 0 && l[2] * sum > 0 && l[3] * sum > 0)
    return {{}, 4, {0, 1, 2, 3}, {l[0] / sum, l[1] / sum, l[2] / sum, l[3] / sum}};
  // Outside: the closest point is on a face the origin sees (vertex i's weight <= 0); when flat, any face.
  const int faces[4][3] = {{1, 2, 3}, {0, 2, 3}, {0, 1, 3}, {0, 1, 2}};
  Solution best;
  bool found = false;
  for (int i = 0; i < 4; ++i) {
    if (!flat && l[i] * sum > 0) continue;
    const Solution f = solve_triangle(w, faces[i][0], faces[i][1], faces[i][2]);
    if (!found || dot(f.point, f.point) < dot(best.point, best.point)) best = f, found = true;
  }
  return best;
}

inline Solution solve(const Vec3d* w, int size) {
  switch (size) {
    case 1:
      return {w[0], 1, {0, 0, 0, 0}, {1, 0, 0, 0}};
    case 2:
      return solve_segment(w, 0, 1);
    case 3:
      return solve_triangle(w, 0, 1, 2);
    default:
      return solve_tetrahedron(w);
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
    // Solve with w in the spare slot; the simplex only changes when the step made progress.
    s.v[s.size] = w;
    Vec3d points[4];
    for (int i = 0; i <= s.size; ++i)
      points[i] = s.v[i].w;
    const Solution next = solve(points, s.size + 1);
    const double next_vv = dot(next.point, next.point);
    if (next.size < 4 && next_vv >= vv) break;  // rounding stalled the descent: keep the better simplex
    for (int i = 0; i < next.size; ++i) {       // indices ascend, so compacting in place is safe
      s.v[i] = s.v[next.index[i]];
      s.lambda[i] = next.lambda[i];
    }
    s.size = next.size;
    if (next.size == 4) {
      o.origin_inside = true;
      break;
    }
    v = next.point, vv = next_vv;
  }
  for (int i = 0; i < s.size; ++i) {
    o.point_a += s.v[i].a * s.lambda[i];
    o.point_b += s.v[i].b * s.lambda[i];
  }
  o.distance = std::sqrt(vv);
  return o;
}

// EPA (van den Bergen's expanding polytope) from GJK's enclosing tetrahedron, used only to propose the
// probe's best direction: any failure (a degenerate face, full arrays) just returns the best direction so
// far, and the probe still checks every candidate, so EPA can cost accuracy but never correctness. Each
// iteration costs one support pair; overlaps are rare (the world keeps a skin), so the bound is generous.
inline constexpr int kEpaMaxIterations = 32;
inline constexpr int kEpaMaxVertices = kEpaMaxIterations + 4;
// A closed triangulated polytope with V vertices has 2V − 4 faces; dead faces' slots are reused.
inline constexpr int kEpaMaxFaces = 2 * kEpaMaxVertices;

// The unit outward normal m of D = B − A with the smallest support value h_D(m) seen (zero if none):
// moving b by h_D(m) along −m separates the shapes, and EPA drives h_D(m) down to the depth.
inline Vec3d epa_direction(const PosedShape& a, const PosedShape& b, const Simplex& tetra) {
  struct Face {
    int v[3];
    Vec3d n;
    double dist;  // of the face's plane from the origin
    bool alive;
  };
  Vec3d pts[kEpaMaxVertices];
  Face faces[kEpaMaxFaces];
  int np = 4, nf = 0;
  for (int i = 0; i < 4; ++i)
    pts[i] = tetra.v[i].w;
  const auto make_face = [&](int i, int j, int k) {
    const Vec3d n = cross(pts[j] - pts[i], pts[k] - pts[i]);
    const double len = length(n);
    if (!(len > 0)) return false;
    int slot = 0;
    while (slot < nf && faces[slot].alive)
      ++slot;
    if (slot == kEpaMaxFaces) return false;
    nf = std::max(nf, slot + 1);
    faces[slot] = {{i, j, k}, n * (1.0 / len), dot(n, pts[i]) / len, true};
    return true;
  };
  const int tetra_faces[4][4] = {{1, 2, 3, 0}, {0, 2, 3, 1}, {0, 1, 3, 2}, {0, 1, 2, 3}};
  for (const auto& f : tetra_faces) {
    const bool inward = dot(cross(pts[f[1]] - pts[f[0]], pts[f[2]] - pts[f[0]]), pts[f[3]] - pts[f[0]]) > 0;
    if (!(inward ? make_face(f[0], f[2], f[1]) : make_face(f[0], f[1], f[2]))) return {};
  }
  Vec3d best{};
  double best_upper = 0;
  for (int it = 0; it < kEpaMaxIterations; ++it) {
    int c = -1;
    for (int f = 0; f < nf; ++f)
      if (faces[f].alive && (c < 0 || faces[f].dist < faces[c].dist)) c = f;
    if (c < 0) break;
    const Vec3d n = faces[c].n;
    const Vec3d w = support_vertex(a, b, n).w;
    const double upper = dot(n, w);
    if (best == Vec3d{} || upper < best_upper) best = n, best_upper = upper;
    if (upper - faces[c].dist <= kGjkTolerance || np == kEpaMaxVertices) break;
    // Remove the faces w sees; the edges they do not share with each other form the horizon.
    int edges[3 * kEpaMaxFaces][2];
    int ne = 0;
    for (int f = 0; f < nf; ++f) {
      if (!faces[f].alive || dot(faces[f].n, w - pts[faces[f].v[0]]) <= 0) continue;
      faces[f].alive = false;
      for (int e = 0; e < 3; ++e) {
        const int from = faces[f].v[e], to = faces[f].v[(e + 1) % 3];
        int twin = 0;
        while (twin < ne && !(edges[twin][0] == to && edges[twin][1] == from))
          ++twin;
        if (twin < ne) {
          edges[twin][0] = edges[ne - 1][0], edges[twin][1] = edges[ne - 1][1], --ne;
        } else {
          edges[ne][0] = from, edges[ne][1] = to, ++ne;
        }
      }
    }
    pts[np] = w;
    for (int e = 0; e < ne; ++e)
      if (!make_face(edges[e][0], edges[e][1], np)) return best;
    ++np;
  }
  return best;
}

// Overlap depth by probing directions (see the file comment); fills an overlapping or touching result.
inline void probe_depth(const PosedShape& a, const PosedShape& b, const Outcome& o, ShapeDistance& r) {
  Vec3d candidates[16];  // 6 generic + 4 per box
  int count = 0;
  const auto add = [&](Vec3d s) {
    const double len = length(s);
    if (len > 0 && std::isfinite(len)) candidates[count++] = s * (1.0 / len);
  };
  // EPA first: on ties the earlier candidate wins, and EPA's is the one aimed at the true depth.
  if (o.simplex.size == 4) add(-epa_direction(a, b, o.simplex));
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
  double best = 0;
  Vec3d best_s{};
  for (int i = 0; i < count; ++i) {
    const double depth = a.full_support(candidates[i]) + b.full_support(-candidates[i]);
    if (i == 0 || depth < best) best = depth, best_s = candidates[i];
  }
  // A non-positive depth is a plane with a on one side and b on the other: touching, not overlapping.
  r.overlapping = best > 0;
  r.distance = 0.0 - best;  // +0, not -0, when exactly touching
  r.normal = best_s;
  if (!r.overlapping && o.simplex.size < 4) {
    // Touching, found by GJK running into the origin: its witnesses are the contact itself, where any
    // support point on a touching face could be a corner outside the contact.
    r.point_a = o.point_a + best_s * a.margin;
    r.point_b = o.point_b - best_s * b.margin;
  } else {
    r.point_a = a.full_support_point(best_s);
    r.point_b = b.full_support_point(-best_s);
  }
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
  // Cores apart: the margins make the distance (or a sphere's depth) exact to kGjkTolerance.
  r.distance = o.distance - (pa.margin + pb.margin);
  r.overlapping = r.distance < 0;
  r.normal = o.direction * (1.0 / o.distance);  // the final v, which is b's witness minus a's
  r.point_a = o.point_a + r.normal * pa.margin;
  r.point_b = o.point_b - r.normal * pb.margin;
  return r;
}

}  // namespace shiftcast::gjk
