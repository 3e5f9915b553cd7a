#include "tests/support/exactness_queries.hpp"

#include <cmath>
#include <numbers>

#include "tests/support/exactness_check.hpp"
#include "tests/support/seeded_random.hpp"

namespace shiftcast {
namespace {

// Starts near a brush are within the shape's reach plus this of one of its vertices.
constexpr double kNearBrush = 48;
// Uniform starts come from the level's bounds grown by this.
constexpr float kBoundsMargin = 32;
// Motions aimed at a surface for start_against_surface: long enough to reach one, short enough to hit.
constexpr double kSurfaceAimMin = 8;
constexpr double kSurfaceAimMax = 256;
constexpr int kSurfaceAttempts = 50;

// An upper bound on the distance of any shape point from the reference point.
double reach_of(const Shape& s) {
  const double o = length(to_double(s.offset));
  switch (s.kind) {
    case ShapeKind::kPoint:
      return 0;
    case ShapeKind::kSphere:
      return o + s.radius;
    case ShapeKind::kCylinder:
      return o + std::hypot(double(s.radius), double(s.height));
    case ShapeKind::kBox:
      return o + length(to_double(s.half_extents));
    case ShapeKind::kHull: {
      double r = 0;
      for (Vec3 v : s.hull_vertices)
        r = std::max(r, length(to_double(v)));
      return r;
    }
  }
  return 0;
}

}  // namespace

const char* to_string(ExactShape shape) {
  switch (shape) {
    case ExactShape::kRay:
      return "rays";
    case ExactShape::kSphere:
      return "spheres";
    case ExactShape::kCylinder:
      return "cylinders";
    case ExactShape::kBox:
      return "boxes";
    case ExactShape::kYawedBox:
      return "yawed boxes";
  }
  return "?";
}

ExactnessQueries::ExactnessQueries(const BrushOracle& oracle, const Aabb& bounds, std::uint32_t seed,
                                   StartPlaces places)
    : oracle_(oracle), bounds_(bounds), places_(places), rng_(seed) {}

double ExactnessQueries::uniform(double lo, double hi) {
  return uniform_double(rng_, lo, hi);
}

double ExactnessQueries::log_uniform(double lo, double hi) {
  return lo * std::exp(uniform(0, std::log(hi / lo)));
}

Vec3 ExactnessQueries::direction() {
  for (;;) {
    const Vec3d v{uniform(-1, 1), uniform(-1, 1), uniform(-1, 1)};
    const double l = length(v);
    if (l > 0.1 && l <= 1) return to_float(v * (1.0 / l));
  }
}

SampledShape ExactnessQueries::shape(ExactShape kind) {
  SampledShape s;
  switch (kind) {
    case ExactShape::kRay:
      s.shape = Shape::point();
      break;
    case ExactShape::kSphere:
      s.shape = Shape::sphere(float(log_uniform(0.5, 128)));
      break;
    case ExactShape::kCylinder: {
      const float r = float(log_uniform(1, 64));
      s.shape = Shape::cylinder(r, kCylinderHeights[std::size_t(uniform(0, kCylinderHeights.size()))]);
      break;
    }
    case ExactShape::kBox:
    case ExactShape::kYawedBox: {
      const Vec3 h{float(log_uniform(1, 64)), float(log_uniform(1, 64)), float(log_uniform(1, 64))};
      const bool on_feet = uniform(0, 1) < 0.5;
      s.shape = Shape::box(h, on_feet ? Vec3{0, 0, h.z} : Vec3{});
      if (kind == ExactShape::kYawedBox) s.yaw = uniform(0, 2 * std::numbers::pi);
      break;
    }
  }
  return s;
}

Vec3 ExactnessQueries::near_vertex(double reach) {
  for (;;) {
    const auto id = std::int32_t(uniform(0, oracle_.brush_count()));
    const OraclePolytope& poly = oracle_.polytope(id);
    if (poly.empty()) continue;
    const Vec3d v = poly.vertices[std::size_t(uniform(0, double(poly.vertices.size())))];
    return to_float(v + to_double(direction()) * uniform(0, reach + kNearBrush));
  }
}

std::optional<Vec3> ExactnessQueries::free_start(const Shape& shape) {
  const double reach = reach_of(shape);
  for (int i = 0; i < kStartAttempts; ++i) {
    const Vec3 p = places_ == StartPlaces::kNearBrushesAndAnywhere && i % 2 == 0
                       ? near_vertex(reach)
                       : Vec3{float(uniform(bounds_.min.x - kBoundsMargin, bounds_.max.x + kBoundsMargin)),
                              float(uniform(bounds_.min.y - kBoundsMargin, bounds_.max.y + kBoundsMargin)),
                              float(uniform(bounds_.min.z - kBoundsMargin, bounds_.max.z + kBoundsMargin))};
    if (oracle_.overlaps(shape, to_double(p), kFreeClearance) < 0) return p;
  }
  return std::nullopt;
}

Vec3 ExactnessQueries::near_brush(const Shape& shape) {
  return near_vertex(reach_of(shape));
}

Vec3 ExactnessQueries::motion() {
  const double pick = uniform(0, 10);
  const double len = pick < 6 ? uniform(0, 16) : pick < 9 ? uniform(16, 256) : uniform(2048, 4096);
  return direction() * float(len);
}

std::optional<Vec3> ExactnessQueries::start_against_surface(const Shape& shape, double depth, Vec3* into) {
  for (int i = 0; i < kSurfaceAttempts; ++i) {
    const std::optional<Vec3> a = free_start(shape);
    if (!a) return std::nullopt;
    const Vec3d u = to_double(direction());
    const Vec3d from = to_double(*a);
    const Vec3d to = from + u * uniform(kSurfaceAimMin, kSurfaceAimMax);
    const OracleHit hit = oracle_.sweep(shape, from, to);
    if (!hit.hit || hit.start_solid) continue;
    if (into) *into = to_float(u);
    return to_float(lerp(from, to, hit.fraction) + u * depth);
  }
  return std::nullopt;
}

}  // namespace shiftcast
