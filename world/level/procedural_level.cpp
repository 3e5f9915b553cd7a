#include "world/level/procedural_level.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <span>
#include <vector>

namespace shiftcast {
namespace {

// The arena's vertical layout: a floor slab whose top is z = 0, boundary walls up to the ceiling height.
constexpr double kFloorTop = 0.0;
constexpr double kFloorBottom = -64.0;
constexpr double kCeiling = 1024.0;
constexpr double kBoundaryThickness = 64.0;
// The floor is tiled so that coplanar seams between brushes are part of every level.
constexpr int kFloorTilesPerSide = 4;
// Structures keep this far from the boundary walls, so a player fits between them and the wall.
constexpr double kWallClearance = 48.0;

constexpr double kStepHeight = 16.0;

// Thin-wall plane offsets are rounded to this grid before the thickness is added, so that d + thickness
// is exact in float whenever the thickness is a multiple of the grid (the default 1 is): |d| < 8192
// leaves float at least 11 bits below the point, the grid needs 6. The two planes are then exactly
// options.wall_thickness apart along their shared float normal.
constexpr double kThinWallOffsetQuantum = 1.0 / 64.0;

// Candidate planes of the local vertex enumeration: determinants below this mean three (nearly) parallel
// normals, whose intersection is either missing or found from another triple.
constexpr double kSingularTriple = 1e-12;
// A vertex may lie this far in front of a plane and still count as on the brush; far above double
// rounding at level scale, far below any feature size.
constexpr double kVertexOnPlane = 1e-6;

// Rejection sampling of directions drops samples this close (squared) to the origin, whose direction
// rounding would bias.
constexpr double kMinSampleNorm2 = 1e-2;

using Vec2d = std::array<double, 2>;

// Hand-made uniform helpers over mt19937 (whose output the standard fixes bit for bit): the standard
// distributions are implementation-defined, so they would make the level depend on the library.
class Rng {
 public:
  explicit Rng(std::uint32_t seed) : engine_(seed) {}

  // Uniform in [lo, hi).
  double uniform(double lo, double hi) { return lo + (hi - lo) * unit(); }
  // Uniform integer in [lo, hi].
  int uniform_int(int lo, int hi) { return lo + int(unit() * double(hi - lo + 1)); }
  bool chance(double p) { return unit() < p; }

  // Directions by rejection sampling plus sqrt rather than by sin/cos: IEEE fixes sqrt to the last bit,
  // libm trigonometry is not, and the level must be the same everywhere.
  Vec2d unit_2d() {
    for (;;) {
      const double x = uniform(-1, 1);
      const double y = uniform(-1, 1);
      const double s = x * x + y * y;
      if (s > kMinSampleNorm2 && s <= 1.0) {
        const double inv = 1.0 / std::sqrt(s);
        return {x * inv, y * inv};
      }
    }
  }
  // A random rotation as a unit quaternion (w, x, y, z), uniform over rotations.
  std::array<double, 4> unit_quaternion() {
    for (;;) {
      std::array<double, 4> q{uniform(-1, 1), uniform(-1, 1), uniform(-1, 1), uniform(-1, 1)};
      const double s = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
      if (s > kMinSampleNorm2 && s <= 1.0) {
        const double inv = 1.0 / std::sqrt(s);
        for (double& c : q)
          c *= inv;
        return q;
      }
    }
  }

 private:
  double unit() { return double(engine_()) * (1.0 / 4294967296.0); }
  std::mt19937 engine_;
};

// An orthonormal frame; prisms are described in (e1, e2) and extruded along e3.
struct Frame {
  Vec3d e1{1, 0, 0};
  Vec3d e2{0, 1, 0};
  Vec3d e3{0, 0, 1};
};

// Yawed frame standing on the floor: e1 = `forward` (horizontal), e2 its left, e3 up.
Frame yaw_frame(Vec2d forward) {
  return {{forward[0], forward[1], 0}, {-forward[1], forward[0], 0}, {0, 0, 1}};
}

Frame rotation_frame(const std::array<double, 4>& q) {
  const double w = q[0], x = q[1], y = q[2], z = q[3];
  return {{1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y)},
          {2 * (x * y - w * z), 1 - 2 * (x * x + z * z), 2 * (y * z + w * x)},
          {2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)}};
}

// sqrt(a² + b²) without std::hypot, which libm need not round the same everywhere.
double norm2(double a, double b) {
  return std::sqrt(a * a + b * b);
}

Vec3d in_frame(const Frame& f, Vec3d origin, double a, double b, double c) {
  return origin + f.e1 * a + f.e2 * b + f.e3 * c;
}

// The normal is normalised in double and then rounded to float; d is taken from the rounded normal so the
// stored plane passes through `point` as closely as a float d allows.
Plane make_plane(Vec3d normal, Vec3d point) {
  const Vec3 n = to_float(normalize(normal));
  return {n, float(dot(to_double(n), point))};
}

// A right prism: the convex polygon `outline` (counter-clockwise in (e1, e2) coordinates) swept along e3
// over [lo, hi]. Boxes, octagons, wedges, ramps and knife edges are all prisms.
Brush make_prism(const Frame& f, Vec3d origin, std::span<const Vec2d> outline, double lo, double hi) {
  Brush b;
  for (std::size_t i = 0; i < outline.size(); ++i) {
    const Vec2d p = outline[i];
    const Vec2d q = outline[(i + 1) % outline.size()];
    // Outward for a counter-clockwise outline: the edge direction turned clockwise.
    const Vec3d normal = f.e1 * (q[1] - p[1]) - f.e2 * (q[0] - p[0]);
    b.planes.push_back(make_plane(normal, in_frame(f, origin, p[0], p[1], 0)));
  }
  b.planes.push_back(make_plane(f.e3, in_frame(f, origin, 0, 0, hi)));
  b.planes.push_back(make_plane(-f.e3, in_frame(f, origin, 0, 0, lo)));
  return b;
}

Brush make_box(const Frame& f, Vec3d origin, Vec3d lo, Vec3d hi) {
  const std::array<Vec2d, 4> outline{{{lo.x, lo.y}, {hi.x, lo.y}, {hi.x, hi.y}, {lo.x, hi.y}}};
  return make_prism(f, origin, outline, lo.z, hi.z);
}

// Corners of the brush by brute force over plane triples, for the level's bounds. Generation only: the
// collision module has its own polytope code, and this file must not depend on test support.
Aabbd brush_vertex_bounds(const Brush& brush) {
  Aabbd box;
  const std::size_t n = brush.planes.size();
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i + 1; j < n; ++j) {
      for (std::size_t k = j + 1; k < n; ++k) {
        const Planed a = to_double(brush.planes[i]);
        const Planed b = to_double(brush.planes[j]);
        const Planed c = to_double(brush.planes[k]);
        const Vec3d bc = cross(b.normal, c.normal);
        const double det = dot(a.normal, bc);
        if (std::abs(det) < kSingularTriple) continue;
        const Vec3d p =
            (bc * a.d + cross(c.normal, a.normal) * b.d + cross(a.normal, b.normal) * c.d) * (1.0 / det);
        bool inside = true;
        for (const Plane& plane : brush.planes) {
          if (to_double(plane).distance(p) > kVertexOnPlane) {
            inside = false;
            break;
          }
        }
        if (inside) box.grow(p);
      }
    }
  }
  return box;
}

class LevelBuilder {
 public:
  explicit LevelBuilder(const ProceduralLevelOptions& options) : options_(options), rng_(options.seed) {}

  ProceduralLevel build() {
    add_floor();
    add_boundary();
    // One of everything first, so that even a small target has every feature; then weighted picks.
    add_stairs();
    add_stairs();
    add_ramp(/*force_45=*/true);
    add_ramp(/*force_45=*/false);
    add_box_pillar();
    add_octagon_pillar();
    add_thin_wall();
    add_knife_edge();
    add_spike();
    add_floating_wedge();
    add_random_cluster();
    while (std::int32_t(level_.brushes.size()) < options_.target_brushes) {
      const int pick = rng_.uniform_int(0, 15);
      if (pick < 2) {
        add_stairs();
      } else if (pick < 4) {
        add_ramp(rng_.chance(0.5));
      } else if (pick < 5) {
        add_box_pillar();
      } else if (pick < 6) {
        add_octagon_pillar();
      } else if (pick < 9) {
        add_thin_wall();
      } else if (pick < 10) {
        add_knife_edge();
      } else if (pick < 11) {
        add_spike();
      } else if (pick < 12) {
        add_floating_wedge();
      } else {
        add_random_cluster();
      }
    }
    return std::move(level_);
  }

 private:
  void add(Brush brush, BrushFeature feature) {
    // Rounded outwards, so the float bounds contain every brush.
    const Aabbd box = brush_vertex_bounds(brush);
    for (int axis = 0; axis < 3; ++axis) {
      float lo = float(box.min[axis]);
      float hi = float(box.max[axis]);
      if (double(lo) > box.min[axis]) lo = std::nextafter(lo, -std::numeric_limits<float>::infinity());
      if (double(hi) < box.max[axis]) hi = std::nextafter(hi, std::numeric_limits<float>::infinity());
      level_.bounds.min[axis] = std::min(level_.bounds.min[axis], lo);
      level_.bounds.max[axis] = std::max(level_.bounds.max[axis], hi);
    }
    level_.brushes.push_back(std::move(brush));
    level_.features.push_back(feature);
  }

  double half() const { return double(options_.half_extent); }

  // A structure's centre such that everything within `radius` of it (in x and y) stays clear of the
  // boundary walls. Arenas too small for the structure get it at the centre.
  Vec3d place(double radius) {
    const double room = std::max(0.0, half() - kBoundaryThickness - kWallClearance - radius);
    return {rng_.uniform(-room, room), rng_.uniform(-room, room), kFloorTop};
  }

  // Mostly axis-aligned, sometimes any yaw, as levels are.
  Vec2d pick_yaw(double any_yaw_probability) {
    if (rng_.chance(any_yaw_probability)) return rng_.unit_2d();
    static constexpr std::array<Vec2d, 4> kAxes{{{1, 0}, {0, 1}, {-1, 0}, {0, -1}}};
    return kAxes[rng_.uniform_int(0, 3)];
  }

  void add_floor() {
    const double tile = 2 * half() / kFloorTilesPerSide;
    for (int i = 0; i < kFloorTilesPerSide; ++i) {
      for (int j = 0; j < kFloorTilesPerSide; ++j) {
        const Vec3d lo{-half() + i * tile, -half() + j * tile, kFloorBottom};
        const Vec3d hi{-half() + (i + 1) * tile, -half() + (j + 1) * tile, kFloorTop};
        add(make_box({}, {}, lo, hi), BrushFeature::kFloor);
      }
    }
  }

  // Four walls overlapping at the corners (overlap is part of the test, not an accident).
  void add_boundary() {
    const double h = half();
    const double t = kBoundaryThickness;
    add(make_box({}, {}, {-h, -h, kFloorBottom}, {-h + t, h, kCeiling}), BrushFeature::kBoundary);
    add(make_box({}, {}, {h - t, -h, kFloorBottom}, {h, h, kCeiling}), BrushFeature::kBoundary);
    add(make_box({}, {}, {-h, -h, kFloorBottom}, {h, -h + t, kCeiling}), BrushFeature::kBoundary);
    add(make_box({}, {}, {-h, h - t, kFloorBottom}, {h, h, kCeiling}), BrushFeature::kBoundary);
  }

  // A flight of 16-unit steps, each a solid block down to the floor, ending in a landing.
  void add_stairs() {
    const int steps = rng_.uniform_int(3, 12);
    const double depth = double(rng_.uniform_int(16, 32));
    const double width = double(rng_.uniform_int(48, 128));
    const double landing = double(rng_.uniform_int(32, 128));
    const double run = steps * depth + landing;
    const Vec2d yaw = pick_yaw(0.25);
    const Vec3d c = place(norm2(run, width / 2));
    const Frame f = yaw_frame(yaw);
    for (int i = 0; i < steps; ++i) {
      add(make_box(f, c, {i * depth, -width / 2, kFloorTop},
                   {(i + 1) * depth, width / 2, (i + 1) * kStepHeight}),
          BrushFeature::kStair);
    }
    add(make_box(f, c, {steps * depth, -width / 2, kFloorTop}, {run, width / 2, steps * kStepHeight}),
        BrushFeature::kStair);
  }

  // A wedge whose top rises with slope rise/run (1 for 45 degrees), sometimes with a platform behind it.
  // The slope meets the floor at an acute edge, which is the point of shallow ramps.
  void add_ramp(bool force_45) {
    const double slope = force_45 ? 1.0 : rng_.uniform(0.15, 0.7);
    const double length = rng_.uniform(64, force_45 ? 256 : 384);
    const double width = rng_.uniform(48, 160);
    const bool platform = rng_.chance(0.5);
    const double platform_depth = rng_.uniform(32, 128);
    const Vec3d c = place(norm2(length + platform_depth, width / 2));
    const Frame f = yaw_frame(pick_yaw(0.3));
    // The cross-section lives in (forward, up) and is extruded across the width.
    const Frame side{f.e1, f.e3, -f.e2};
    const double top = slope * length;
    const std::array<Vec2d, 3> outline{{{0, kFloorTop}, {length, kFloorTop}, {length, top}}};
    add(make_prism(side, c, outline, -width / 2, width / 2), BrushFeature::kRamp);
    if (platform) {
      add(make_box(f, c, {length, -width / 2, kFloorTop}, {length + platform_depth, width / 2, top}),
          BrushFeature::kRamp);
    }
  }

  void add_box_pillar() {
    const double hx = rng_.uniform(8, 32);
    const double hy = rng_.uniform(8, 32);
    const double height = rng_.uniform(64, 384);
    const Vec3d c = place(norm2(hx, hy));
    add(make_box(yaw_frame(pick_yaw(0.5)), c, {-hx, -hy, kFloorTop}, {hx, hy, height}),
        BrushFeature::kPillar);
  }

  void add_octagon_pillar() {
    const double apothem = rng_.uniform(12, 48);
    const double height = rng_.uniform(64, 384);
    const Vec3d c = place(apothem * 1.1);  // circumradius = apothem / cos(22.5 deg) < 1.0824 apothem
    // Corners of a regular octagon with the given apothem, without trigonometry: tan(22.5 deg) = sqrt2 - 1.
    const double s = apothem * (std::sqrt(2.0) - 1.0);
    const double a = apothem;
    const std::array<Vec2d, 8> outline{
        {{a, -s}, {a, s}, {s, a}, {-s, a}, {-a, s}, {-a, -s}, {-s, -a}, {s, -a}}};
    add(make_prism(yaw_frame(rng_.unit_2d()), c, outline, kFloorTop, height), BrushFeature::kPillar);
  }

  // Exactly options.wall_thickness thick along a random horizontal normal, long and tall, sometimes
  // raised off the floor so shapes can pass under it.
  void add_thin_wall() {
    const double thickness = double(options_.wall_thickness);
    const double length = rng_.uniform(64, 512);
    const double height = rng_.uniform(48, 256);
    const double base = rng_.chance(0.25) ? rng_.uniform(40, 96) : kFloorTop;
    const Vec3d c = place(length / 2 + thickness);
    const Vec2d normal = rng_.unit_2d();
    const Frame f = yaw_frame(normal);
    const Vec3 n = to_float(f.e1);
    const double back =
        std::round((dot(to_double(n), c) - thickness / 2) / kThinWallOffsetQuantum) * kThinWallOffsetQuantum;
    const float back_d = float(back);
    const float front_d = float(double(back_d) + thickness);
    Brush b;
    b.planes.push_back({n, front_d});
    b.planes.push_back({-n, -back_d});
    b.planes.push_back(make_plane(f.e2, c + f.e2 * (length / 2)));
    b.planes.push_back(make_plane(-f.e2, c - f.e2 * (length / 2)));
    b.planes.push_back(make_plane({0, 0, 1}, {c.x, c.y, base + height}));
    b.planes.push_back(make_plane({0, 0, -1}, {c.x, c.y, base}));
    add(std::move(b), BrushFeature::kThinWall);
  }

  // A horizontal triangular prism with an acute apex edge on top (apex angle 14 to 53 degrees).
  void add_knife_edge() {
    const double half_base = rng_.uniform(8, 32);
    const double height = half_base * rng_.uniform(2, 8);
    const double length = rng_.uniform(64, 256);
    const Vec3d c = place(norm2(half_base, length / 2));
    const Frame f = yaw_frame(rng_.unit_2d());
    const Frame side{f.e1, f.e3, -f.e2};
    const std::array<Vec2d, 3> outline{{{-half_base, kFloorTop}, {half_base, kFloorTop}, {0, height}}};
    add(make_prism(side, c, outline, -length / 2, length / 2), BrushFeature::kWedge);
  }

  // A tall triangular pyramid: a sharp apex and side faces meeting at dihedral angles near 60 degrees.
  void add_spike() {
    const double radius = rng_.uniform(8, 32);
    const double height = rng_.uniform(48, 256);
    const Vec3d c = place(radius);
    const Frame f = yaw_frame(rng_.unit_2d());
    const double h3 = std::sqrt(3.0) / 2;
    const std::array<Vec3d, 3> base{in_frame(f, c, radius, 0, 0), in_frame(f, c, -radius / 2, radius * h3, 0),
                                    in_frame(f, c, -radius / 2, -radius * h3, 0)};
    const Vec3d apex = c + Vec3d{0, 0, height};
    Brush b;
    for (int i = 0; i < 3; ++i) {
      const Vec3d p = base[i];
      const Vec3d q = base[(i + 1) % 3];
      Vec3d normal = cross(q - p, apex - p);
      if (dot(normal, c - p) > 0) normal = -normal;
      b.planes.push_back(make_plane(normal, p));
    }
    b.planes.push_back(make_plane({0, 0, -1}, c));
    add(std::move(b), BrushFeature::kWedge);
  }

  // A thin triangular prism at a random orientation in the air: acute edges in every direction.
  void add_floating_wedge() {
    const double half_base = rng_.uniform(4, 24);
    const double height = half_base * rng_.uniform(2, 10);
    const double length = rng_.uniform(32, 192);
    const double radius = norm2(norm2(height, half_base), length / 2);
    Vec3d c = place(radius);
    const double lowest = radius + 8;  // clear of the floor whatever the rotation
    c.z = rng_.uniform(lowest, std::max(lowest, kCeiling - 64 - radius));
    const Frame f = rotation_frame(rng_.unit_quaternion());
    const std::array<Vec2d, 3> outline{{{-half_base, 0}, {half_base, 0}, {0, height}}};
    add(make_prism(f, c, outline, -length / 2, length / 2), BrushFeature::kWedge);
  }

  // Randomly rotated boxes and random polyhedra around one point, overlapping each other, some resting in
  // the floor, some in the air.
  void add_random_cluster() {
    const int members = rng_.uniform_int(2, 4);
    constexpr double kMemberRadius = 96;  // bound on a member's extent plus its offset from the centre
    Vec3d c = place(kMemberRadius * 1.8);
    // Low clusters sink into the floor slab but not through it (members reach at most 3 x 1.15 x 20 = 69
    // below their centre, which is at most 16 below the cluster's).
    c.z = rng_.chance(0.5) ? rng_.uniform(24, 56) : rng_.uniform(96, 768);
    for (int m = 0; m < members; ++m) {
      const Vec3d at = c + Vec3d{rng_.uniform(-32, 32), rng_.uniform(-32, 32), rng_.uniform(-16, 16)};
      if (rng_.chance(0.5)) {
        // Half extents up to 40: the corner is at most 40 sqrt3 < 70 from the member's centre.
        const Vec3d h{rng_.uniform(4, 40), rng_.uniform(4, 40), rng_.uniform(4, 40)};
        add(make_box(rotation_frame(rng_.unit_quaternion()), at, -h, h), BrushFeature::kRandom);
      } else {
        add(random_polyhedron(at, rng_.uniform(12, 20)), BrushFeature::kRandom);
      }
    }
  }

  // Four planes of a randomly rotated tetrahedron keep the brush bounded (a regular tetrahedron reaches 3x
  // its planes' distance from the centre), a few random planes cut it further; every plane is at least half
  // the radius from the centre, so the brush contains a ball around it and is never empty.
  Brush random_polyhedron(Vec3d centre, double radius) {
    const Frame f = rotation_frame(rng_.unit_quaternion());
    const std::array<Vec3d, 4> tetra{f.e1 + f.e2 + f.e3, f.e1 - f.e2 - f.e3, -f.e1 + f.e2 - f.e3,
                                     -f.e1 - f.e2 + f.e3};
    Brush b;
    for (Vec3d n : tetra) {
      const Vec3d u = normalize(n);
      b.planes.push_back(make_plane(u, centre + u * (radius * rng_.uniform(1.0, 1.15))));
    }
    const int extra = rng_.uniform_int(2, 10);
    for (int i = 0; i < extra; ++i) {
      const Frame r = rotation_frame(rng_.unit_quaternion());
      b.planes.push_back(make_plane(r.e3, centre + r.e3 * (radius * rng_.uniform(0.5, 1.0))));
    }
    return b;
  }

  ProceduralLevelOptions options_;
  Rng rng_;
  ProceduralLevel level_;
};

}  // namespace

ProceduralLevel make_procedural_level(const ProceduralLevelOptions& options) {
  return LevelBuilder(options).build();
}

const char* to_string(BrushFeature feature) {
  switch (feature) {
    case BrushFeature::kFloor:
      return "floor";
    case BrushFeature::kBoundary:
      return "boundary";
    case BrushFeature::kStair:
      return "stair";
    case BrushFeature::kRamp:
      return "ramp";
    case BrushFeature::kPillar:
      return "pillar";
    case BrushFeature::kThinWall:
      return "thin_wall";
    case BrushFeature::kWedge:
      return "wedge";
    case BrushFeature::kRandom:
      return "random";
  }
  return "unknown";
}

}  // namespace shiftcast
