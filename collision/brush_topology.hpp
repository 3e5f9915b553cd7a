// BrushTopology: the exact boundary of every brush of a level (vertices, face planes, edges and the
// derived features the exact sweeps need), in double, built once when a BspTree is made and shared
// read-only by every query.
//
// The BSP's shifted planes only say where a shape *may* touch a brush; the exact tests in
// collision/brush_chord_internal.hpp decide, per brush, where the shape's motion really enters it, from this
// structure. It is derived from the brushes' own float planes (normalised, in double), so a level file
// needs to store nothing new.
//
//   BrushTopology topo(level.brushes);
//   const BrushTopology::Record& b = topo.brush(id);
//   for (const Planed& face : topo.faces(b)) ...
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "collision/aabb.hpp"
#include "collision/brush.hpp"
#include "collision/plane.hpp"

namespace shiftcast {

// Vertices closer than this (units) are one vertex, and planes that cut a brush by less than this are
// ignored: far below every tolerance of the query contract, far above double rounding at level scale.
inline constexpr double kTopologyEpsilon = 1e-6;

// A face whose normal has |n.z| below this is vertical; two edge directions whose cross product is below
// this are parallel. Only decides which (harmless, redundant) features the exact tests look at.
inline constexpr double kDirectionEpsilon = 1e-9;

class BrushTopology {
 public:
  struct Edge {
    std::int32_t a;  // vertex indices, absolute
    std::int32_t b;
    // For upright cylinders: the brush swept down by the cylinder's height has this edge at its own place
    // (kTopCopy, an edge of an upward-facing face) and/or shifted down by the height (kBottomCopy).
    std::uint8_t copies;
  };
  static constexpr std::uint8_t kTopCopy = 1;
  static constexpr std::uint8_t kBottomCopy = 2;

  // A plane of the brush swept by an axis-aligned box's edges: unit normal u and the brush's extent
  // along it, hi = max u·v and lo = min u·v over its vertices.
  struct SweptPlane {
    Vec3d u;
    double hi;
    double lo;
  };

  struct Range {
    std::int32_t first = 0;
    std::int32_t count = 0;
  };

  struct Record {
    Range faces;
    Range vertices;
    Range edges;
    Range top;          // vertices with the highest z, as a counter-clockwise loop seen from above
    Range bottom;       // vertices with the lowest z, the same way
    Range silhouettes;  // vertical planes through edges between an upward and a downward face
    Range directions;   // distinct edge directions (unit, either sign)
    Range box_planes;   // cross products of the edge directions with the axes, not already a face or axis
    Range overlapping;  // other brushes whose bounds overlap this one's with volume (see overlapping())
    Aabbd bounds;       // of the vertices; empty when the brush has no volume
  };

  BrushTopology() = default;
  explicit BrushTopology(std::span<const Brush> brushes);

  std::int32_t size() const { return std::int32_t(records_.size()); }
  const Record& brush(std::int32_t id) const { return records_[std::size_t(id)]; }

  std::span<const Planed> faces(const Record& r) const { return span(faces_, r.faces); }
  // The vertex loop of face `face` (an absolute index: r.faces.first + i).
  std::span<const std::int32_t> face_loop(std::int32_t face) const {
    return span(loops_, face_loops_[std::size_t(face)]);
  }
  std::span<const Vec3d> vertices(const Record& r) const { return span(vertices_, r.vertices); }
  // The same vertices rounded to float, for asking the general narrow phase (which takes hull shapes).
  std::span<const Vec3> vertices_float(const Record& r) const { return span(vertices_float_, r.vertices); }
  std::span<const Edge> edges(const Record& r) const { return span(edges_, r.edges); }
  std::span<const std::int32_t> top(const Record& r) const { return span(loops_, r.top); }
  std::span<const std::int32_t> bottom(const Record& r) const { return span(loops_, r.bottom); }
  std::span<const Planed> silhouettes(const Record& r) const { return span(silhouettes_, r.silhouettes); }
  std::span<const Vec3d> directions(const Record& r) const { return span(directions_, r.directions); }
  std::span<const SweptPlane> box_planes(const Record& r) const { return span(box_planes_, r.box_planes); }
  // Brushes that interpenetrate this one. Where brushes overlap, the BSP build may leave a part of one
  // thinner than its plane epsilon out of every cell (a sliver), so no leaf would ask about it; a query
  // that finds a contact with a brush therefore also asks these.
  std::span<const std::int32_t> overlapping(const Record& r) const {
    return span(overlapping_, r.overlapping);
  }
  // For upright cylinders: whether the brush swept down by the height has a vertical edge below vertex v.
  bool vertical_below(std::int32_t vertex) const { return vertical_below_[std::size_t(vertex)] != 0; }
  const Vec3d& vertex(std::int32_t v) const { return vertices_[std::size_t(v)]; }

 private:
  template <class T>
  static std::span<const T> span(const std::vector<T>& v, Range r) {
    return {v.data() + r.first, std::size_t(r.count)};
  }
  void add(const Brush& brush);

  std::vector<Record> records_;
  std::vector<Planed> faces_;
  std::vector<Range> face_loops_;  // per face, into loops_
  std::vector<Vec3d> vertices_;
  std::vector<Vec3> vertices_float_;
  std::vector<std::uint8_t> vertical_below_;
  std::vector<Edge> edges_;
  std::vector<std::int32_t> loops_;
  std::vector<Planed> silhouettes_;
  std::vector<Vec3d> directions_;
  std::vector<SweptPlane> box_planes_;
  std::vector<std::int32_t> overlapping_;
};

}  // namespace shiftcast
