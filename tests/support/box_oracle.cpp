// Boxes and hulls against the brushes, for BrushOracle (brush_oracle.hpp). A convex polytope shape K
// (vertices relative to the reference point) at p meets the open brush B exactly when p is inside the
// open configuration obstacle M = B ⊕ (−K). Rather than building M's boundary, the oracle describes M by
// supporting planes: every facet of a Minkowski sum of two polytopes is parallel to a facet of one of
// them or to an edge of each, so the planes with normals from B's faces, −K's faces and every cross
// product of a B edge with a K edge (both signs), each placed at M's support h_M(n) = h_B(n) + h_K(−n),
// cut out M exactly (the planes that are not facets only touch it). Overlap is the strict test against
// all of them; a sweep is Cyrus-Beck along the reference point's path, and the plane it enters through
// is a facet of M, whose normal is the contact normal. The gap is computed separately, feature by
// feature between K and B, so the tests can check one construction against the other.
#include <algorithm>
#include <list>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

#include "tests/support/brush_oracle.hpp"
#include "tests/support/brush_oracle_internal.hpp"

namespace shiftcast {
namespace {

using namespace oracle_internal;

// Unit edge directions whose cross product is shorter than this are parallel: one direction, and no
// separating axis between them.
constexpr double kParallelEdges = 1e-9;

double support(std::span<const Vec3d> points, Vec3d n) {
  double best = -kInfinity;
  for (Vec3d p : points)
    best = std::max(best, dot(n, p));
  return best;
}

// A polytope's edge directions, unit, one per direction whichever way the edges run.
std::vector<Vec3d> edge_directions(const OraclePolytope& poly) {
  std::vector<Vec3d> out;
  for (const auto& e : poly.edges) {
    const Vec3d d = normalize(poly.vertices[std::size_t(e[1])] - poly.vertices[std::size_t(e[0])]);
    const bool known =
        std::any_of(out.begin(), out.end(), [&](Vec3d o) { return length(cross(o, d)) < kParallelEdges; });
    if (!known) out.push_back(d);
  }
  return out;
}

// Distance between the segments p1q1 and p2q2 (Ericson, Real-Time Collision Detection 5.1.9), with
// degenerate segments handled as points.
double segment_segment_distance(Vec3d p1, Vec3d q1, Vec3d p2, Vec3d q2) {
  const Vec3d d1 = q1 - p1;
  const Vec3d d2 = q2 - p2;
  const Vec3d r = p1 - p2;
  const double a = dot(d1, d1);
  const double e = dot(d2, d2);
  const double f = dot(d2, r);
  double s = 0;
  double t = 0;
  if (a <= 0 && e <= 0) return length(r);
  if (a <= 0) {
    t = std::clamp(f / e, 0.0, 1.0);
  } else {
    const double c = dot(d1, r);
    if (e <= 0) {
      s = std::clamp(-c / a, 0.0, 1.0);
    } else {
      const double b = dot(d1, d2);
      const double denom = a * e - b * b;
      s = denom > 0 ? std::clamp((b * f - c * e) / denom, 0.0, 1.0) : 0.0;
      t = (b * s + f) / e;
      if (t < 0) {
        t = 0;
        s = std::clamp(-c / a, 0.0, 1.0);
      } else if (t > 1) {
        t = 1;
        s = std::clamp((b - c) / a, 0.0, 1.0);
      }
    }
  }
  return length((p1 + d1 * s) - (p2 + d2 * t));
}

// Nearest distance from points to the faces of `poly` they project into, for points in front of the
// face; a point touching a face may be a rounding error behind it (the polytopes do not overlap).
double vertex_face_distance(std::span<const Vec3d> points, Vec3d shift, const OraclePolytope& poly,
                            double best) {
  for (Vec3d v : points) {
    const Vec3d x = v + shift;
    for (const auto& face : poly.faces) {
      const double d = face.plane.distance(x);
      if (d >= -kOracleOnPlane && d < best && inside_face(poly, face, x - face.plane.normal * d, 0.0)) {
        best = std::max(d, 0.0);
      }
    }
  }
  return best;
}

// Distance between the polytopes k + p and b, which do not overlap: the nearest points of two disjoint
// convex polytopes are a vertex and a face point or two edge points, and every pair is tried.
double polytope_distance(const OraclePolytope& k, Vec3d p, const OraclePolytope& b) {
  double best = vertex_face_distance(k.vertices, p, b, kInfinity);
  best = vertex_face_distance(b.vertices, -p, k, best);
  for (const auto& ek : k.edges) {
    const Vec3d a0 = k.vertices[std::size_t(ek[0])] + p;
    const Vec3d a1 = k.vertices[std::size_t(ek[1])] + p;
    for (const auto& eb : b.edges) {
      best = std::min(best, segment_segment_distance(a0, a1, b.vertices[std::size_t(eb[0])],
                                                     b.vertices[std::size_t(eb[1])]));
    }
  }
  return best;
}

double box_distance(const Aabbd& a, const Aabbd& b) {
  return length(max(max(a.min - b.max, b.min - a.max), Vec3d{}));
}

}  // namespace

std::vector<Vec3d> box_vertices(const Shape& box, double grow) {
  const Vec3d h = to_double(box.half_extents) + Vec3d{grow, grow, grow};
  if (!(h.x >= 0 && h.y >= 0 && h.z >= 0)) {
    throw std::invalid_argument("box_vertices: the box shrinks below zero size");
  }
  const Vec3d c = to_double(box.offset);
  std::vector<Vec3d> out;
  for (int i = 0; i < 8; ++i)
    out.push_back(c + Vec3d{i & 1 ? h.x : -h.x, i & 2 ? h.y : -h.y, i & 4 ? h.z : -h.z});
  return out;
}

// One polytope shape as queries use it, with the obstacle planes per brush built on first use.
struct BrushOracle::HullShape {
  std::vector<Vec3d> given;  // the vertices as given, and the growth: the cache key
  double grow = 0;
  OraclePolytope polytope;  // the hull of the given vertices with its faces moved out by `grow`
  std::vector<Vec3d> edge_directions;
  // Per brush, the supporting planes of B ⊕ (−K) and their bounds; guarded by HullCache::mutex.
  mutable std::vector<std::unique_ptr<const std::vector<Planed>>> obstacles;
};

class BrushOracle::HullCache {
 public:
  std::mutex mutex;
  std::list<std::shared_ptr<const HullShape>> recent;  // most recently used first
};

void BrushOracle::HullCacheDeleter::operator()(HullCache* cache) const {
  delete cache;
}

std::unique_ptr<BrushOracle::HullCache, BrushOracle::HullCacheDeleter> BrushOracle::make_hull_cache() {
  return std::unique_ptr<HullCache, HullCacheDeleter>(new HullCache);
}

std::shared_ptr<const BrushOracle::HullShape> BrushOracle::hull_shape(std::span<const Vec3d> vertices,
                                                                      double grow) const {
  std::lock_guard lock(hull_cache_->mutex);
  auto& recent = hull_cache_->recent;
  for (auto it = recent.begin(); it != recent.end(); ++it) {
    if ((*it)->grow == grow &&
        std::equal(vertices.begin(), vertices.end(), (*it)->given.begin(), (*it)->given.end())) {
      recent.splice(recent.begin(), recent, it);
      return recent.front();
    }
  }
  auto shape = std::make_shared<HullShape>();
  shape->given.assign(vertices.begin(), vertices.end());
  shape->grow = grow;
  shape->polytope = make_oracle_hull(vertices);
  if (grow != 0) {
    std::vector<Planed> moved;
    for (const auto& face : shape->polytope.faces)
      moved.push_back({face.plane.normal, face.plane.d + grow});
    shape->polytope = make_oracle_polytope(moved);
  }
  if (shape->polytope.faces.size() < 4) {
    throw std::invalid_argument("BrushOracle: a hull shape needs volume (four vertices not in one plane)");
  }
  shape->edge_directions = edge_directions(shape->polytope);
  shape->obstacles.resize(polytopes_.size());
  recent.push_front(std::move(shape));
  if (recent.size() > kOracleHullShapes) recent.pop_back();
  return recent.front();
}

const std::vector<Planed>& BrushOracle::obstacle_planes(const HullShape& shape, std::size_t brush) const {
  std::lock_guard lock(hull_cache_->mutex);
  auto& slot = shape.obstacles[brush];
  if (!slot) {
    const OraclePolytope& b = polytopes_[brush];
    const OraclePolytope& k = shape.polytope;
    std::vector<Vec3d> normals;
    for (const auto& face : b.faces)
      normals.push_back(face.plane.normal);
    for (const auto& face : k.faces)
      normals.push_back(-face.plane.normal);
    for (Vec3d eb : edge_directions(b)) {
      for (Vec3d ek : shape.edge_directions) {
        const Vec3d c = cross(eb, ek);
        const double len = length(c);
        if (len < kParallelEdges) continue;
        normals.push_back(c * (1.0 / len));
        normals.push_back(c * (-1.0 / len));
      }
    }
    auto planes = std::make_unique<std::vector<Planed>>();
    for (Vec3d n : normals)
      planes->push_back({n, support(b.vertices, n) + support(k.vertices, -n)});
    slot = std::move(planes);
  }
  return *slot;
}

bool BrushOracle::hull_overlaps_brush(const HullShape& shape, std::size_t brush, Vec3d p) const {
  const OraclePolytope& b = polytopes_[brush];
  if (b.empty()) return false;
  const Aabbd reach{b.bounds.min - shape.polytope.bounds.max, b.bounds.max - shape.polytope.bounds.min};
  if (!grown(reach, kCullMargin).contains(p)) return false;
  for (const Planed& plane : obstacle_planes(shape, brush)) {
    if (!(plane.distance(p) < 0)) return false;
  }
  return true;
}

OracleHit BrushOracle::sweep_hull_shape(const HullShape& shape, Vec3d from, Vec3d to) const {
  for (std::int32_t id = 0; id < brush_count(); ++id) {
    if (hull_overlaps_brush(shape, std::size_t(id), from)) return start_solid_hit(id);
  }
  const Vec3d w = to - from;
  FirstContact first;
  for (std::int32_t id = 0; id < brush_count(); ++id) {
    const OraclePolytope& b = polytopes_[std::size_t(id)];
    if (b.empty()) continue;
    const Aabbd reach{b.bounds.min - shape.polytope.bounds.max, b.bounds.max - shape.polytope.bounds.min};
    if (!segment_meets_box(from, w, grown(reach, kCullMargin))) continue;
    const PlaneClip clip = clip_by_planes(obstacle_planes(shape, std::size_t(id)), from, w, 0);
    // Entering at t_in < 0 only happens for a start touching M (the strict start test passed).
    const double t0 = std::max(clip.t_in, 0.0);
    if (clip.miss || clip.entering == nullptr || !(t0 < clip.t_out) || t0 > first.bound()) continue;
    first.add(id, {t0, clip.entering->normal, OracleFeature::kFace});
  }
  return first.result();
}

OracleHit BrushOracle::sweep_hull(std::span<const Vec3d> vertices, Vec3d from, Vec3d to) const {
  return sweep_hull_shape(*hull_shape(vertices, 0), from, to);
}

std::int32_t BrushOracle::hull_overlaps(std::span<const Vec3d> vertices, Vec3d p) const {
  const auto shape = hull_shape(vertices, 0);
  for (std::int32_t id = 0; id < brush_count(); ++id) {
    if (hull_overlaps_brush(*shape, std::size_t(id), p)) return id;
  }
  return -1;
}

double BrushOracle::hull_gap(std::span<const Vec3d> vertices, Vec3d p) const {
  const auto shape = hull_shape(vertices, 0);
  const OraclePolytope& k = shape->polytope;
  const Aabbd at{k.bounds.min + p, k.bounds.max + p};
  // Brushes nearest by their bounds first: a bound no nearer than the best distance ends the search.
  std::vector<std::pair<double, std::size_t>> order;
  for (std::size_t id = 0; id < polytopes_.size(); ++id) {
    if (!polytopes_[id].empty()) order.push_back({box_distance(at, polytopes_[id].bounds), id});
  }
  std::sort(order.begin(), order.end());
  double best = kInfinity;
  for (const auto& [bound, id] : order) {
    if (bound >= best) break;
    if (hull_overlaps_brush(*shape, id, p)) return 0;
    best = std::min(best, polytope_distance(k, p, polytopes_[id]));
  }
  return best;
}

}  // namespace shiftcast
