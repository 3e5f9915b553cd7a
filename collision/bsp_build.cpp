#include "collision/bsp_build.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

#include "collision/convex_polytope.hpp"

namespace shiftcast {
namespace {

// Normals this close to a coordinate axis count as axial when breaking ties between splitters.
constexpr double kAxialTolerance = 1e-9;
// Faces whose normals' z parts exceed this with opposite signs meet at an edge that needs a horizontal
// bevel for upright cylinders; nearer-vertical faces make that bevel coincide with the faces themselves.
constexpr double kStraddleZ = 1e-6;
// Planes with |n| this far from 1 are rejected rather than silently renormalised.
constexpr double kUnitNormalTolerance = 1e-3;

struct Fragment {
  ConvexPolytope poly;
  std::int32_t brush = 0;
  Aabbd bounds;
};

bool same_direction(Vec3d a, Vec3d b) {
  return dot(a, b) > 1.0 - kBevelNormalEpsilon;
}

bool is_axial(Vec3d n) {
  const double m = std::max({std::abs(n.x), std::abs(n.y), std::abs(n.z)});
  return m > 1.0 - kAxialTolerance;
}

bool fills_cell(const Fragment& f) {
  return std::all_of(f.poly.faces.begin(), f.poly.faces.end(),
                     [](const PolytopeFace& face) { return face.on_splitter; });
}

// Which side of `plane` the fragment lies on, trying its box before its vertices. The box shortcuts give
// exactly classify()'s answer: a fragment with every vertex within eps of the plane is kBack, so a
// sliver thinner than eps lies behind its own faces' planes and the build can mark them and move on.
PlaneSide fragment_side(const Fragment& f, const Planed& plane) {
  const Vec3d c = f.bounds.center();
  const Vec3d h = f.bounds.size() * 0.5;
  const double centre = plane.distance(c);
  const double radius =
      std::abs(plane.normal.x) * h.x + std::abs(plane.normal.y) * h.y + std::abs(plane.normal.z) * h.z;
  if (centre + radius <= kPlaneEpsilon) return PlaneSide::kBack;
  if (centre - radius > kPlaneEpsilon) return PlaneSide::kFront;
  return classify(f.poly, plane, kPlaneEpsilon);
}

// Marks the faces of `poly` lying on `plane` with outward normal along `normal` as cell boundaries.
void mark_on_splitter(ConvexPolytope& poly, const Planed& plane, Vec3d outward) {
  for (PolytopeFace& face : poly.faces) {
    if (face.on_splitter || !same_direction(face.plane.normal, outward)) continue;
    const bool on = std::all_of(face.vertices.begin(), face.vertices.end(),
                                [&](Vec3d v) { return std::abs(plane.distance(v)) <= kPlaneEpsilon; });
    face.on_splitter = on;
  }
}

double polygon_area(const std::vector<Vec3d>& loop) {
  Vec3d twice{};
  for (std::size_t i = 1; i + 1 < loop.size(); ++i)
    twice += cross(loop[i] - loop[0], loop[i + 1] - loop[0]);
  return 0.5 * length(twice);
}

bool within_epsilon(const ConvexPolytope& poly, const Planed& plane) {
  return std::all_of(poly.faces.begin(), poly.faces.end(), [&](const PolytopeFace& face) {
    return std::all_of(face.vertices.begin(), face.vertices.end(),
                       [&](Vec3d v) { return std::abs(plane.distance(v)) <= kPlaneEpsilon; });
  });
}

// A float plane that still supports the double vertices: rounding d down could cut the cell.
Plane supporting_float_plane(Vec3d normal, std::span<const Vec3d> vertices) {
  const Vec3 nf = to_float(normalize(normal));
  const Vec3d nd = to_double(nf);
  double d = std::numeric_limits<double>::lowest();
  for (Vec3d v : vertices)
    d = std::max(d, dot(nd, v));
  float df = float(d);
  if (double(df) < d) df = std::nextafter(df, std::numeric_limits<float>::infinity());
  return {nf, df};
}

class Builder {
 public:
  explicit Builder(const BspBuildOptions& options) : options_(options) {}

  std::int32_t build(std::vector<Fragment> fragments, std::int32_t depth) {
    stats.max_depth = std::max(stats.max_depth, depth);
    // A path this long means the input defeats the splitter choice; stop here rather than exhaust the
    // stack, and let build_bsp report kTooDeep.
    if (depth > kMaxTreeDepth) return kEmptyLeaf;
    if (fragments.empty()) {
      ++stats.empty_leaves;
      return kEmptyLeaf;
    }
    const Fragment* filling = nullptr;
    for (const Fragment& f : fragments) {
      if (fills_cell(f) && (filling == nullptr || f.brush < filling->brush)) filling = &f;
    }
    if (filling != nullptr) return solid_leaf_with_bevels(*filling);

    const Planed splitter = orient_splitter(choose_splitter(fragments), fragments);
    std::vector<Fragment> back;
    std::vector<Fragment> front;
    for (Fragment& f : fragments) {
      if (within_epsilon(f.poly, splitter)) {
        // Thinner than kPlaneEpsilon across the splitter: no volume the tree can resolve, and no side to
        // mark its faces from. Dropping it moves the solid set by less than the build's tolerance.
        ++stats.slivers_dropped;
        continue;
      }
      switch (fragment_side(f, splitter)) {
        case PlaneSide::kBack:
          mark_on_splitter(f.poly, splitter, splitter.normal);
          back.push_back(std::move(f));
          break;
        case PlaneSide::kFront:
          mark_on_splitter(f.poly, splitter, -splitter.normal);
          front.push_back(std::move(f));
          break;
        case PlaneSide::kSpanning: {
          ++stats.brush_splits;
          Fragment b{clip_behind(f.poly, splitter, kPlaneEpsilon, kCutFace, true), f.brush, {}};
          Fragment a{clip_behind(f.poly, splitter.flipped(), kPlaneEpsilon, kCutFace, true), f.brush, {}};
          if (!b.poly.empty()) {
            b.bounds = b.poly.bounds();
            back.push_back(std::move(b));
          }
          if (!a.poly.empty()) {
            a.bounds = a.poly.bounds();
            front.push_back(std::move(a));
          }
          break;
        }
      }
    }
    fragments.clear();
    fragments.shrink_to_fit();

    const std::int32_t index = std::int32_t(nodes.size());
    nodes.push_back({to_float(splitter), {kEmptyLeaf, kEmptyLeaf}});
    const std::int32_t back_child = build(std::move(back), depth + 1);
    const std::int32_t front_child = build(std::move(front), depth + 1);
    nodes[std::size_t(index)].child[0] = back_child;
    nodes[std::size_t(index)].child[1] = front_child;
    return index;
  }

  std::vector<BspNode> nodes;
  std::vector<BspLeaf> leaves;
  std::vector<Plane> bevels;
  BspBuildStats stats;

 private:
  // Scores a deterministic, evenly spaced sample of the fragments' unused face planes.
  Planed choose_splitter(const std::vector<Fragment>& fragments) const {
    std::vector<const PolytopeFace*> unused;
    for (const Fragment& f : fragments) {
      for (const PolytopeFace& face : f.poly.faces) {
        if (!face.on_splitter) unused.push_back(&face);
      }
    }
    const std::size_t limit = std::size_t(std::max(1, options_.max_splitter_candidates));
    const std::size_t stride = std::max<std::size_t>(1, unused.size() / limit);
    Planed best = unused.front()->plane;
    long best_score = std::numeric_limits<long>::max();
    bool best_axial = false;
    for (std::size_t i = 0; i < unused.size(); i += stride) {
      const Planed& plane = unused[i]->plane;
      long front = 0;
      long back = 0;
      long splits = 0;
      for (const Fragment& f : fragments) {
        switch (fragment_side(f, plane)) {
          case PlaneSide::kBack:
            ++back;
            break;
          case PlaneSide::kFront:
            ++front;
            break;
          case PlaneSide::kSpanning:
            ++splits;
            break;
        }
      }
      const long score = options_.split_cost * splits + std::abs((front + splits) - (back + splits));
      const bool axial = is_axial(plane.normal);
      if (score < best_score || (score == best_score && axial && !best_axial)) {
        best = plane;
        best_score = score;
        best_axial = axial;
      }
    }
    return best;
  }

  // Faces the splitter so that most face area lying on it belongs to brushes behind it. Ray queries
  // send a motion lying exactly in a node plane to the front side, so this keeps a ray sliding along a
  // floor on the floor's empty side even where the splitter came from the bottom of a box standing on
  // it; only the seams under such boxes count as solid.
  static Planed orient_splitter(const Planed& splitter, const std::vector<Fragment>& fragments) {
    double behind = 0.0;
    double in_front = 0.0;
    for (const Fragment& f : fragments) {
      if (fragment_side(f, splitter) == PlaneSide::kSpanning) continue;
      for (const PolytopeFace& face : f.poly.faces) {
        const bool on = std::all_of(face.vertices.begin(), face.vertices.end(),
                                    [&](Vec3d v) { return std::abs(splitter.distance(v)) <= kPlaneEpsilon; });
        if (!on) continue;
        const double area = polygon_area(face.vertices);
        if (same_direction(face.plane.normal, splitter.normal)) behind += area;
        if (same_direction(face.plane.normal, -splitter.normal)) in_front += area;
      }
    }
    return in_front > behind ? splitter.flipped() : splitter;
  }

  std::int32_t solid_leaf_with_bevels(const Fragment& cell) {
    ++stats.solid_leaves;
    BspLeaf& leaf = leaves.emplace_back(BspLeaf{cell.brush, std::int32_t(bevels.size()), 0});
    const std::int32_t child = solid_leaf(std::int32_t(leaves.size()) - 1);
    if (!options_.add_bevels) return child;

    const std::vector<Vec3d> vertices = cell.poly.vertices(kPlaneEpsilon);
    std::vector<Vec3d> normals;
    for (const PolytopeFace& face : cell.poly.faces)
      normals.push_back(face.plane.normal);
    const auto add_bevel = [&](Vec3d n) {
      if (std::any_of(normals.begin(), normals.end(), [&](Vec3d m) { return same_direction(m, n); })) return;
      normals.push_back(n);
      bevels.push_back(supporting_float_plane(n, vertices));
      ++leaf.bevel_count;
    };
    for (int axis = 0; axis < 3; ++axis) {
      for (double sign : {-1.0, 1.0}) {
        Vec3d n{};
        n[axis] = sign;
        add_bevel(n);
      }
    }
    // Horizontal diagonals halve the azimuth step between horizontal bevels to 45 degrees: players and
    // spheres mostly meet vertical corners from the side, where the axial step alone leaves spikes up to
    // 1.1 r (measured, tests/collision/bsp_oracle_test.cpp).
    const double diagonal = std::sqrt(0.5);
    for (Vec3d n : {Vec3d{diagonal, diagonal, 0}, Vec3d{-diagonal, diagonal, 0},
                    Vec3d{-diagonal, -diagonal, 0}, Vec3d{diagonal, -diagonal, 0}}) {
      add_bevel(n);
    }
    const auto& faces = cell.poly.faces;
    for (std::size_t i = 0; i < faces.size(); ++i) {
      for (std::size_t j = i + 1; j < faces.size(); ++j) {
        const Vec3d ni = faces[i].plane.normal;
        const Vec3d nj = faces[j].plane.normal;
        // Upright cylinders see a normal's azimuth through their disk: an edge whose faces look more than
        // 90 degrees apart seen from above spikes like a sharp edge, however gentle it is in 3D.
        const bool sharp = dot(ni, nj) < 0.0 || ni.x * nj.x + ni.y * nj.y < 0.0;
        const bool straddles =
            (ni.z > kStraddleZ && nj.z < -kStraddleZ) || (ni.z < -kStraddleZ && nj.z > kStraddleZ);
        if (!sharp && !straddles) continue;
        int shared = 0;
        for (Vec3d a : faces[i].vertices) {
          for (Vec3d b : faces[j].vertices)
            shared += length_squared(a - b) <= kPlaneEpsilon * kPlaneEpsilon;
        }
        if (shared < 2) continue;
        // Melax: where the outer angle (between outward normals) exceeds 90 degrees, the bisector.
        if (sharp) add_bevel(normalize(ni + nj));
        // Upright cylinders: where one face looks up and the other down, the shifted planes meet h·tan/2
        // beyond the cylinder's flat side; the horizontal normal in the edge's normal cone caps that.
        // (positive weights |nj.z| and |ni.z| keep it between the two normals and cancel z).
        if (straddles) add_bevel(normalize(ni * std::abs(nj.z) + nj * std::abs(ni.z)));
      }
    }
    stats.bevel_planes += leaf.bevel_count;
    return child;
  }

  const BspBuildOptions& options_;
};

}  // namespace

const char* to_string(BspBuildError error) {
  switch (error) {
    case BspBuildError::kNone:
      return "none";
    case BspBuildError::kNonFinitePlane:
      return "brush plane is not finite";
    case BspBuildError::kNonUnitNormal:
      return "brush plane normal is not unit length";
    case BspBuildError::kUnbounded:
      return "brush planes do not enclose a bounded solid";
    case BspBuildError::kTooLarge:
      return "too many brushes or nodes";
    case BspBuildError::kTooDeep:
      return "tree deeper than kMaxTreeDepth";
  }
  return "unknown";
}

BspBuildResult build_bsp(std::span<const Brush> brushes, const BspBuildOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  BspBuildResult result;
  if (brushes.size() > std::size_t(std::numeric_limits<std::int32_t>::max() / 2)) {
    result.error = BspBuildError::kTooLarge;
    return result;
  }
  std::vector<Fragment> fragments;
  Aabb bounds;
  for (std::size_t i = 0; i < brushes.size(); ++i) {
    const auto fail = [&](BspBuildError e) {
      result.error = e;
      result.error_brush = std::int32_t(i);
      return result;
    };
    std::vector<Planed> planes;
    for (const Plane& p : brushes[i].planes) {
      if (!is_finite(p.normal) || !std::isfinite(p.d)) return fail(BspBuildError::kNonFinitePlane);
      if (std::abs(length(to_double(p.normal)) - 1.0) > kUnitNormalTolerance)
        return fail(BspBuildError::kNonUnitNormal);
      planes.push_back(to_double(p));
    }
    Fragment f{polytope_from_planes(planes, kWorldExtent, kPlaneEpsilon), std::int32_t(i), {}};
    if (f.poly.empty()) {
      ++result.stats.brushes_empty;
      continue;
    }
    const bool unbounded = std::any_of(f.poly.faces.begin(), f.poly.faces.end(),
                                       [](const PolytopeFace& face) { return face.source == kWorldFace; });
    if (unbounded) return fail(BspBuildError::kUnbounded);
    f.bounds = f.poly.bounds();
    bounds.grow(to_float(f.bounds.min));
    bounds.grow(to_float(f.bounds.max));
    fragments.push_back(std::move(f));
  }

  Builder builder(options);
  const std::int32_t root = builder.build(std::move(fragments), 0);
  result.stats = BspBuildStats{.brushes = std::int32_t(brushes.size()),
                               .brushes_empty = result.stats.brushes_empty,
                               .brush_splits = builder.stats.brush_splits,
                               .slivers_dropped = builder.stats.slivers_dropped,
                               .nodes = std::int32_t(builder.nodes.size()),
                               .bevel_planes = builder.stats.bevel_planes,
                               .solid_leaves = builder.stats.solid_leaves,
                               .empty_leaves = builder.stats.empty_leaves,
                               .max_depth = builder.stats.max_depth,
                               .build_ms = 0};
  result.tree = BspTree(std::move(builder.nodes), std::move(builder.leaves), std::move(builder.bevels), root,
                        brushes, bounds);
  if (result.stats.max_depth > kMaxTreeDepth) result.error = BspBuildError::kTooDeep;
  result.stats.build_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

std::string format_stats(const BspBuildStats& s) {
  char line[256];
  std::snprintf(line, sizeof line,
                "brushes %d (empty %d, splits %d, slivers dropped %d), nodes %d, leaves %d solid + %d empty, "
                "bevel planes %d, depth %d, "
                "built in %.1f ms",
                s.brushes, s.brushes_empty, s.brush_splits, s.slivers_dropped, s.nodes, s.solid_leaves,
                s.empty_leaves, s.bevel_planes, s.max_depth, s.build_ms);
  return line;
}

}  // namespace shiftcast
