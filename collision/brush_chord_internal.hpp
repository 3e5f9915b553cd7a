// Exact contact of a shape moving along a line with one brush: the chord, the interval of the line on
// which the shape overlaps the brush, and the brush's true outward normal where the chord begins.
//
// The set of reference points at which a shape overlaps a convex brush P is the convex configuration
// obstacle K = P ⊕ (−shape); a line meets it in one interval [t_in, t_out]. Each function finds that
// interval in closed form:
//   sphere    K is P rounded by the radius: faces moved out along their normals, a round cylinder about
//             every edge and a sphere about every vertex (RTR 25.11.3). The line's first and last crossing
//             of these pieces are t_in and t_out: every piece lies in K and together they cover its
//             boundary, so no crossing lies outside [t_in, t_out] and both ends are crossings.
//   cylinder  (upright, reference point at the bottom centre) K is Q ⊕ disk, where Q is P swept down by
//             the height (its faces, the vertical faces under its silhouette edges, its edges at their place
//             and one height below, vertical edges under silhouette vertices). Pieces: Q's faces moved out
//             horizontally by the radius, the flat caps at Q's top and bottom grown by the radius, and about
//             every non-horizontal edge of Q the sheared cylinder of points within the radius horizontally.
//   box, hull K is a polytope whose face normals are among P's faces, the shape's faces and the cross
//             products of their edge directions; every one of those planes, shifted by the supports of P
//             and the shape, bounds K, and together they are K: the chord is a Cyrus-Beck clip.
// Rays need none of this: the BSP's own partition is exact for a point.
//
// Chords are for the whole line p(t) = start + t·w (t may be negative); `exists` is false when the line
// misses the open interior of K (touching it along a face or at a point is not overlapping). The caller
// decides what the motion [0, 1] makes of it (collision/bsp_trace.cpp).
#pragma once

#include <span>

#include "collision/brush_topology.hpp"
#include "collision/vec3.hpp"

namespace shiftcast {

// Feature tests accept points this far (units) outside their face, edge or cap, so that rounding never
// opens a seam between neighbouring pieces. A piece accepted by this much lies within this distance of K,
// so t_in can be early by about this over the speed across the surface: far below every contract figure.
inline constexpr double kFeatureSlack = 1e-7;

struct Chord {
  bool exists = false;
  double t_in = 0.0;
  double t_out = 0.0;
  Vec3d normal{};  // unit outward normal of K where the line enters it
  // The line enters through a planar piece of K (a face, a cap): the entry moves with the shape's size
  // by a closed form (the caller uses it to skip a second chord).
  bool planar_entry = false;
};

// `centre` is the sphere's centre at t = 0; w its motion per unit t (non-zero).
Chord sphere_chord(const BrushTopology& topo, const BrushTopology::Record& brush, Vec3d centre, Vec3d w,
                   double radius);
// `bottom` is the centre of the cylinder's bottom disk at t = 0.
Chord cylinder_chord(const BrushTopology& topo, const BrushTopology::Record& brush, Vec3d bottom, Vec3d w,
                     double radius, double height);
// An axis-aligned box of half extents `half` about `centre`. Every plane is shifted in by `erosion`, so
// the chord is where the box overlaps the brush deeper than that (by translation distance).
Chord box_chord(const BrushTopology& topo, const BrushTopology::Record& brush, Vec3d centre, Vec3d w,
                Vec3d half, double erosion);
// A convex hull of `vertices` (relative to `reference`) whose edges run along `edge_directions` (any
// superset of the true edge directions; empty: every pair of vertices is taken as a possible edge).
Chord hull_chord(const BrushTopology& topo, const BrushTopology::Record& brush,
                 std::span<const Vec3> vertices, std::span<const Vec3> edge_directions, Vec3d reference,
                 Vec3d w, double erosion);

// The fast path of the common contact, a shape meeting a brush face-on: true when the shape, with its
// reference point on face `face`'s plane of K (that face moved out by the shape), touches the brush on
// that face at least `margin` inside the face's region (so K there is that plane, and a line crossing
// it enters K's interior). `face` indexes topo.faces(brush).
bool sphere_on_face(const BrushTopology& topo, const BrushTopology::Record& brush, int face, Vec3d centre,
                    double radius, double margin);
bool cylinder_on_face(const BrushTopology& topo, const BrushTopology::Record& brush, int face, Vec3d bottom,
                      double radius, double height, double margin);

}  // namespace shiftcast
