#include "world/match/prop_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "collision/bsp_build.hpp"
#include "collision/convex_polytope.hpp"

namespace shiftcast {
namespace {

// A point within this distance of a hull face's plane lies on it: it does not make the hull grow, and two
// adjacent triangles each within it of the other's plane are one planar face. The same size as the BSP
// build's kPlaneEpsilon, so the hull of brush corners sees the faces the build sees; far above double
// rounding of prop-sized coordinates, far below any modelled feature.
constexpr double kHullPlaneEpsilon = kPlaneEpsilon;

struct HullFace {
  std::array<int, 3> v;  // counter-clockwise seen from outside
  Vec3d normal;
  double d = 0;
  bool alive = true;
  std::vector<int> outside;  // points in front of this face by more than kHullPlaneEpsilon
};

struct HullResult {
  std::vector<HullFace> faces;  // the hull's triangles
  std::string error;
};

using Edge = std::pair<int, int>;

class HullBuilder {
 public:
  explicit HullBuilder(const std::vector<Vec3d>& points) : p_(points) {}

  HullResult build() {
    HullResult result;
    if (!initial_simplex(result.error)) return result;
    while (true) {
      const int f = face_with_outside_point();
      if (f < 0) break;
      if (!add_point(f, result.error)) return result;
    }
    for (HullFace& face : faces_) {
      if (face.alive) result.faces.push_back(std::move(face));
    }
    return result;
  }

 private:
  double distance(const HullFace& f, int i) const { return dot(f.normal, p_[std::size_t(i)]) - f.d; }

  bool make_face(int a, int b, int c, HullFace& face) const {
    const Vec3d pa = p_[std::size_t(a)];
    const Vec3d n = cross(p_[std::size_t(b)] - pa, p_[std::size_t(c)] - pa);
    const double len = length(n);
    if (!(len > 0.0)) return false;
    face.v = {a, b, c};
    face.normal = n * (1.0 / len);
    face.d = dot(face.normal, pa);
    return true;
  }

  int farthest(auto&& score) const {
    int best = -1;
    double best_score = -1.0;
    for (std::size_t i = 0; i < p_.size(); ++i) {
      const double s = score(p_[i]);
      if (s > best_score) {
        best_score = s;
        best = int(i);
      }
    }
    return best;
  }

  bool initial_simplex(std::string& error) {
    int i0 = 0;
    for (std::size_t i = 1; i < p_.size(); ++i) {
      if (p_[i].x < p_[std::size_t(i0)].x) i0 = int(i);
    }
    const Vec3d a = p_[std::size_t(i0)];
    const int i1 = farthest([&](Vec3d q) { return length(q - a); });
    const Vec3d b = p_[std::size_t(i1)];
    if (!(length(b - a) > kHullPlaneEpsilon)) {
      error = "all points coincide";
      return false;
    }
    const Vec3d ab = normalize(b - a);
    const int i2 = farthest([&](Vec3d q) { return length(cross(q - a, ab)); });
    const Vec3d c = p_[std::size_t(i2)];
    if (!(length(cross(c - a, ab)) > kHullPlaneEpsilon)) {
      error = "points are collinear";
      return false;
    }
    const Vec3d n = normalize(cross(b - a, c - a));
    const int i3 = farthest([&](Vec3d q) { return std::abs(dot(q - a, n)); });
    if (!(std::abs(dot(p_[std::size_t(i3)] - a, n)) > kHullPlaneEpsilon)) {
      error = "points are coplanar";
      return false;
    }
    // Orient the base away from the fourth point; the other three faces follow from it.
    int v[4] = {i0, i1, i2, i3};
    if (dot(p_[std::size_t(i3)] - a, n) > 0.0) std::swap(v[1], v[2]);
    const int tris[4][3] = {{v[0], v[1], v[2]}, {v[0], v[3], v[1]}, {v[1], v[3], v[2]}, {v[2], v[3], v[0]}};
    for (const auto& t : tris) {
      HullFace face;
      if (!make_face(t[0], t[1], t[2], face)) {
        error = "degenerate initial simplex";
        return false;
      }
      add_face(std::move(face));
    }
    std::vector<int> all;
    for (std::size_t i = 0; i < p_.size(); ++i) {
      if (int(i) != v[0] && int(i) != v[1] && int(i) != v[2] && int(i) != v[3]) all.push_back(int(i));
    }
    assign(all);
    return true;
  }

  void add_face(HullFace face) {
    const int index = int(faces_.size());
    for (int k = 0; k < 3; ++k)
      edges_[{face.v[std::size_t(k)], face.v[std::size_t((k + 1) % 3)]}] = index;
    faces_.push_back(std::move(face));
  }

  // Gives each point to the first live face it is in front of; the rest are inside (or on) the hull.
  void assign(const std::vector<int>& points) {
    for (int i : points) {
      for (std::size_t f = 0; f < faces_.size(); ++f) {
        if (faces_[f].alive && distance(faces_[f], i) > kHullPlaneEpsilon) {
          faces_[f].outside.push_back(i);
          break;
        }
      }
    }
  }

  int face_with_outside_point() const {
    for (std::size_t f = 0; f < faces_.size(); ++f) {
      if (faces_[f].alive && !faces_[f].outside.empty()) return int(f);
    }
    return -1;
  }

  int neighbour(int a, int b) const {
    const auto it = edges_.find({b, a});
    return it == edges_.end() ? -1 : it->second;
  }

  bool add_point(int start, std::string& error) {
    const HullFace& s = faces_[std::size_t(start)];
    int eye = s.outside.front();
    for (int i : s.outside) {
      if (distance(s, i) > distance(s, eye)) eye = i;
    }
    // The faces the eye sees, grown from the one it was assigned to: connected by construction.
    std::vector<int> visible{start};
    std::vector<bool> seen(faces_.size(), false);
    seen[std::size_t(start)] = true;
    for (std::size_t k = 0; k < visible.size(); ++k) {
      const HullFace& f = faces_[std::size_t(visible[k])];
      for (int e = 0; e < 3; ++e) {
        const int n = neighbour(f.v[std::size_t(e)], f.v[std::size_t((e + 1) % 3)]);
        if (n < 0 || seen[std::size_t(n)]) continue;
        seen[std::size_t(n)] = true;
        if (distance(faces_[std::size_t(n)], eye) > kHullPlaneEpsilon) visible.push_back(n);
      }
    }
    std::vector<bool> is_visible(faces_.size(), false);
    for (int f : visible)
      is_visible[std::size_t(f)] = true;
    std::vector<Edge> horizon;
    std::vector<int> orphans;
    for (int f : visible) {
      HullFace& face = faces_[std::size_t(f)];
      for (int e = 0; e < 3; ++e) {
        const int a = face.v[std::size_t(e)];
        const int b = face.v[std::size_t((e + 1) % 3)];
        const int n = neighbour(a, b);
        if (n < 0 || !is_visible[std::size_t(n)]) horizon.push_back({a, b});
      }
      for (int i : face.outside) {
        if (i != eye) orphans.push_back(i);
      }
      face.outside.clear();
    }
    // The new faces close the hull only if the horizon is one simple loop. With the eye the farthest
    // point of its face that always holds; refuse rather than build a broken hull if rounding breaks it.
    std::map<int, int> next;
    for (const Edge& e : horizon) {
      if (!next.emplace(e.first, e.second).second) {
        error = "hull horizon is not a simple loop (degenerate input)";
        return false;
      }
    }
    const int start_vertex = horizon.front().first;
    int v = start_vertex;
    std::size_t walked = 0;
    do {
      const auto it = next.find(v);
      if (it == next.end()) break;
      v = it->second;
      ++walked;
    } while (v != start_vertex && walked <= horizon.size());
    if (v != start_vertex || walked != horizon.size()) {
      error = "hull horizon is not a simple loop (degenerate input)";
      return false;
    }
    for (int f : visible) {
      HullFace& face = faces_[std::size_t(f)];
      face.alive = false;
      for (int e = 0; e < 3; ++e) {
        const auto it = edges_.find({face.v[std::size_t(e)], face.v[std::size_t((e + 1) % 3)]});
        if (it != edges_.end() && it->second == f) edges_.erase(it);
      }
    }
    for (const Edge& e : horizon) {
      HullFace face;
      if (!make_face(e.first, e.second, eye, face)) {
        error = "degenerate hull face";
        return false;
      }
      add_face(std::move(face));
    }
    // Orphans go to any live face they are in front of, not only the new ones: a point can be in front
    // of a face the eye does not see, and dropping it would lose a hull vertex.
    assign(orphans);
    return true;
  }

  const std::vector<Vec3d>& p_;
  std::vector<HullFace> faces_;
  std::map<Edge, int> edges_;  // directed edge → the face it bounds counter-clockwise
};

// Planar facets: adjacent triangles that each lie within kHullPlaneEpsilon of the other's plane merge.
// Returns the facet of each triangle (a representative triangle index) and the number of facets.
std::pair<std::vector<int>, int> planar_facets(const std::vector<HullFace>& faces,
                                               const std::vector<Vec3d>& points) {
  std::map<Edge, int> owner;
  for (std::size_t f = 0; f < faces.size(); ++f) {
    for (int e = 0; e < 3; ++e)
      owner[{faces[f].v[std::size_t(e)], faces[f].v[std::size_t((e + 1) % 3)]}] = int(f);
  }
  std::vector<int> parent(faces.size());
  std::iota(parent.begin(), parent.end(), 0);
  const auto root = [&](int x) {
    while (parent[std::size_t(x)] != x)
      x = parent[std::size_t(x)] = parent[std::size_t(parent[std::size_t(x)])];
    return x;
  };
  const auto coplanar = [&](const HullFace& f, const HullFace& g) {
    for (int v : g.v) {
      if (std::abs(dot(f.normal, points[std::size_t(v)]) - f.d) > kHullPlaneEpsilon) return false;
    }
    return dot(f.normal, g.normal) > 0.0;
  };
  int groups = int(faces.size());
  for (std::size_t f = 0; f < faces.size(); ++f) {
    for (int e = 0; e < 3; ++e) {
      const auto it = owner.find({faces[f].v[std::size_t((e + 1) % 3)], faces[f].v[std::size_t(e)]});
      if (it == owner.end()) continue;
      const HullFace& g = faces[std::size_t(it->second)];
      if (!coplanar(faces[f], g) || !coplanar(g, faces[f])) continue;
      const int a = root(int(f));
      const int b = root(it->second);
      if (a != b) {
        parent[std::size_t(a)] = b;
        --groups;
      }
    }
  }
  for (std::size_t f = 0; f < faces.size(); ++f)
    parent[f] = root(int(f));
  return {std::move(parent), groups};
}

// Vertices of the triangles that are corners of the polytope: a point whose triangles all lie in one or
// two facets sits inside a face or on an edge (the incremental build can leave such points behind when a
// later point makes their triangles coplanar); it is not a vertex.
std::vector<bool> corner_vertices(const std::vector<HullFace>& faces, const std::vector<int>& facet,
                                  std::size_t point_count) {
  std::vector<std::array<int, 3>> seen(point_count, {-1, -1, -1});
  std::vector<int> distinct(point_count, 0);
  for (std::size_t f = 0; f < faces.size(); ++f) {
    for (int v : faces[f].v) {
      auto& s = seen[std::size_t(v)];
      int& n = distinct[std::size_t(v)];
      if (n >= 3 || std::find(s.begin(), s.begin() + n, facet[f]) != s.begin() + n) continue;
      s[std::size_t(n++)] = facet[f];
    }
  }
  std::vector<bool> corner(point_count);
  for (std::size_t i = 0; i < point_count; ++i)
    corner[i] = distinct[i] >= 3;
  return corner;
}

std::vector<bool> triangulation_vertices(const std::vector<HullFace>& faces, std::size_t point_count) {
  std::vector<bool> used(point_count, false);
  for (const HullFace& f : faces) {
    for (int v : f.v)
      used[std::size_t(v)] = true;
  }
  return used;
}

// Marks every point strictly in front of some face as a vertex too. A point the build dropped as "on a
// face" (or the rebuild left out as not a corner) may lie a rounding error outside the final polytope, and
// near a sharp corner being within the tolerance of every plane does not even bound how far outside; keeping
// such points makes the hull of the vertices exactly the hull of the input, which the filters rely on: a
// bound that misses a corner by 1e-12 is not a bound.
void keep_points_outside(const std::vector<HullFace>& faces, const std::vector<Vec3d>& points,
                         std::vector<bool>& vertex) {
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (vertex[i]) continue;
    vertex[i] = std::any_of(faces.begin(), faces.end(),
                            [&](const HullFace& f) { return dot(f.normal, points[i]) - f.d > 0.0; });
  }
}

struct HullOfPoints {
  std::vector<Vec3> vertices;
  int face_count = 0;
  std::string error;
};

HullOfPoints hull_of(const std::vector<Vec3>& points) {
  HullOfPoints out;
  if (points.size() < 4) {
    out.error = "a hull needs at least 4 points";
    return out;
  }
  // Exact duplicates (corners shared by brushes) are dropped first, keeping the first occurrence, so the
  // result does not depend on how often a point was given.
  std::vector<Vec3> unique;
  for (Vec3 v : points) {
    if (!is_finite(v)) {
      out.error = "non-finite point";
      return out;
    }
    if (std::find(unique.begin(), unique.end(), v) == unique.end()) unique.push_back(v);
  }
  if (unique.size() < 4) {
    out.error = "a hull needs at least 4 distinct points";
    return out;
  }
  std::vector<Vec3d> p;
  p.reserve(unique.size());
  for (Vec3 v : unique)
    p.push_back(to_double(v));
  HullResult hull = HullBuilder(p).build();
  if (!hull.error.empty()) {
    out.error = std::move(hull.error);
    return out;
  }
  auto [facet, facets] = planar_facets(hull.faces, p);
  const std::vector<bool> corner = corner_vertices(hull.faces, facet, p.size());
  std::vector<bool> vertex = triangulation_vertices(hull.faces, p.size());
  // Points left inside faces or on edges: rebuild once from the corners alone (on exact input, such as
  // brush corners, that removes them for good; anything rounding leaves outside is restored below).
  std::vector<int> kept;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (corner[i]) kept.push_back(int(i));
  }
  if (std::count(vertex.begin(), vertex.end(), true) > std::ptrdiff_t(kept.size())) {
    std::vector<Vec3d> q;
    for (int i : kept)
      q.push_back(p[std::size_t(i)]);
    HullResult again = HullBuilder(q).build();
    if (again.error.empty()) {
      for (HullFace& f : again.faces) {
        for (int& v : f.v)
          v = kept[std::size_t(v)];
      }
      hull = std::move(again);
      facets = planar_facets(hull.faces, p).second;
      vertex = triangulation_vertices(hull.faces, p.size());
    }
  }
  keep_points_outside(hull.faces, p, vertex);
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (vertex[i]) out.vertices.push_back(unique[i]);
  }
  out.face_count = facets;
  return out;
}

Aabb box_of(const std::vector<Vec3>& points) {
  Aabb box;
  for (Vec3 v : points)
    box.grow(v);
  return box;
}

PropModelResult failure(const std::string& name, const std::string& what) {
  return {nullptr, "prop model '" + name + "': " + what};
}

}  // namespace

PropModelResult make_box_model(std::string name, Vec3 half_extents) {
  const auto positive = [](float v) { return std::isfinite(v) && v > 0.0f; };
  if (!positive(half_extents.x) || !positive(half_extents.y) || !positive(half_extents.z)) {
    return failure(name, "box half extents must be finite and positive");
  }
  auto model = std::make_unique<PropModel>();
  model->name = std::move(name);
  model->shape = Shape::box(half_extents);
  model->face_count = 6;
  model->local_box = {-half_extents, half_extents};
  return {std::move(model), {}};
}

PropModelResult make_hull_model(std::string name, std::vector<Vec3> points) {
  HullOfPoints hull = hull_of(points);
  if (!hull.error.empty()) return failure(name, hull.error);
  auto model = std::make_unique<PropModel>();
  model->name = std::move(name);
  model->vertices = std::move(hull.vertices);
  model->shape = Shape::hull(model->vertices);
  model->face_count = hull.face_count;
  model->local_box = box_of(model->vertices);
  return {std::move(model), {}};
}

PropModelResult make_brush_model(std::string name, std::vector<Brush> brushes) {
  if (brushes.empty()) return failure(name, "no brushes");
  BspBuildResult built = build_bsp(brushes, {});
  if (built.error != BspBuildError::kNone) {
    std::string what = to_string(built.error);
    if (built.error_brush != kNoBrush) what = "brush " + std::to_string(built.error_brush) + ": " + what;
    return failure(name, what);
  }
  auto model = std::make_unique<PropModel>();
  model->name = std::move(name);
  model->concave = true;
  std::vector<Vec3> corners;
  for (std::size_t i = 0; i < brushes.size(); ++i) {
    std::vector<Planed> planes;
    for (const Plane& p : brushes[i].planes)
      planes.push_back(to_double(p));
    const ConvexPolytope poly = polytope_from_planes(planes, kWorldExtent, kPlaneEpsilon);
    const std::string which = "brush " + std::to_string(i);
    if (poly.empty()) return failure(model->name, which + " is empty (its planes exclude each other)");
    const bool unbounded = std::any_of(poly.faces.begin(), poly.faces.end(),
                                       [](const PolytopeFace& f) { return f.source == kWorldFace; });
    if (unbounded) return failure(model->name, which + " is unbounded");
    std::vector<Vec3> vertices;
    for (Vec3d v : poly.vertices(kPlaneEpsilon))
      vertices.push_back(to_float(v));
    model->face_count += int(poly.faces.size());
    model->brush_boxes.push_back(box_of(vertices));
    corners.insert(corners.end(), vertices.begin(), vertices.end());
    model->brush_vertices.push_back(std::move(vertices));
  }
  HullOfPoints bound = hull_of(corners);
  if (!bound.error.empty()) return failure(model->name, "bounding hull: " + bound.error);
  model->vertices = std::move(bound.vertices);
  model->shape = Shape::hull(model->vertices);
  model->local_box = box_of(corners);
  model->brushes = std::move(brushes);
  model->tree = std::move(built.tree);
  return {std::move(model), {}};
}

}  // namespace shiftcast
