// PropModel: the shape of a prop, built once and shared by every entity that uses it (and by the tick
// history's WorldViews, read-only, from any thread).
//
//   PropModelResult box = make_box_model("crate", {16, 16, 16});
//   PropModelResult pad = make_brush_model("repair_pad", brushes);   // concave: its own BSP
//   if (!pad.ok()) log(pad.error);
//
// Convex models (a box or a hull of points) are tested with the narrow phase (GJK or closed forms).
// Concave models are a set of convex brushes in the model's local frame with a solid-leaf BSP built by
// the collision core: the hard case moves the other shape into the prop's frame (yaw only, so spheres
// and cylinders need no change, boxes become hulls) and asks the prop's tree, exactly as the level is
// asked; each brush's corners are kept too, so the exact distance to the brush the tree names can be
// measured with GJK for contacts and time of impact.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "collision/aabb.hpp"
#include "collision/brush.hpp"
#include "collision/bsp_tree.hpp"
#include "collision/shape.hpp"

namespace shiftcast {

struct PropModel {
  std::string name;
  bool concave = false;
  // Convex: the shape itself (a box, or a hull over `vertices`). Concave: the hull of all brush corners,
  // a convex bound used by the plane-divides test.
  Shape shape;
  // Hull vertices (convex hull models, and the concave bound), in input order. Their hull is exactly the
  // hull of the input: a point within rounding of a face stays in the list if it is outside by any amount.
  std::vector<Vec3> vertices;
  // Planar faces of the convex hull (coplanar triangles merged) or the sum over brushes: for Blow's table.
  int face_count = 0;

  // Concave only.
  std::vector<Brush> brushes;
  std::vector<std::vector<Vec3>> brush_vertices;  // corners of each brush, for GJK against one brush
  std::vector<Aabb> brush_boxes;
  BspTree tree;

  Aabb local_box;  // exact bounds of the model in its frame
};

struct PropModelResult {
  std::unique_ptr<PropModel> model;  // null on error
  std::string error;

  bool ok() const { return model != nullptr; }
};

PropModelResult make_box_model(std::string name, Vec3 half_extents);
// The convex hull of `points` (at least 4, not coplanar); face_count is the hull's face count.
PropModelResult make_hull_model(std::string name, std::vector<Vec3> points);
// A concave model from convex brushes; each brush must be bounded and non-empty.
PropModelResult make_brush_model(std::string name, std::vector<Brush> brushes);

// The model's shape rebound to its own vertex storage: entities copy this, so the model must outlive them.
inline Shape model_shape(const PropModel& model) {
  Shape s = model.shape;
  if (s.kind == ShapeKind::kHull) s.hull_vertices = model.vertices;
  return s;
}

}  // namespace shiftcast
