#include "tests/support/world_query_oracle.hpp"

#include <algorithm>
#include <cmath>

namespace shiftcast::world_query_test {

Entity make_entity(EntityId id, Shape shape, Pose pose, std::uint32_t layer) {
  Entity e;
  e.id = id;
  e.kind = EntityKind::kProp;
  e.shape = shape;
  e.pose = pose;
  e.layer = layer;
  e.mask = kLayerAll;
  compute_entity_bounds(e);
  return e;
}

std::vector<Vec3> box_corners(Vec3 h, Vec3 c) {
  std::vector<Vec3> v;
  for (int i = 0; i < 8; ++i)
    v.push_back({c.x + (i & 1 ? h.x : -h.x), c.y + (i & 2 ? h.y : -h.y), c.z + (i & 4 ? h.z : -h.z)});
  return v;
}

Entity random_convex_entity(std::mt19937& rng, EntityId id, double spread) {
  const Pose pose{{float(uniform_double(rng, -spread, spread)), float(uniform_double(rng, -spread, spread)),
                   float(uniform_double(rng, -40, 40))},
                  float(uniform_double(rng, -kPi, kPi))};
  switch (rng() % 3) {
    case 0:
      return make_entity(id, Shape::sphere(float(uniform_double(rng, 2, 30)), uniform_vec(rng, -5, 5)), pose);
    case 1:
      return make_entity(
          id, Shape::cylinder(float(uniform_double(rng, 2, 20)), float(uniform_double(rng, 5, 60))), pose);
    default:
      return make_entity(id, Shape::box(uniform_vec(rng, 2, 30), uniform_vec(rng, -5, 5)), pose);
  }
}

Vec3d into_frame(const Pose& pose, Vec3d p) {
  const double c = std::cos(double(pose.yaw));
  const double s = std::sin(double(pose.yaw));
  const Vec3d q{p.x - pose.position.x, p.y - pose.position.y, p.z - pose.position.z};
  return {c * q.x + s * q.y, -s * q.x + c * q.y, q.z};
}

double sdf_box(Vec3d q, Vec3d h) {
  const Vec3d a{std::abs(q.x) - h.x, std::abs(q.y) - h.y, std::abs(q.z) - h.z};
  const Vec3d out{std::max(a.x, 0.0), std::max(a.y, 0.0), std::max(a.z, 0.0)};
  return norm(out) + std::min(std::max(a.x, std::max(a.y, a.z)), 0.0);
}

double sdf_cylinder(Vec3d q, double r, double h) {
  const double dxy = std::hypot(q.x, q.y) - r;
  const double dz = std::max(-q.z, q.z - h);
  return std::min(std::max(dxy, dz), 0.0) + std::hypot(std::max(dxy, 0.0), std::max(dz, 0.0));
}

double sdf(const Entity& e, Vec3d p, Vec3 hull_half) {
  const Vec3d q = into_frame(e.pose, p);
  const Shape& s = e.shape;
  const Vec3d o = dvec(s.offset);
  const Vec3d r{q.x - o.x, q.y - o.y, q.z - o.z};
  switch (s.kind) {
    case ShapeKind::kSphere:
      return norm(r) - s.radius;
    case ShapeKind::kCylinder:
      return sdf_cylinder(r, s.radius, s.height);
    case ShapeKind::kBox:
      return sdf_box(r, dvec(s.half_extents));
    case ShapeKind::kHull:
      return sdf_box(r, dvec(hull_half));
    case ShapeKind::kPoint:
      break;
  }
  return INFINITY;
}

Entry first_entry(const std::function<double(double)>& f, double length, double miss_margin) {
  Entry e;
  const double f0 = f(0);
  if (f0 < 0) {
    e.hit = e.start_inside = true;
    e.ambiguous = f0 > -kAmbiguity;
    return e;
  }
  double a = 0;
  double b = length;
  const double g = (std::sqrt(5.0) - 1) / 2;
  for (int i = 0; i < 200 && b - a > 1e-12; ++i) {
    const double c = b - g * (b - a);
    const double d = a + g * (b - a);
    if (f(c) < f(d)) {
      b = d;
    } else {
      a = c;
    }
  }
  const double s_min = (a + b) / 2;
  const double f_min = std::min(f(s_min), f(length));
  const double s_low = f(s_min) <= f(length) ? s_min : length;
  if (f_min >= 0) {
    e.ambiguous = f_min < miss_margin;
    return e;
  }
  double lo = 0;
  double hi = s_low;
  for (int i = 0; i < 200 && hi - lo > 1e-13; ++i) {
    const double mid = (lo + hi) / 2;
    (f(mid) < 0 ? hi : lo) = mid;
  }
  e.hit = true;
  e.s = hi;
  e.ambiguous = f0 < kAmbiguity || f_min > -kAmbiguity || length - hi < kAmbiguity;
  return e;
}

Vec3d anchor(const Entity& e) {
  const double c = std::cos(double(e.pose.yaw));
  const double s = std::sin(double(e.pose.yaw));
  const Vec3 o = e.shape.offset;
  return {e.pose.position.x + c * o.x - s * o.y, e.pose.position.y + s * o.x + c * o.y,
          e.pose.position.z + o.z};
}

double sat_gap(Vec3d ca, Vec3d ha, double yaw_a, Vec3d cb, Vec3d hb, double yaw_b) {
  const auto reach = [](Vec3d n, Vec3d h, double yaw) {
    const double c = std::cos(yaw);
    const double s = std::sin(yaw);
    return std::abs(n.x * c + n.y * s) * h.x + std::abs(-n.x * s + n.y * c) * h.y + std::abs(n.z) * h.z;
  };
  const Vec3d axes[5] = {{std::cos(yaw_a), std::sin(yaw_a), 0},
                         {-std::sin(yaw_a), std::cos(yaw_a), 0},
                         {std::cos(yaw_b), std::sin(yaw_b), 0},
                         {-std::sin(yaw_b), std::cos(yaw_b), 0},
                         {0, 0, 1}};
  double gap = -INFINITY;
  for (const Vec3d& n : axes)
    gap = std::max(gap, std::abs(dot(n, cb - ca)) - reach(n, ha, yaw_a) - reach(n, hb, yaw_b));
  return gap;
}

}  // namespace shiftcast::world_query_test
