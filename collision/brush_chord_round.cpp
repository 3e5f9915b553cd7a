// Sphere and upright-cylinder chords (collision/brush_chord_internal.hpp): the first and last crossing of the
// line with the pieces that cover the boundary of the configuration obstacle K.
#include <algorithm>
#include <cmath>
#include <limits>

#include "collision/brush_chord_internal.hpp"

namespace shiftcast {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
// A quadratic whose leading coefficient is below this (units² per t²) is a motion along the piece's axis:
// it never crosses that piece's curved surface (the neighbouring pieces see the crossing).
constexpr double kMinQuadratic = 1e-18;
// Upright cylinders: a face or edge rising less than this per unit of horizontal run is taken as flat.
// Moving a flat face out horizontally, or shearing a cylinder along a flat edge, divides by that rise;
// instead such a face or edge grows by the radius in its own (near-horizontal) plane. Points of a piece
// taken as flat lie within this slope times the brush size of the true surface: below 1e-3 units for
// any level up to 1,000 units across a face, and far larger than the rounding the shear would amplify.
constexpr double kFlatSlope = 1e-6;

// The first and last crossings seen so far.
struct Crossings {
  double t_in = kInfinity;
  double t_out = -kInfinity;
  Vec3d normal{};
  bool planar_in = false;

  void add(double t, Vec3d n, bool planar = false) {
    if (t < t_in) {
      t_in = t;
      normal = n;
      planar_in = planar;
    }
    t_out = std::max(t_out, t);
  }
  Chord chord() const {
    Chord c;
    c.exists = t_in < t_out;
    c.t_in = t_in;
    c.t_out = t_out;
    c.normal = normalize(normal);
    c.planar_entry = planar_in;
    return c;
  }
};

// Roots of a t² + b t + c = 0 (a > 0), by the cancellation-free formula; false when there are none.
bool solve_quadratic(double a, double b, double c, double& t0, double& t1) {
  const double disc = b * b - 4.0 * a * c;
  if (disc < 0.0) return false;
  const double q = -0.5 * (b + std::copysign(std::sqrt(disc), b));
  if (q == 0.0) {
    t0 = t1 = 0.0;
    return true;
  }
  t0 = q / a;
  t1 = c / q;
  if (t0 > t1) std::swap(t0, t1);
  return true;
}

// x is in P with `slack` to spare on every face but `skip` (negative slack: that far inside).
bool in_polytope(std::span<const Planed> faces, Vec3d x, double slack = kFeatureSlack, int skip = -1) {
  for (std::size_t g = 0; g < faces.size(); ++g) {
    if (int(g) != skip && faces[g].distance(x) > slack) return false;
  }
  return true;
}

// Q = P swept down by the height: a face facing down moves down with the sweep.
double swept_offset(const Planed& f, double height) {
  return f.d + height * std::max(0.0, -f.normal.z);
}

// y is in Q (faces swept down, silhouette planes) with `slack` to spare, face `skip` aside.
bool in_swept(const BrushTopology& topo, const BrushTopology::Record& brush, double height, Vec3d y,
              double slack = kFeatureSlack, int skip = -1) {
  const std::span<const Planed> faces = topo.faces(brush);
  for (std::size_t g = 0; g < faces.size(); ++g) {
    if (int(g) != skip && dot(faces[g].normal, y) - swept_offset(faces[g], height) > slack) return false;
  }
  for (const Planed& sil : topo.silhouettes(brush)) {
    if (sil.distance(y) > slack) return false;
  }
  return true;
}

// Horizontal distance from q to the convex polygon `loop` (either orientation seen from above; one or two
// points when it is a vertex or an edge), 0 inside.
double distance_2d(const BrushTopology& topo, std::span<const std::int32_t> loop, Vec3d q) {
  const auto seg = [&](Vec3d a, Vec3d b) {
    const double ex = b.x - a.x;
    const double ey = b.y - a.y;
    const double len2 = ex * ex + ey * ey;
    double s = len2 > 0.0 ? ((q.x - a.x) * ex + (q.y - a.y) * ey) / len2 : 0.0;
    s = std::clamp(s, 0.0, 1.0);
    const double dx = q.x - a.x - ex * s;
    const double dy = q.y - a.y - ey * s;
    return std::sqrt(dx * dx + dy * dy);
  };
  if (loop.empty()) return kInfinity;
  if (loop.size() == 1) return seg(topo.vertex(loop[0]), topo.vertex(loop[0]));
  bool left = loop.size() >= 3;
  bool right = left;
  double nearest = kInfinity;
  for (std::size_t i = 0; i < loop.size(); ++i) {
    const Vec3d a = topo.vertex(loop[i]);
    const Vec3d b = topo.vertex(loop[(i + 1) % loop.size()]);
    const double side = (b.x - a.x) * (q.y - a.y) - (b.y - a.y) * (q.x - a.x);
    left &= side >= 0.0;
    right &= side <= 0.0;
    nearest = std::min(nearest, seg(a, b));
    if (loop.size() == 2) break;
  }
  return left || right ? 0.0 : nearest;
}

}  // namespace

Chord sphere_chord(const BrushTopology& topo, const BrushTopology::Record& brush, Vec3d centre, Vec3d w,
                   double radius) {
  Crossings x;
  const std::span<const Planed> faces = topo.faces(brush);
  // Faces moved out by the radius: the contact point on P is the crossing moved back along the normal.
  for (const Planed& f : faces) {
    const double speed = dot(f.normal, w);
    if (speed == 0.0) continue;
    const double t = (radius - f.distance(centre)) / speed;
    if (in_polytope(faces, centre + w * t - f.normal * radius)) x.add(t, f.normal, true);
  }
  if (radius > 0.0) {
    const double r2 = radius * radius;
    // Round cylinders about the edges, between their end points.
    for (const BrushTopology::Edge& e : topo.edges(brush)) {
      const Vec3d a = topo.vertex(e.a);
      const Vec3d axis = topo.vertex(e.b) - a;
      const double len2 = length_squared(axis);
      if (len2 == 0.0) continue;
      const Vec3d m0 = centre - a;
      const Vec3d p0 = m0 - axis * (dot(m0, axis) / len2);  // perpendicular parts
      const Vec3d pw = w - axis * (dot(w, axis) / len2);
      const double qa = length_squared(pw);
      if (qa <= kMinQuadratic) continue;
      double t[2];
      if (!solve_quadratic(qa, 2.0 * dot(p0, pw), length_squared(p0) - r2, t[0], t[1])) continue;
      const double slack = kFeatureSlack / std::sqrt(len2);
      for (double ti : t) {
        const double along = dot(m0 + w * ti, axis) / len2;
        if (along >= -slack && along <= 1.0 + slack) x.add(ti, p0 + pw * ti);
      }
    }
    // Spheres about the vertices.
    const double qa = length_squared(w);
    for (const Vec3d& v : topo.vertices(brush)) {
      const Vec3d m0 = centre - v;
      double t[2];
      if (!solve_quadratic(qa, 2.0 * dot(m0, w), length_squared(m0) - r2, t[0], t[1])) continue;
      for (double ti : t)
        x.add(ti, m0 + w * ti);
    }
  }
  return x.chord();
}

Chord cylinder_chord(const BrushTopology& topo, const BrushTopology::Record& brush, Vec3d bottom, Vec3d w,
                     double radius, double height) {
  Crossings x;
  const std::span<const Planed> faces = topo.faces(brush);
  const std::span<const Planed> silhouettes = topo.silhouettes(brush);
  const auto q_offset = [&](const Planed& f) { return swept_offset(f, height); };
  const auto in_q = [&](Vec3d y) { return in_swept(topo, brush, height, y); };
  // Q's faces moved out horizontally by the radius; a flat one grows by the radius in its plane instead.
  const auto crossing = [&](Vec3d n, double offset) {
    const double speed = dot(n, w);
    return speed == 0.0 ? kInfinity : (offset - dot(n, bottom)) / speed;
  };
  for (std::int32_t i = 0; i < brush.faces.count; ++i) {
    const Planed& f = faces[std::size_t(i)];
    const double flat = std::sqrt(f.normal.x * f.normal.x + f.normal.y * f.normal.y);
    if (flat <= kFlatSlope * std::abs(f.normal.z)) {
      const double t = crossing(f.normal, q_offset(f));
      const Vec3d at = bottom + w * t;
      if (t != kInfinity &&
          distance_2d(topo, topo.face_loop(brush.faces.first + i), at) <= radius + kFeatureSlack)
        x.add(t, f.normal, true);
      continue;
    }
    const double t = crossing(f.normal, q_offset(f) + radius * flat);
    const Vec3d shift{f.normal.x * (radius / flat), f.normal.y * (radius / flat), 0.0};
    if (t != kInfinity && in_q(bottom + w * t - shift)) x.add(t, f.normal, true);
  }
  for (const Planed& s : silhouettes) {  // vertical
    const double t = crossing(s.normal, s.d + radius);
    if (t != kInfinity && in_q(bottom + w * t - s.normal * radius)) x.add(t, s.normal, true);
  }
  // The caps: Q's top is P's highest feature, its bottom P's lowest one swept down, each grown by the
  // radius in the horizontal plane.
  if (w.z != 0.0) {
    const auto cap = [&](double z, std::span<const std::int32_t> loop, double nz) {
      const double t = (z - bottom.z) / w.z;
      if (distance_2d(topo, loop, bottom + w * t) <= radius + kFeatureSlack) x.add(t, {0, 0, nz}, true);
    };
    cap(brush.bounds.max.z, topo.top(brush), 1.0);
    cap(brush.bounds.min.z - height, topo.bottom(brush), -1.0);
  }
  if (radius > 0.0) {
    const double r2 = radius * radius;
    // Points within the radius, horizontally, of the segment a → a + e (e.z != 0): at the height of p the
    // segment's line is at a + e·(p.z − a.z)/e.z, so the horizontal offset is linear in t.
    const auto sheared = [&](Vec3d a, Vec3d e) {
      if (std::abs(e.z) <= kFlatSlope * std::sqrt(e.x * e.x + e.y * e.y)) {
        // Flat: the edge grown by the radius in its plane, crossed where the motion passes its height.
        if (w.z == 0.0) return;
        const double t = (a.z + 0.5 * e.z - bottom.z) / w.z;
        const Vec3d q = bottom + w * t - a;
        const double len2 = e.x * e.x + e.y * e.y;
        const double s = std::clamp(len2 > 0.0 ? (q.x * e.x + q.y * e.y) / len2 : 0.0, 0.0, 1.0);
        if (std::sqrt((q.x - e.x * s) * (q.x - e.x * s) + (q.y - e.y * s) * (q.y - e.y * s)) <=
            radius + kFeatureSlack)
          x.add(t, {0, 0, w.z < 0.0 ? 1.0 : -1.0}, true);
        return;
      }
      const double mx = e.x / e.z;
      const double my = e.y / e.z;
      const double q0x = bottom.x - a.x - mx * (bottom.z - a.z);
      const double q0y = bottom.y - a.y - my * (bottom.z - a.z);
      const double qvx = w.x - mx * w.z;
      const double qvy = w.y - my * w.z;
      const double qa = qvx * qvx + qvy * qvy;
      if (qa <= kMinQuadratic) return;
      double t[2];
      if (!solve_quadratic(qa, 2.0 * (q0x * qvx + q0y * qvy), q0x * q0x + q0y * q0y - r2, t[0], t[1])) return;
      const double slack = kFeatureSlack / std::abs(e.z);
      for (double ti : t) {
        const double along = (bottom.z + w.z * ti - a.z) / e.z;
        if (along < -slack || along > 1.0 + slack) continue;
        const double qx = q0x + qvx * ti;
        const double qy = q0y + qvy * ti;
        x.add(ti, {qx, qy, -(qx * mx + qy * my)});
      }
    };
    const Vec3d down{0, 0, -height};
    for (const BrushTopology::Edge& e : topo.edges(brush)) {
      const Vec3d a = topo.vertex(e.a);
      const Vec3d d = topo.vertex(e.b) - a;
      if (e.copies & BrushTopology::kTopCopy) sheared(a, d);
      if ((e.copies & BrushTopology::kBottomCopy) && height > 0.0) sheared(a + down, d);
    }
    if (height > 0.0) {
      for (std::int32_t v = brush.vertices.first; v < brush.vertices.first + brush.vertices.count; ++v) {
        if (topo.vertical_below(v)) sheared(topo.vertex(v) + down, {0, 0, height});
      }
    }
  }
  return x.chord();
}

bool sphere_on_face(const BrushTopology& topo, const BrushTopology::Record& brush, int face, Vec3d centre,
                    double radius, double margin) {
  const std::span<const Planed> faces = topo.faces(brush);
  return in_polytope(faces, centre - faces[std::size_t(face)].normal * radius, -margin, face);
}

bool cylinder_on_face(const BrushTopology& topo, const BrushTopology::Record& brush, int face, Vec3d bottom,
                      double radius, double height, double margin) {
  const Vec3d n = topo.faces(brush)[std::size_t(face)].normal;
  const double flat = std::sqrt(n.x * n.x + n.y * n.y);
  if (flat <= kFlatSlope * std::abs(n.z)) {  // a top or bottom face: K's cap, the face grown by the radius
    return distance_2d(topo, topo.face_loop(brush.faces.first + face), bottom) <= radius - margin;
  }
  const Vec3d y = bottom - Vec3d{n.x * (radius / flat), n.y * (radius / flat), 0.0};
  return in_swept(topo, brush, height, y, -margin, face);
}

}  // namespace shiftcast
