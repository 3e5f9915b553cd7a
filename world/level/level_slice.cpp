#include "world/level/level_slice.hpp"

#include <cmath>
#include <utility>

namespace shiftcast {
namespace {

using Point = std::array<double, 2>;
using Polygon = std::vector<Point>;

double area(const Polygon& polygon) {
  double twice = 0;
  for (std::size_t i = 0, n = polygon.size(); i < n; ++i) {
    const Point& a = polygon[i];
    const Point& b = polygon[(i + 1) % n];
    twice += a[0] * b[1] - a[1] * b[0];
  }
  return twice / 2;
}

// Splits a convex polygon by the line a·x + b·y = c into the part where a·x + b·y − c < 0 (back) and the
// rest (front): Sutherland–Hodgman on both sides at once, each crossing computed once so the halves share
// their new edge exactly.
void split(const Polygon& polygon, double a, double b, double c, Polygon& back, Polygon& front) {
  back.clear();
  front.clear();
  const std::size_t n = polygon.size();
  for (std::size_t i = 0; i < n; ++i) {
    const Point& p = polygon[i];
    const Point& q = polygon[(i + 1) % n];
    const double dp = a * p[0] + b * p[1] - c;
    const double dq = a * q[0] + b * q[1] - c;
    if (dp < 0) {
      back.push_back(p);
    } else {
      front.push_back(p);
    }
    if ((dp < 0) != (dq < 0)) {
      const double t = dp / (dp - dq);
      const Point x{p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])};
      back.push_back(x);
      front.push_back(x);
    }
  }
}

struct Slicer {
  const BspTree& tree;
  double height;
  std::vector<SlicePolygon> out;

  void descend(std::int32_t child, const Polygon& cell) {
    if (cell.size() < 3 || area(cell) < kSliceMinArea) return;
    if (child == kEmptyLeaf) return;
    if (is_solid_leaf(child)) {
      out.push_back({tree.leaves()[leaf_index(child)].brush, cell});
      return;
    }
    const BspNode& node = tree.nodes()[child];
    // The node's half-space n·p − d < 0 met with z = height is the half-plane n.x·x + n.y·y < d − n.z·height.
    const double a = node.plane.normal.x;
    const double b = node.plane.normal.y;
    const double c = double(node.plane.d) - double(node.plane.normal.z) * height;
    if (a == 0 && b == 0) {
      // A horizontal plane: the whole cut lies on one side (on the plane itself counts as front).
      descend(node.child[(0 < c) ? 0 : 1], cell);
      return;
    }
    Polygon back, front;
    split(cell, a, b, c, back, front);
    descend(node.child[0], back);
    descend(node.child[1], front);
  }
};

}  // namespace

std::vector<SlicePolygon> slice_solid(const BspTree& tree, double height) {
  Slicer slicer{tree, height, {}};
  const Aabb& bounds = tree.bounds();
  if (bounds.empty() || tree.nodes().empty()) return {};
  const double x0 = bounds.min.x - kSliceMargin, x1 = bounds.max.x + kSliceMargin;
  const double y0 = bounds.min.y - kSliceMargin, y1 = bounds.max.y + kSliceMargin;
  slicer.descend(tree.root(), Polygon{{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}});
  return std::move(slicer.out);
}

}  // namespace shiftcast
