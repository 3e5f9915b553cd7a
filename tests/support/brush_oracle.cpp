#include "tests/support/brush_oracle.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <utility>

#include "tests/support/brush_oracle_internal.hpp"

namespace shiftcast {
namespace {

using namespace oracle_internal;

// Plane triples whose normals span less volume than this are (nearly) parallel: skipped, since their
// meeting point is found from a better-conditioned triple or does not exist.
constexpr double kSingularTriple = 1e-12;
// Hull triangles with |cross| below this (units^2) are degenerate: their normal means nothing.
constexpr double kMinTriangleCross = 1e-9;
// Faces below this area (units^2) and polytopes below this volume (units^3) do not exist.
constexpr double kMinFaceArea = 1e-9;
constexpr double kMinVolume = 1e-9;
// Brushes are closed inside this box to detect unbounded plane sets (a vertex on the box = unbounded).
constexpr double kBoundingExtent = 1 << 20;

// Feature tests are inclusive by this much: a contact point may lie this far outside its face polygon,
// its edge's extent or its cap and still count, so rounding never opens a seam between features. It can
// only move a chord's ends by about this distance along the motion; whether the motion enters at all is
// decided by the strict static test at the chord's middle.
constexpr double kOnFeature = 1e-7;
// Motion with less than this squared length (units^2) across an edge or towards a vertex never enters it.
constexpr double kMinQuadraticA = 1e-24;
// The upright cylinder's grown brush: a face with |n_xy| below this is horizontal (handled by the caps);
// an edge rising less than this fraction of its length is horizontal (covered by faces and caps, which
// meet there up to r times this); vertices within kCapTolerance of the top (bottom) are in the cap.
constexpr double kHorizontalNormal = 1e-9;
constexpr double kHorizontalEdgeSlope = 1e-6;
constexpr double kCapTolerance = 1e-5;
// Golden-section steps for cylinder_gap: shrink a 2000-unit interval to 2000 x 0.618^90 ~ 3e-16.
constexpr int kGoldenSteps = 90;

struct Vec2d {
  double x = 0;
  double y = 0;
};

Vec2d operator-(Vec2d a, Vec2d b) {
  return {a.x - b.x, a.y - b.y};
}
double cross2(Vec2d a, Vec2d b) {
  return a.x * b.y - a.y * b.x;
}
double dot2(Vec2d a, Vec2d b) {
  return a.x * b.x + a.y * b.y;
}
Vec2d xy(Vec3d p) {
  return {p.x, p.y};
}

double segment_distance_2d(Vec2d q, Vec2d a, Vec2d b) {
  const Vec2d ab = b - a;
  const double len2 = dot2(ab, ab);
  double s = len2 > 0 ? dot2(q - a, ab) / len2 : 0.0;
  s = std::clamp(s, 0.0, 1.0);
  const Vec2d d{q.x - (a.x + ab.x * s), q.y - (a.y + ab.y * s)};
  return std::sqrt(dot2(d, d));
}

// Indices of the convex hull of `pts`, counter-clockwise, without collinear or repeated points (Andrew's
// monotone chain). May return fewer than 3 indices for degenerate input.
std::vector<int> convex_hull_2d(std::span<const Vec2d> pts) {
  std::vector<int> order(pts.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = int(i);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return pts[a].x < pts[b].x || (pts[a].x == pts[b].x && pts[a].y < pts[b].y);
  });
  if (order.size() < 3) {
    if (order.size() == 2 && pts[order[0]].x == pts[order[1]].x && pts[order[0]].y == pts[order[1]].y) {
      order.pop_back();
    }
    return order;
  }
  std::vector<int> hull(2 * order.size());
  std::size_t k = 0;
  for (int i : order) {
    while (k >= 2 && cross2(pts[hull[k - 1]] - pts[hull[k - 2]], pts[i] - pts[hull[k - 2]]) <= 0)
      --k;
    hull[k++] = i;
  }
  const std::size_t lower = k + 1;
  for (auto it = order.rbegin() + 1; it != order.rend(); ++it) {
    while (k >= lower && cross2(pts[hull[k - 1]] - pts[hull[k - 2]], pts[*it] - pts[hull[k - 2]]) <= 0)
      --k;
    hull[k++] = *it;
  }
  hull.resize(k - 1);
  return hull;
}

// Signed distance from q to a convex polygon given counter-clockwise (negative inside); also handles
// the degenerate polygons a slice or cap can be: a segment or a point. +inf for no points.
double signed_distance_2d(std::span<const Vec2d> loop, Vec2d q) {
  if (loop.empty()) return kInfinity;
  if (loop.size() == 1) return std::sqrt(dot2(q - loop[0], q - loop[0]));
  if (loop.size() == 2) return segment_distance_2d(q, loop[0], loop[1]);
  bool outside = false;
  double nearest_edge = kInfinity;
  double nearest_line = kInfinity;
  for (std::size_t i = 0; i < loop.size(); ++i) {
    const Vec2d a = loop[i];
    const Vec2d b = loop[(i + 1) % loop.size()];
    const Vec2d ab = b - a;
    const double c = cross2(ab, q - a);
    if (c < 0) outside = true;
    nearest_line = std::min(nearest_line, c / std::sqrt(dot2(ab, ab)));
    nearest_edge = std::min(nearest_edge, segment_distance_2d(q, a, b));
  }
  return outside ? nearest_edge : -nearest_line;
}

std::vector<Vec2d> hull_points_2d(std::span<const Vec2d> pts) {
  std::vector<Vec2d> out;
  for (int i : convex_hull_2d(pts))
    out.push_back(pts[std::size_t(i)]);
  return out;
}

// Any unit vector perpendicular to n, for a face's 2D coordinates.
Vec3d perpendicular(Vec3d n) {
  const Vec3d a = std::abs(n.x) < 0.6 ? Vec3d{1, 0, 0} : Vec3d{0, 1, 0};
  return normalize(cross(n, a));
}

int find_or_add_vertex(std::vector<Vec3d>& vertices, Vec3d p) {
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    if (length_squared(vertices[i] - p) <= kOracleOnPlane * kOracleOnPlane) return int(i);
  }
  vertices.push_back(p);
  return int(vertices.size()) - 1;
}

// Orders the vertices `on` (all on `plane`) into a face loop; nullopt if they span no area.
std::optional<OraclePolytope::Face> make_face(const Planed& plane, std::span<const Vec3d> vertices,
                                              std::span<const int> on) {
  if (on.size() < 3) return std::nullopt;
  const Vec3d u = perpendicular(plane.normal);
  const Vec3d v = cross(plane.normal, u);  // (u, v, n) right-handed: counter-clockwise seen from outside
  std::vector<Vec2d> pts;
  for (int i : on)
    pts.push_back({dot(vertices[std::size_t(i)], u), dot(vertices[std::size_t(i)], v)});
  const std::vector<int> hull = convex_hull_2d(pts);
  if (hull.size() < 3) return std::nullopt;
  double area2 = 0;
  for (std::size_t i = 0; i < hull.size(); ++i) {
    area2 += cross2(pts[std::size_t(hull[i])], pts[std::size_t(hull[(i + 1) % hull.size()])]);
  }
  if (0.5 * area2 < kMinFaceArea) return std::nullopt;
  OraclePolytope::Face face{plane, {}};
  for (int i : hull)
    face.loop.push_back(on[std::size_t(i)]);
  return face;
}

// Edges, bounds and volume from the faces; drops vertices no face uses.
void finish_polytope(OraclePolytope& poly) {
  std::vector<int> remap(poly.vertices.size(), -1);
  std::vector<Vec3d> used;
  for (auto& face : poly.faces) {
    for (int& i : face.loop) {
      if (remap[std::size_t(i)] < 0) {
        remap[std::size_t(i)] = int(used.size());
        used.push_back(poly.vertices[std::size_t(i)]);
      }
      i = remap[std::size_t(i)];
    }
  }
  poly.vertices = std::move(used);
  poly.edges.clear();
  for (const auto& face : poly.faces) {
    for (std::size_t i = 0; i < face.loop.size(); ++i) {
      const int a = face.loop[i];
      const int b = face.loop[(i + 1) % face.loop.size()];
      const std::array<int, 2> e{std::min(a, b), std::max(a, b)};
      if (std::find(poly.edges.begin(), poly.edges.end(), e) == poly.edges.end()) poly.edges.push_back(e);
    }
  }
  poly.bounds = {};
  Vec3d centroid{};
  for (Vec3d p : poly.vertices) {
    poly.bounds.grow(p);
    centroid += p;
  }
  if (!poly.vertices.empty()) centroid = centroid * (1.0 / double(poly.vertices.size()));
  // Sum of pyramids from the centroid over the faces.
  poly.volume = 0;
  for (const auto& face : poly.faces) {
    Vec3d area2{};
    for (std::size_t i = 0; i < face.loop.size(); ++i) {
      area2 += cross(poly.vertices[std::size_t(face.loop[i])],
                     poly.vertices[std::size_t(face.loop[(i + 1) % face.loop.size()])]);
    }
    poly.volume += 0.5 * dot(area2, face.plane.normal) * face.plane.distance(centroid) * (-1.0 / 3.0);
  }
}

double signed_distance(const OraclePolytope& poly, Vec3d p) {
  const double m = max_plane_distance(poly, p);
  return m < 0 ? m : outside_distance(poly, p);
}

// Strict: the sphere overlaps the open brush when its centre is closer than r (inside counts, so r = 0
// is the point test). The bounds and the plane distances are lower bounds on the distance: cheap outs.
bool sphere_overlaps_brush(const OraclePolytope& poly, double r, Vec3d c) {
  if (aabb_distance(poly.bounds, c) >= std::max(r, 0.0) + kCullMargin.x) return false;
  const double m = max_plane_distance(poly, c);
  return m < 0 || (m < r && outside_distance(poly, c) < r);
}

// Both roots of a t^2 + b t + c = 0, smaller first, computed without cancellation
// (q = -(b + sign(b) sqrt(disc)) / 2, roots q/a and c/q). A double root (tangency) counts: whether the
// motion enters is decided afterwards, for the whole grown brush.
std::optional<std::array<double, 2>> quadratic_roots(double a, double b, double c) {
  if (!(a > kMinQuadraticA)) return std::nullopt;
  const double disc = b * b - 4 * a * c;
  if (!(disc >= 0)) return std::nullopt;
  const double q = -0.5 * (b + std::copysign(std::sqrt(disc), b));
  if (q == 0) return std::array<double, 2>{0.0, 0.0};
  const double t0 = q / a;
  const double t1 = c / q;
  return std::array<double, 2>{std::min(t0, t1), std::max(t0, t1)};
}

// Where the infinite line p0 + t w meets one closed grown brush: from t_in to t_out, and the feature and
// normal where it comes in. Every feature test is inclusive, so the chord is never too short; whether the
// line meets the open interior (rather than sliding along the surface) is checked separately.
struct Chord {
  double t_in = kInfinity;
  double t_out = -kInfinity;
  Vec3d normal{};
  OracleFeature feature = OracleFeature::kNone;

  void enter(double t, Vec3d n, OracleFeature f) {
    if (t < t_in) {
      t_in = t;
      normal = n;
      feature = f;
    }
  }
  void leave(double t) { t_out = std::max(t_out, t); }
  // The motion (t in [0, 1]) reaches the chord, which is longer than a point.
  bool crosses_motion() const { return t_in < t_out && t_in < 1 && t_out > 0; }
};

// Necessary condition for reaching the closed grown brush: the motion must meet every plane pushed out
// by the shape's support `grow(n)`. Returns the earliest time that is possible, or nullopt.
template <typename Grow>
std::optional<double> shifted_plane_entry(std::span<const Planed> planes, Vec3d p0, Vec3d w, Grow grow) {
  double t0 = 0;
  double t1 = 1;
  for (const Planed& plane : planes) {
    const double dist = plane.distance(p0) - grow(plane.normal);
    const double denom = dot(plane.normal, w);
    if (denom == 0) {
      if (dist > 0) return std::nullopt;
      continue;
    }
    const double t = -dist / denom;
    if (denom < 0) {
      t0 = std::max(t0, t);
    } else {
      t1 = std::min(t1, t);
    }
    if (t0 > t1) return std::nullopt;
  }
  return t0;
}

// The chord of a sphere's centre line (c0 + t w) through the brush grown by the sphere: faces pushed
// out by r, edges grown to round cylinders, vertices to spheres (RTR 25.11.3).
Chord sphere_chord(const OraclePolytope& poly, double r, Vec3d c0, Vec3d w) {
  Chord chord;
  for (const auto& face : poly.faces) {
    const Vec3d n = face.plane.normal;
    const double denom = dot(n, w);
    if (denom == 0) continue;
    const double t = (face.plane.d + r - dot(n, c0)) / denom;
    if (!inside_face(poly, face, c0 + w * t - n * r, kOnFeature)) continue;
    if (denom < 0) {
      chord.enter(t, n, OracleFeature::kFace);
    } else {
      chord.leave(t);
    }
  }
  for (const auto& e : poly.edges) {
    const Vec3d a = poly.vertices[std::size_t(e[0])];
    const Vec3d b = poly.vertices[std::size_t(e[1])];
    const double len = length(b - a);
    const Vec3d axis = (b - a) * (1.0 / len);
    const Vec3d m = c0 - a;
    const Vec3d m_perp = m - axis * dot(m, axis);
    const Vec3d w_perp = w - axis * dot(w, axis);
    const auto roots =
        quadratic_roots(dot(w_perp, w_perp), 2 * dot(m_perp, w_perp), dot(m_perp, m_perp) - r * r);
    if (!roots) continue;
    for (int k = 0; k < 2; ++k) {
      const double t = (*roots)[k];
      const Vec3d c = c0 + w * t;
      const double s = dot(c - a, axis);
      if (s < -kOnFeature || s > len + kOnFeature) continue;
      if (k == 0) {
        chord.enter(t, normalize(c - (a + axis * s)), OracleFeature::kEdge);
      } else {
        chord.leave(t);
      }
    }
  }
  for (Vec3d v : poly.vertices) {
    const Vec3d m = c0 - v;
    const auto roots = quadratic_roots(dot(w, w), 2 * dot(m, w), dot(m, m) - r * r);
    if (!roots) continue;
    chord.enter((*roots)[0], normalize(c0 + w * (*roots)[0] - v), OracleFeature::kVertex);
    chord.leave((*roots)[1]);
  }
  return chord;
}

// Horizontal slice of a polytope at height z, in 2D: the points where its edges cross z (both ends of
// an edge lying in z). Empty outside the polytope's z range.
std::vector<Vec2d> slice_points(const OraclePolytope& poly, double z) {
  std::vector<Vec2d> pts;
  for (const auto& e : poly.edges) {
    const Vec3d a = poly.vertices[std::size_t(e[0])];
    const Vec3d b = poly.vertices[std::size_t(e[1])];
    if (std::min(a.z, b.z) > z || std::max(a.z, b.z) < z) continue;
    if (a.z == b.z) {
      pts.push_back(xy(a));
      pts.push_back(xy(b));
    } else {
      const double s = (z - a.z) / (b.z - a.z);
      pts.push_back({a.x + (b.x - a.x) * s, a.y + (b.y - a.y) * s});
    }
  }
  return hull_points_2d(pts);
}

// Distance from p to the closed interval [lo, hi].
double interval_distance(double p, double lo, double hi) {
  return std::max({0.0, lo - p, p - hi});
}

}  // namespace

bool OraclePolytope::empty() const {
  return !bounded || faces.size() < 4 || volume <= kMinVolume;
}

OraclePolytope make_oracle_polytope(std::span<const Planed> planes) {
  OraclePolytope poly;
  for (const Planed& p : planes) {
    const double len = length(p.normal);
    if (!(len > 0) || !std::isfinite(len) || !std::isfinite(p.d)) {
      poly.bounded = false;
      return poly;
    }
    poly.planes.push_back({p.normal * (1.0 / len), p.d / len});
  }
  std::vector<Planed> all = poly.planes;
  for (int axis = 0; axis < 3; ++axis) {
    Vec3d n{};
    n[axis] = 1;
    all.push_back({n, kBoundingExtent});
    all.push_back({-n, kBoundingExtent});
  }
  for (std::size_t i = 0; i < all.size(); ++i) {
    for (std::size_t j = i + 1; j < all.size(); ++j) {
      for (std::size_t k = j + 1; k < all.size(); ++k) {
        const Vec3d jk = cross(all[j].normal, all[k].normal);
        const double det = dot(all[i].normal, jk);
        if (std::abs(det) < kSingularTriple) continue;
        const Vec3d p = (jk * all[i].d + cross(all[k].normal, all[i].normal) * all[j].d +
                         cross(all[i].normal, all[j].normal) * all[k].d) *
                        (1.0 / det);
        const bool inside = std::all_of(all.begin(), all.end(),
                                        [&](const Planed& q) { return q.distance(p) <= kOracleOnPlane; });
        if (inside) find_or_add_vertex(poly.vertices, p);
      }
    }
  }
  for (Vec3d v : poly.vertices) {
    if (std::max({std::abs(v.x), std::abs(v.y), std::abs(v.z)}) >= kBoundingExtent - kOracleOnPlane) {
      poly.bounded = false;
      poly.vertices.clear();
      return poly;
    }
  }
  std::vector<std::vector<int>> seen;  // sorted loops, to drop duplicate planes' repeated faces
  for (const Planed& plane : poly.planes) {
    std::vector<int> on;
    for (std::size_t v = 0; v < poly.vertices.size(); ++v) {
      if (std::abs(plane.distance(poly.vertices[v])) <= kOracleOnPlane) on.push_back(int(v));
    }
    auto face = make_face(plane, poly.vertices, on);
    if (!face) continue;
    std::vector<int> key = face->loop;
    std::sort(key.begin(), key.end());
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
    seen.push_back(std::move(key));
    poly.faces.push_back(std::move(*face));
  }
  finish_polytope(poly);
  return poly;
}

OraclePolytope make_oracle_hull(std::span<const Vec3d> points) {
  OraclePolytope poly;
  for (Vec3d p : points)
    find_or_add_vertex(poly.vertices, p);
  const auto& pts = poly.vertices;
  // Candidate faces keyed by the set of points on them; each keeps the plane of its best-conditioned
  // (largest) triangle.
  std::map<std::vector<int>, std::pair<Planed, double>> candidates;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    for (std::size_t j = i + 1; j < pts.size(); ++j) {
      for (std::size_t k = j + 1; k < pts.size(); ++k) {
        const Vec3d c = cross(pts[j] - pts[i], pts[k] - pts[i]);
        const double area = length(c);
        if (area < kMinTriangleCross) continue;
        Planed plane{c * (1.0 / area), 0};
        plane.d = dot(plane.normal, pts[i]);
        double lo = kInfinity;
        double hi = -kInfinity;
        for (Vec3d p : pts) {
          const double d = plane.distance(p);
          lo = std::min(lo, d);
          hi = std::max(hi, d);
        }
        if (hi > kOracleOnPlane) {
          if (lo < -kOracleOnPlane) continue;  // points on both sides: not a supporting plane
          plane = plane.flipped();
        }
        std::vector<int> on;
        for (std::size_t v = 0; v < pts.size(); ++v) {
          if (std::abs(plane.distance(pts[v])) <= kOracleOnPlane) on.push_back(int(v));
        }
        auto [it, inserted] = candidates.try_emplace(std::move(on), plane, area);
        if (!inserted && area > it->second.second) it->second = {plane, area};
      }
    }
  }
  for (const auto& [on, plane_area] : candidates) {
    auto face = make_face(plane_area.first, pts, on);
    if (face) poly.faces.push_back(std::move(*face));
  }
  finish_polytope(poly);
  return poly;
}

// The upright cylinder of radius r and height h with reference point p overlaps brush B exactly when p is
// in the open set M = E + D_r, where E = hull(B, B - h z) and D_r is the horizontal disk of radius r.
struct BrushOracle::CylinderHull {
  OraclePolytope hull;              // E
  std::vector<Planed> face_planes;  // of E, for the shifted-plane cull
  std::vector<Vec2d> top;           // E's highest face, edge or vertex, in xy (counter-clockwise)
  std::vector<Vec2d> bottom;
};

struct BrushOracle::CylinderCache {
  std::mutex mutex;
  std::map<double, std::vector<std::unique_ptr<CylinderHull>>> by_height;
};

BrushOracle::BrushOracle(std::span<const Brush> brushes)
    : cache_(std::make_unique<CylinderCache>()), hull_cache_(make_hull_cache()) {
  for (const Brush& b : brushes) {
    std::vector<Planed> planes;
    for (const Plane& p : b.planes)
      planes.push_back(to_double(p));
    polytopes_.push_back(make_oracle_polytope(planes));
    stored_planes_.push_back(std::move(planes));
  }
}

BrushOracle::~BrushOracle() = default;
BrushOracle::BrushOracle(BrushOracle&&) noexcept = default;
BrushOracle& BrushOracle::operator=(BrushOracle&&) noexcept = default;

const BrushOracle::CylinderHull& BrushOracle::cylinder_hull(std::size_t brush, double height) const {
  std::lock_guard lock(cache_->mutex);
  auto& per_brush = cache_->by_height[height];
  if (per_brush.empty()) per_brush.resize(polytopes_.size());
  auto& slot = per_brush[brush];
  if (!slot) {
    const OraclePolytope& poly = polytopes_[brush];
    std::vector<Vec3d> pts = poly.vertices;
    for (Vec3d v : poly.vertices)
      pts.push_back(v - Vec3d{0, 0, height});
    slot = std::make_unique<CylinderHull>();
    slot->hull = make_oracle_hull(pts);
    for (const auto& f : slot->hull.faces)
      slot->face_planes.push_back(f.plane);
    std::vector<Vec2d> top;
    std::vector<Vec2d> bottom;
    for (Vec3d v : slot->hull.vertices) {
      if (v.z >= slot->hull.bounds.max.z - kCapTolerance) top.push_back(xy(v));
      if (v.z <= slot->hull.bounds.min.z + kCapTolerance) bottom.push_back(xy(v));
    }
    slot->top = hull_points_2d(top);
    slot->bottom = hull_points_2d(bottom);
  }
  return *slot;
}

std::int32_t BrushOracle::point_brush(Vec3d p) const {
  for (std::int32_t i = 0; i < brush_count(); ++i) {
    if (contains(i, p)) return i;
  }
  return -1;
}

bool BrushOracle::contains(std::int32_t brush, Vec3d p) const {
  return point_overlaps_brush(std::size_t(brush), p, 0);
}

bool BrushOracle::point_overlaps_brush(std::size_t brush, Vec3d p, double erode) const {
  const OraclePolytope& poly = polytopes_[brush];
  if (poly.empty() || !grown(poly.bounds, kCullMargin).contains(p)) return false;
  for (const Planed& plane : stored_planes_[brush]) {
    if (!(plane.distance(p) < -erode)) return false;
  }
  return true;
}

double BrushOracle::distance_to_surface(Vec3d p) const {
  double best = kInfinity;
  for (const OraclePolytope& poly : polytopes_) {
    if (poly.empty() || aabb_distance(poly.bounds, p) >= best) continue;
    best = std::min(best, std::abs(signed_distance(poly, p)));
  }
  return best;
}

OracleHit BrushOracle::raycast(Vec3d from, Vec3d to) const {
  return raycast_eroded(from, to, 0);
}

OracleHit BrushOracle::raycast_eroded(Vec3d from, Vec3d to, double erode) const {
  for (std::int32_t id = 0; id < brush_count(); ++id) {
    if (point_overlaps_brush(std::size_t(id), from, erode)) return start_solid_hit(id);
  }
  const Vec3d w = to - from;
  FirstContact first;
  for (std::int32_t id = 0; id < brush_count(); ++id) {
    const OraclePolytope& poly = polytopes_[std::size_t(id)];
    if (poly.empty() || !segment_meets_box(from, w, grown(poly.bounds, kCullMargin))) continue;
    const PlaneClip clip = clip_by_planes(poly.planes, from, w, erode);
    // A start on the surface (t_in = 0) moving in enters at 0; t_in < 0 can only come from the stored and
    // normalised planes disagreeing about a start on the surface.
    const double t0 = std::max(clip.t_in, 0.0);
    if (clip.miss || clip.entering == nullptr || !(t0 < clip.t_out) || t0 > first.bound()) continue;
    first.add(id, {t0, clip.entering->normal, OracleFeature::kFace});
  }
  return first.result();
}

OracleHit BrushOracle::sweep_sphere(double radius, Vec3d centre_from, Vec3d centre_to) const {
  const std::int32_t start = sphere_overlaps(radius, centre_from);
  if (start >= 0) return start_solid_hit(start);
  const Vec3d w = centre_to - centre_from;
  const Vec3d grow_by = kCullMargin + Vec3d{radius, radius, radius};
  FirstContact first;
  for (std::int32_t id = 0; id < brush_count(); ++id) {
    const OraclePolytope& poly = polytopes_[std::size_t(id)];
    if (poly.empty() || !segment_meets_box(centre_from, w, grown(poly.bounds, grow_by))) continue;
    const auto lower = shifted_plane_entry(poly.planes, centre_from, w, [&](Vec3d) { return radius; });
    if (!lower || *lower > first.bound()) continue;
    const Chord chord = sphere_chord(poly, radius, centre_from, w);
    if (!chord.crosses_motion() || chord.t_in > first.bound()) continue;
    // Inside the chord of a convex set either every point is interior or none is (sliding along it).
    if (!sphere_overlaps_brush(poly, radius, centre_from + w * (0.5 * (chord.t_in + chord.t_out)))) continue;
    first.add(id, {std::max(chord.t_in, 0.0), chord.normal, chord.feature});
  }
  return first.result();
}

OracleHit BrushOracle::sweep_cylinder(double radius, double height, Vec3d ref_from, Vec3d ref_to) const {
  const std::int32_t start = cylinder_overlaps(radius, height, ref_from);
  if (start >= 0) return start_solid_hit(start);
  const Vec3d w = ref_to - ref_from;
  FirstContact first;
  for (std::int32_t id = 0; id < brush_count(); ++id) {
    const OraclePolytope& poly = polytopes_[std::size_t(id)];
    if (poly.empty()) continue;
    Aabbd reach = grown(poly.bounds, kCullMargin);  // of M = E + D_r
    reach.min = reach.min - Vec3d{radius, radius, height};
    reach.max = reach.max + Vec3d{radius, radius, 0};
    if (!segment_meets_box(ref_from, w, reach)) continue;
    const CylinderHull& ch = cylinder_hull(std::size_t(id), height);
    const OraclePolytope& e = ch.hull;
    const auto lower = shifted_plane_entry(
        ch.face_planes, ref_from, w, [&](Vec3d n) { return radius * std::sqrt(n.x * n.x + n.y * n.y); });
    if (!lower || *lower > first.bound()) continue;

    Chord chord;
    // Faces of E translated by the disk's support point r n_xy / |n_xy|.
    for (const auto& f : e.faces) {
      const Vec3d n = f.plane.normal;
      const double s = std::sqrt(n.x * n.x + n.y * n.y);
      const double denom = dot(n, w);
      if (s <= kHorizontalNormal || denom == 0) continue;
      const double t = (f.plane.d + radius * s - dot(n, ref_from)) / denom;
      const Vec3d support{radius * n.x / s, radius * n.y / s, 0};
      if (!inside_face(e, f, ref_from + w * t - support, kOnFeature)) continue;
      if (denom < 0) {
        chord.enter(t, n, OracleFeature::kFace);
      } else {
        chord.leave(t);
      }
    }
    // Non-horizontal edges of E swept around by the disk's rim: |p_xy - q_xy(p_z)| = r, q on the edge.
    for (const auto& edge : e.edges) {
      Vec3d a = e.vertices[std::size_t(edge[0])];
      Vec3d b = e.vertices[std::size_t(edge[1])];
      if (a.z > b.z) std::swap(a, b);
      const double rise = b.z - a.z;
      if (rise <= kHorizontalEdgeSlope * length(b - a)) continue;
      const Vec2d k{(b.x - a.x) / rise, (b.y - a.y) / rise};  // d q_xy / dz
      const Vec2d g0{ref_from.x - a.x - (ref_from.z - a.z) * k.x,
                     ref_from.y - a.y - (ref_from.z - a.z) * k.y};
      const Vec2d g1{w.x - w.z * k.x, w.y - w.z * k.y};
      const auto roots = quadratic_roots(dot2(g1, g1), 2 * dot2(g0, g1), dot2(g0, g0) - radius * radius);
      if (!roots) continue;
      for (int i = 0; i < 2; ++i) {
        const double t = (*roots)[i];
        const double z = ref_from.z + w.z * t;
        if (z < a.z - kOnFeature || z > b.z + kOnFeature) continue;
        if (i == 0) {
          const Vec2d g{g0.x + g1.x * t, g0.y + g1.y * t};
          chord.enter(t, normalize(Vec3d{g.x, g.y, -dot2(g, k)}), OracleFeature::kEdge);
        } else {
          chord.leave(t);
        }
      }
    }
    // The top and bottom: E's highest (lowest) face, edge or vertex grown by the disk.
    if (w.z != 0) {
      for (const bool top : {true, false}) {
        const double t = ((top ? e.bounds.max.z : e.bounds.min.z) - ref_from.z) / w.z;
        const Vec2d at{ref_from.x + w.x * t, ref_from.y + w.y * t};
        if (!(signed_distance_2d(top ? ch.top : ch.bottom, at) <= radius + kOnFeature)) continue;
        if ((w.z < 0) == top) {
          chord.enter(t, Vec3d{0, 0, top ? 1.0 : -1.0}, OracleFeature::kCap);
        } else {
          chord.leave(t);
        }
      }
    }
    if (!chord.crosses_motion() || chord.t_in > first.bound()) continue;
    // Inside the chord of a convex set either every point is interior or none is (sliding along it).
    const Vec3d mid = ref_from + w * (0.5 * (chord.t_in + chord.t_out));
    if (!cylinder_overlaps_brush(std::size_t(id), radius, height, mid)) continue;
    first.add(id, {std::max(chord.t_in, 0.0), chord.normal, chord.feature});
  }
  return first.result();
}

std::int32_t BrushOracle::sphere_overlaps(double radius, Vec3d centre) const {
  for (std::int32_t id = 0; id < brush_count(); ++id) {
    const OraclePolytope& poly = polytopes_[std::size_t(id)];
    if (!poly.empty() && sphere_overlaps_brush(poly, radius, centre)) return id;
  }
  return -1;
}

std::int32_t BrushOracle::cylinder_overlaps(double radius, double height, Vec3d ref) const {
  for (std::int32_t id = 0; id < brush_count(); ++id) {
    if (cylinder_overlaps_brush(std::size_t(id), radius, height, ref)) return id;
  }
  return -1;
}

bool BrushOracle::cylinder_overlaps_brush(std::size_t brush, double radius, double height, Vec3d ref) const {
  const OraclePolytope& poly = polytopes_[brush];
  if (poly.empty()) return false;
  // Open brush against the closed cylinder: separated bounds rule out overlap.
  const Aabbd b = grown(poly.bounds, kCullMargin);
  if (ref.z >= b.max.z || ref.z + height <= b.min.z) return false;
  if (ref.x - radius >= b.max.x || ref.x + radius <= b.min.x) return false;
  if (ref.y - radius >= b.max.y || ref.y + radius <= b.min.y) return false;
  // p is in the open M = E + D_r exactly when it is strictly between E's bottom and top and strictly
  // within r of E's slice at its height (the slice of M is the slice of E grown by the disk).
  const CylinderHull& ch = cylinder_hull(brush, height);
  if (!(ref.z > ch.hull.bounds.min.z && ref.z < ch.hull.bounds.max.z)) return false;
  return signed_distance_2d(slice_points(ch.hull, ref.z), xy(ref)) < radius;
}

double BrushOracle::sphere_gap(double radius, Vec3d centre) const {
  double best = kInfinity;  // of distance to a brush
  for (const OraclePolytope& poly : polytopes_) {
    if (poly.empty() || aabb_distance(poly.bounds, centre) >= best) continue;
    const double m = max_plane_distance(poly, centre);
    best = std::min(best, m < 0 ? 0.0 : outside_distance(poly, centre));
  }
  return std::max(0.0, best - radius);
}

double BrushOracle::cylinder_gap(double radius, double height, Vec3d ref) const {
  double best = kInfinity;
  for (const OraclePolytope& poly : polytopes_) {
    if (poly.empty()) continue;
    const double zlo = poly.bounds.min.z;
    const double zhi = poly.bounds.max.z;
    // Lower bound from the bounds: the gap is at least the vertical and the horizontal separations.
    const double dx = interval_distance(ref.x, poly.bounds.min.x, poly.bounds.max.x);
    const double dy = interval_distance(ref.y, poly.bounds.min.y, poly.bounds.max.y);
    const double dz = std::max({0.0, zlo - (ref.z + height), ref.z - zhi});
    if (std::max(std::sqrt(dx * dx + dy * dy) - radius, dz) >= best) continue;
    // gap = min over heights z of the brush of max(horizontal distance to its slice - r, distance from z
    // to the cylinder's z range): both terms are convex in z, so golden-section search finds it.
    const auto f = [&](double z) {
      const double horizontal = std::max(0.0, signed_distance_2d(slice_points(poly, z), xy(ref)));
      return std::max(horizontal - radius, interval_distance(z, ref.z, ref.z + height));
    };
    constexpr double kInvPhi = 0.6180339887498949;
    double lo = zlo;
    double hi = zhi;
    double m1 = hi - kInvPhi * (hi - lo);
    double m2 = lo + kInvPhi * (hi - lo);
    double f1 = f(m1);
    double f2 = f(m2);
    for (int step = 0; step < kGoldenSteps && hi - lo > 0; ++step) {
      if (f1 <= f2) {
        hi = m2;
        m2 = m1;
        f2 = f1;
        m1 = hi - kInvPhi * (hi - lo);
        f1 = f(m1);
      } else {
        lo = m1;
        m1 = m2;
        f1 = f2;
        m2 = lo + kInvPhi * (hi - lo);
        f2 = f(m2);
      }
    }
    best = std::min({best, f1, f2, f(zlo), f(zhi)});
  }
  return std::max(0.0, best);
}

namespace {

// A round shape's sizes after growing by `grow`; refused when that leaves a negative size.
double grown_size(double size, double grow) {
  const double out = size + grow;
  if (!(out >= 0)) throw std::invalid_argument("BrushOracle: the shape shrinks below zero size");
  return out;
}

// The vertices of a box or hull shape, grown: each face moved out along its normal by `grow`.
std::vector<Vec3d> polytope_vertices(const Shape& shape, double grow) {
  if (shape.kind == ShapeKind::kBox) return box_vertices(shape, grow);
  std::vector<Vec3d> vertices;
  for (Vec3 v : shape.hull_vertices)
    vertices.push_back(to_double(v));
  return vertices;
}

}  // namespace

// Every kind lands on one of the exact queries above with the grown sizes; hulls are grown in
// hull_shape(), so their vertices go in as given.
OracleHit BrushOracle::sweep(const Shape& shape, Vec3d from, Vec3d to, double grow) const {
  const Vec3d o = to_double(shape.offset);
  switch (shape.kind) {
    case ShapeKind::kPoint:
      if (grow > 0) return sweep_sphere(grow, from, to);
      return raycast_eroded(from, to, -grow);
    case ShapeKind::kSphere:
      return sweep_sphere(grown_size(shape.radius, grow), from + o, to + o);
    case ShapeKind::kCylinder: {
      const Vec3d feet = o - Vec3d{0, 0, grow};
      return sweep_cylinder(grown_size(shape.radius, grow), grown_size(shape.height, 2 * grow), from + feet,
                            to + feet);
    }
    case ShapeKind::kBox:
      return sweep_hull_shape(*hull_shape(box_vertices(shape, grow), 0), from, to);
    case ShapeKind::kHull:
      return sweep_hull_shape(*hull_shape(polytope_vertices(shape, 0), grow), from, to);
  }
  throw std::invalid_argument("BrushOracle::sweep: unknown shape kind");
}

std::int32_t BrushOracle::overlaps(const Shape& shape, Vec3d p, double grow) const {
  if (shape.kind == ShapeKind::kBox || shape.kind == ShapeKind::kHull) {
    const auto hull = shape.kind == ShapeKind::kBox ? hull_shape(box_vertices(shape, grow), 0)
                                                    : hull_shape(polytope_vertices(shape, 0), grow);
    for (std::int32_t id = 0; id < brush_count(); ++id) {
      if (hull_overlaps_brush(*hull, std::size_t(id), p)) return id;
    }
    return -1;
  }
  for (std::int32_t id = 0; id < brush_count(); ++id) {
    if (overlaps_brush(id, shape, p, grow)) return id;
  }
  return -1;
}

bool BrushOracle::overlaps_brush(std::int32_t brush, const Shape& shape, Vec3d p, double grow) const {
  const std::size_t b = std::size_t(brush);
  const Vec3d o = to_double(shape.offset);
  switch (shape.kind) {
    case ShapeKind::kPoint:
      if (grow > 0) return !polytopes_[b].empty() && sphere_overlaps_brush(polytopes_[b], grow, p);
      return point_overlaps_brush(b, p, -grow);
    case ShapeKind::kSphere:
      return !polytopes_[b].empty() &&
             sphere_overlaps_brush(polytopes_[b], grown_size(shape.radius, grow), p + o);
    case ShapeKind::kCylinder:
      return cylinder_overlaps_brush(b, grown_size(shape.radius, grow), grown_size(shape.height, 2 * grow),
                                     p + o - Vec3d{0, 0, grow});
    case ShapeKind::kBox:
      return hull_overlaps_brush(*hull_shape(box_vertices(shape, grow), 0), b, p);
    case ShapeKind::kHull:
      return hull_overlaps_brush(*hull_shape(polytope_vertices(shape, 0), grow), b, p);
  }
  throw std::invalid_argument("BrushOracle::overlaps_brush: unknown shape kind");
}

double BrushOracle::gap(const Shape& shape, Vec3d p) const {
  const Vec3d o = to_double(shape.offset);
  switch (shape.kind) {
    case ShapeKind::kPoint:
      return sphere_gap(0.0, p);
    case ShapeKind::kSphere:
      return sphere_gap(shape.radius, p + o);
    case ShapeKind::kCylinder:
      return cylinder_gap(shape.radius, shape.height, p + o);
    case ShapeKind::kBox:
    case ShapeKind::kHull:
      return hull_gap(polytope_vertices(shape, 0), p);
  }
  throw std::invalid_argument("BrushOracle::gap: unknown shape kind");
}

// h_B(n) + h_S(-n), each support in closed form: the brush's over its vertices, the shape's by kind.
double BrushOracle::obstacle_support(std::int32_t brush, const Shape& shape, Vec3d n) const {
  double brush_support = -kInfinity;
  for (Vec3d v : polytopes_[std::size_t(brush)].vertices)
    brush_support = std::max(brush_support, dot(n, v));
  // Max over shape points s of -n·s. Points and hulls ignore the offset, as in collision/shape.hpp.
  double shape_support = -dot(n, to_double(shape.offset));
  switch (shape.kind) {
    case ShapeKind::kPoint:
      shape_support = 0;
      break;
    case ShapeKind::kSphere:
      shape_support += double(shape.radius) * length(n);
      break;
    case ShapeKind::kCylinder:
      shape_support += double(shape.radius) * std::sqrt(n.x * n.x + n.y * n.y) +
                       std::max(0.0, -n.z) * double(shape.height);
      break;
    case ShapeKind::kBox:
      shape_support += std::abs(n.x) * shape.half_extents.x + std::abs(n.y) * shape.half_extents.y +
                       std::abs(n.z) * shape.half_extents.z;
      break;
    case ShapeKind::kHull:
      shape_support = -kInfinity;
      for (Vec3 v : shape.hull_vertices)
        shape_support = std::max(shape_support, -dot(n, to_double(v)));
      break;
  }
  return brush_support + shape_support;
}

}  // namespace shiftcast
