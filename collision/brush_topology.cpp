#include "collision/brush_topology.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "collision/bsp_build.hpp"
#include "collision/convex_polytope.hpp"

namespace shiftcast {
namespace {

// An edge between an upward and a downward face sweeps a vertical face only if it runs at least this
// far horizontally per unit of length; a steeper edge's swept face is a sliver the edges cover.
constexpr double kSilhouetteMinRun = 1e-6;

int find_or_add(std::vector<Vec3d>& vertices, Vec3d p) {
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    if (length_squared(vertices[i] - p) <= kTopologyEpsilon * kTopologyEpsilon) return int(i);
  }
  vertices.push_back(p);
  return int(vertices.size()) - 1;
}

double cross2(Vec3d o, Vec3d a, Vec3d b) {
  return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
}

// The vertices (local indices) whose z is within kTopologyEpsilon of `z`, as a counter-clockwise convex
// loop seen from above without collinear points (Andrew's monotone chain); one or two indices when the
// extreme is a vertex or an edge.
std::vector<int> extreme_loop(const std::vector<Vec3d>& vertices, double z) {
  std::vector<int> on;
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    if (std::abs(vertices[i].z - z) <= kTopologyEpsilon) on.push_back(int(i));
  }
  std::sort(on.begin(), on.end(), [&](int a, int b) {
    const Vec3d& p = vertices[std::size_t(a)];
    const Vec3d& q = vertices[std::size_t(b)];
    return p.x < q.x || (p.x == q.x && p.y < q.y);
  });
  if (on.size() < 3) return on;
  std::vector<int> hull(2 * on.size());
  std::size_t k = 0;
  const auto at = [&](int i) { return vertices[std::size_t(i)]; };
  for (int i : on) {
    while (k >= 2 && cross2(at(hull[k - 2]), at(hull[k - 1]), at(i)) <= 0)
      --k;
    hull[k++] = i;
  }
  const std::size_t lower = k + 1;
  for (auto it = on.rbegin() + 1; it != on.rend(); ++it) {
    while (k >= lower && cross2(at(hull[k - 2]), at(hull[k - 1]), at(*it)) <= 0)
      --k;
    hull[k++] = *it;
  }
  hull.resize(k - 1);
  return hull;
}

}  // namespace

BrushTopology::BrushTopology(std::span<const Brush> brushes) {
  records_.reserve(brushes.size());
  for (const Brush& brush : brushes)
    add(brush);
  // Interpenetrating pairs, by sweeping the boxes along x.
  std::vector<std::int32_t> order(records_.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = std::int32_t(i);
  std::sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) {
    return records_[std::size_t(a)].bounds.min.x < records_[std::size_t(b)].bounds.min.x;
  });
  std::vector<std::vector<std::int32_t>> pairs(records_.size());
  const auto deep = [](const Aabbd& a, const Aabbd& b) {
    for (int axis = 0; axis < 3; ++axis) {
      if (std::min(a.max[axis], b.max[axis]) - std::max(a.min[axis], b.min[axis]) <= kTopologyEpsilon)
        return false;
    }
    return true;
  };
  for (std::size_t i = 0; i < order.size(); ++i) {
    const Aabbd& a = records_[std::size_t(order[i])].bounds;
    if (a.empty()) continue;
    for (std::size_t j = i + 1; j < order.size(); ++j) {
      const Aabbd& b = records_[std::size_t(order[j])].bounds;
      if (b.min.x >= a.max.x) break;
      if (b.empty() || !deep(a, b)) continue;
      pairs[std::size_t(order[i])].push_back(order[j]);
      pairs[std::size_t(order[j])].push_back(order[i]);
    }
  }
  for (std::size_t i = 0; i < records_.size(); ++i) {
    records_[i].overlapping = {std::int32_t(overlapping_.size()), std::int32_t(pairs[i].size())};
    overlapping_.insert(overlapping_.end(), pairs[i].begin(), pairs[i].end());
  }
}

void BrushTopology::add(const Brush& brush) {
  Record record;
  std::vector<Planed> planes;
  for (const Plane& p : brush.planes) {
    const Planed pd = to_double(p);
    const double len = length(pd.normal);
    if (!(len > 0.0) || !std::isfinite(pd.d)) continue;
    planes.push_back({pd.normal * (1.0 / len), pd.d / len});
  }
  const ConvexPolytope poly = polytope_from_planes(planes, kWorldExtent, kTopologyEpsilon);
  const bool unbounded = std::any_of(poly.faces.begin(), poly.faces.end(),
                                     [](const PolytopeFace& f) { return f.source == kWorldFace; });
  if (poly.empty() || unbounded) {
    // No volume (or not closed, which build_bsp refuses): nothing can touch it.
    records_.push_back(record);
    return;
  }

  // Faces as index loops over merged vertices.
  std::vector<Vec3d> local;
  std::vector<Planed> face_planes;
  std::vector<std::vector<int>> loops;
  for (const PolytopeFace& f : poly.faces) {
    std::vector<int> loop;
    for (Vec3d v : f.vertices) {
      const int i = find_or_add(local, v);
      if (loop.empty() || (loop.back() != i && loop.front() != i)) loop.push_back(i);
    }
    // Drop points lying on the segment between their neighbours, so both faces of an edge name it alike.
    for (std::size_t i = 0; loop.size() >= 3 && i < loop.size();) {
      const Vec3d a = local[std::size_t(loop[(i + loop.size() - 1) % loop.size()])];
      const Vec3d b = local[std::size_t(loop[i])];
      const Vec3d c = local[std::size_t(loop[(i + 1) % loop.size()])];
      if (length(cross(b - a, c - a)) <= kTopologyEpsilon * length(c - a)) {
        loop.erase(loop.begin() + std::ptrdiff_t(i));
      } else {
        ++i;
      }
    }
    if (loop.size() < 3) continue;
    face_planes.push_back(f.plane);
    loops.push_back(std::move(loop));
  }

  // Edges with the faces on both sides.
  struct EdgeFaces {
    std::array<int, 2> face{-1, -1};
  };
  std::map<std::pair<int, int>, EdgeFaces> edge_faces;
  for (std::size_t f = 0; f < loops.size(); ++f) {
    const std::vector<int>& loop = loops[f];
    for (std::size_t i = 0; i < loop.size(); ++i) {
      const int a = loop[i];
      const int b = loop[(i + 1) % loop.size()];
      EdgeFaces& e = edge_faces[{std::min(a, b), std::max(a, b)}];
      e.face[e.face[0] < 0 ? 0 : 1] = int(f);
    }
  }

  const auto base = std::int32_t(vertices_.size());
  record.faces = {std::int32_t(faces_.size()), std::int32_t(face_planes.size())};
  faces_.insert(faces_.end(), face_planes.begin(), face_planes.end());
  record.vertices = {base, std::int32_t(local.size())};
  vertices_.insert(vertices_.end(), local.begin(), local.end());
  for (Vec3d v : local)
    vertices_float_.push_back(to_float(v));
  vertical_below_.resize(vertices_.size(), 0);
  for (Vec3d v : local)
    record.bounds.grow(v);

  record.edges.first = std::int32_t(edges_.size());
  record.silhouettes.first = std::int32_t(silhouettes_.size());
  record.directions.first = std::int32_t(directions_.size());
  for (const auto& [key, faces] : edge_faces) {
    const Vec3d a = local[std::size_t(key.first)];
    const Vec3d b = local[std::size_t(key.second)];
    const auto nz = [&](int f) { return f < 0 ? 0.0 : face_planes[std::size_t(f)].normal.z; };
    const double z0 = nz(faces.face[0]);
    const double z1 = nz(faces.face[1]);
    const bool one_sided = faces.face[1] < 0;
    const bool up = z0 > kDirectionEpsilon || z1 > kDirectionEpsilon;
    const bool down = z0 < -kDirectionEpsilon || z1 < -kDirectionEpsilon;
    const bool vertical = std::abs(z0) <= kDirectionEpsilon || std::abs(z1) <= kDirectionEpsilon;
    std::uint8_t copies = 0;
    if (up || vertical || one_sided) copies |= kTopCopy;
    if (down || vertical || one_sided) copies |= kBottomCopy;
    edges_.push_back({base + key.first, base + key.second, copies});
    if (copies == (kTopCopy | kBottomCopy)) {
      vertical_below_[std::size_t(base + key.first)] = 1;
      vertical_below_[std::size_t(base + key.second)] = 1;
    }
    const Vec3d dir = normalize(b - a);
    if (up && down && !one_sided) {
      // The face swept down between the edge and its copy: vertical, facing away from the brush.
      // A near-vertical edge sweeps no face worth the name (and its direction would be rounding).
      const Vec3d across = cross(dir, Vec3d{0, 0, 1});
      Vec3d u = length(across) > kSilhouetteMinRun ? normalize(across) : Vec3d{};
      const Vec3d outward =
          face_planes[std::size_t(faces.face[0])].normal + face_planes[std::size_t(faces.face[1])].normal;
      if (dot(u, outward) < 0.0) u = -u;
      if (length_squared(u) > 0.0) silhouettes_.push_back({u, dot(u, a)});
    }
    const bool seen = std::any_of(directions_.begin() + record.directions.first, directions_.end(),
                                  [&](Vec3d d) { return length(cross(d, dir)) <= kDirectionEpsilon; });
    if (!seen) directions_.push_back(dir);
  }
  record.edges.count = std::int32_t(edges_.size()) - record.edges.first;
  record.silhouettes.count = std::int32_t(silhouettes_.size()) - record.silhouettes.first;
  record.directions.count = std::int32_t(directions_.size()) - record.directions.first;

  const auto add_loop = [&](const std::vector<int>& loop) {
    Range r{std::int32_t(loops_.size()), std::int32_t(loop.size())};
    for (int i : loop)
      loops_.push_back(base + i);
    return r;
  };
  for (const std::vector<int>& loop : loops)
    face_loops_.push_back(add_loop(loop));
  record.top = add_loop(extreme_loop(local, record.bounds.max.z));
  record.bottom = add_loop(extreme_loop(local, record.bounds.min.z));

  // Planes an axis-aligned box's sweep needs beyond the faces and the axes: edge × axis, both ways (a face
  // only bounds one side, so a direction opposite a face is still needed).
  record.box_planes.first = std::int32_t(box_planes_.size());
  const auto parallel = [](Vec3d u, Vec3d n) { return std::abs(dot(u, n)) >= 1.0 - kDirectionEpsilon; };
  for (Vec3d dir : directions(record)) {
    for (int axis = 0; axis < 3; ++axis) {
      Vec3d e{};
      e[axis] = 1.0;
      const Vec3d c = cross(dir, e);
      if (length(c) <= kDirectionEpsilon) continue;
      const Vec3d u = normalize(c);
      if (std::abs(u.x) >= 1.0 - kDirectionEpsilon || std::abs(u.y) >= 1.0 - kDirectionEpsilon ||
          std::abs(u.z) >= 1.0 - kDirectionEpsilon) {
        continue;
      }
      if (std::any_of(box_planes_.begin() + record.box_planes.first, box_planes_.end(),
                      [&](const SweptPlane& s) { return parallel(u, s.u); })) {
        continue;
      }
      SweptPlane s{u, -1e300, 1e300};
      for (Vec3d v : local) {
        s.hi = std::max(s.hi, dot(u, v));
        s.lo = std::min(s.lo, dot(u, v));
      }
      box_planes_.push_back(s);
    }
  }
  record.box_planes.count = std::int32_t(box_planes_.size()) - record.box_planes.first;
  records_.push_back(record);
}

}  // namespace shiftcast
