#include "server/line_of_sight.hpp"

#include <algorithm>
#include <cmath>

#include "collision/shape.hpp"

namespace shiftcast {

Vec3 sight_sample(const Aabb& box, int index) {
  if (index <= 0 || index >= kSightSamples) return box.center();
  const int corner = index - 1;
  return {(corner & 1) != 0 ? box.max.x : box.min.x, (corner & 2) != 0 ? box.max.y : box.min.y,
          (corner & 4) != 0 ? box.max.z : box.min.z};
}

bool sees(const BspTree& tree, Vec3 eye, Vec3 point, std::int32_t* blocker) {
  const TraceResult r = tree.trace(Shape::point(), eye, point);
  if (blocker != nullptr) *blocker = r.hit ? r.brush : kNoBrush;
  // An eye in solid cannot be judged: seen (never cull on missing information).
  return r.start_solid || !r.hit;
}

bool brush_blocks(const BspTree& tree, std::int32_t brush, Vec3 eye, Vec3 point, float* deep_t) {
  const BrushTopology& topo = tree.topology();
  if (brush < 0 || brush >= topo.size()) return false;
  const std::span<const Planed> faces = topo.faces(topo.brush(brush));
  // Each face's distance at the eye and its rate along the segment, kept for the depth test below.
  constexpr std::size_t kMaxFaces = 64;
  if (faces.empty() || faces.size() > kMaxFaces) return false;
  const Vec3d e = to_double(eye), w = to_double(point) - e;
  if (deep_t != nullptr && *deep_t >= 0 && *deep_t <= 1) {
    // Deep at the remembered parameter, with the eye outside: any point that deep will do.
    const double t = *deep_t;
    bool eye_outside = false, deep = true;
    for (std::size_t i = 0; i < faces.size() && deep; ++i) {
      const double d0 = faces[i].distance(e);
      eye_outside = eye_outside || d0 >= 0;
      deep = -(d0 + dot(faces[i].normal, w) * t) >= kSightCacheDepth;
    }
    if (deep && eye_outside) return true;
  }
  double start[kMaxFaces], rate[kMaxFaces];
  // Cyrus-Beck: the part of the segment e + t (p - e), t in [0, 1], behind every face.
  double t0 = 0, t1 = 1;
  bool eye_inside = true;
  for (std::size_t i = 0; i < faces.size(); ++i) {
    const double d0 = faces[i].distance(e), dw = dot(faces[i].normal, w);
    start[i] = d0;
    rate[i] = dw;
    eye_inside = eye_inside && d0 < 0;
    if (dw == 0) {
      if (d0 >= 0) return false;
    } else if (dw > 0) {
      t1 = std::min(t1, -d0 / dw);
    } else {
      t0 = std::max(t0, -d0 / dw);
    }
    if (t0 >= t1) return false;
  }
  if (eye_inside) return false;
  // Deep enough at the middle of that part: the interior, not a graze.
  const double tm = (t0 + t1) * 0.5;
  for (std::size_t i = 0; i < faces.size(); ++i)
    if (-(start[i] + rate[i] * tm) < kSightCacheDepth) return false;
  if (deep_t != nullptr) *deep_t = float(tm);
  return true;
}

bool brush_blocks_box(const BspTree& tree, std::int32_t brush, Vec3 eye, const Aabb& box, double t) {
  const BrushTopology& topo = tree.topology();
  if (brush < 0 || brush >= topo.size() || !(t >= 0 && t <= 1)) return false;
  const std::span<const Planed> faces = topo.faces(topo.brush(brush));
  if (faces.empty()) return false;
  // The scaled box: centre e + t (c - e), half extents t h (exact in double from the float box).
  const Vec3d e = to_double(eye), lo = to_double(box.min), hi = to_double(box.max);
  const Vec3d c = (lo + hi) * 0.5, h = (hi - lo) * 0.5;
  const Vec3d at = e + (c - e) * t;
  bool eye_outside = false;
  for (const Planed& face : faces) {
    eye_outside = eye_outside || face.distance(e) >= 0;
    // The scaled box's farthest point along the face's normal, as deep as required.
    const double reach =
        t * (std::abs(face.normal.x) * h.x + std::abs(face.normal.y) * h.y + std::abs(face.normal.z) * h.z);
    if (-(face.distance(at) + reach) < kSightCacheDepth) return false;
  }
  return eye_outside;
}

SightLook look_at(const BspTree& tree, Vec3 eye, const Aabb& box, int first) {
  if (first < 0 || first >= kSightSamples) first = 0;
  SightLook look;
  look.sample = first;
  for (int k = 0; k < kSightSamples; ++k) {
    const int sample = (first + k) % kSightSamples;
    ++look.segments;
    if (sees(tree, eye, sight_sample(box, sample), &look.blockers[sample])) {
      look.seen = true;
      look.sample = sample;
      return look;
    }
  }
  return look;
}

const SightMemory::Entry* SightMemory::find(EntityId target) {
  while (cursor_ < entries_.size() && entries_[cursor_].target < target)
    ++cursor_;
  return cursor_ < entries_.size() && entries_[cursor_].target == target ? &entries_[cursor_] : nullptr;
}

void SightMemory::finish() {
  entries_.swap(next_);
  next_.clear();
  cursor_ = 0;
}

std::uint64_t SightMemory::take_segments() {
  const std::uint64_t n = segments_;
  segments_ = 0;
  return n;
}

std::uint64_t SightMemory::take_culled() {
  const std::uint64_t n = culled_;
  culled_ = 0;
  return n;
}

}  // namespace shiftcast
