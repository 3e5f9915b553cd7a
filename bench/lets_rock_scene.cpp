#include "bench/lets_rock_scene.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <random>
#include <utility>

#include "collision/brush.hpp"
#include "tests/support/seeded_random.hpp"
#include "world/match/mover_path.hpp"

namespace shiftcast::bench {
namespace {

constexpr double kTau = 2 * std::numbers::pi;

// Uniform numbers from std::mt19937 through our own mapping (the standard distributions differ between
// libraries), so every platform builds the same scene.
class Rng {
 public:
  explicit Rng(std::uint32_t seed) : engine_(seed) {}
  double uniform(double lo, double hi) { return lo + (hi - lo) * double(unit_float(engine_)); }
  double sign() { return (engine_() >> 31) != 0 ? 1.0 : -1.0; }

 private:
  std::mt19937 engine_;
};

// ---- The hovertank: a flattened, slightly tapered superellipsoid sampled in rings. Alternate rings are
// turned by half a step so the bands between them are triangles (no four points coplanar); the bottom
// and top rings are flat caps. 5 rings of 12: 2·12·4 band triangles + 2 caps = 98 faces (Blow's 97).
constexpr double kTankHalfLength = 120;  // along local +x, the nose
constexpr double kTankHalfWidth = 70;
constexpr double kTankExponent = 2.5;  // superellipse |x/a|^p + |y/b|^p = 1: boxier than an ellipse
constexpr double kTankTaper = 0.12;    // half-width ×(1 − taper·x/a): the nose narrower than the tail
constexpr int kTankRingPoints = 12;
struct TankRing {
  double z;
  double scale;
};
// Heights about the reference point (the hull's middle) and the ring's size; the scales are a concave
// profile so every ring point is a hull vertex.
constexpr std::array<TankRing, 5> kTankRings = {{{-28, 0.78}, {-16, 0.96}, {0, 1.0}, {12, 0.92}, {24, 0.62}}};
constexpr float kTankBottom = -28;  // the flat bottom cap, below the reference point

std::vector<Vec3> tank_points() {
  std::vector<Vec3> points;
  for (std::size_t k = 0; k < kTankRings.size(); ++k) {
    for (int j = 0; j < kTankRingPoints; ++j) {
      const double theta = kTau * (j + 0.5 * double(k % 2)) / kTankRingPoints;
      const double c = std::cos(theta);
      const double s = std::sin(theta);
      const double x = kTankHalfLength * std::copysign(std::pow(std::abs(c), 2 / kTankExponent), c);
      double y = kTankHalfWidth * std::copysign(std::pow(std::abs(s), 2 / kTankExponent), s);
      y *= 1 - kTankTaper * x / kTankHalfLength;
      const double scale = kTankRings[k].scale;
      points.push_back(to_float(Vec3d{scale * x, scale * y, kTankRings[k].z}));
    }
  }
  return points;
}

// ---- The repair pad: a slab, a rim of bars and corner posts, and four ramps sloping down into a
// cradle that fits the tank. The cradle is cut from the tank's own vertices: a ramp's surface is
// z − floor = |y| − w (45°), and a hull clears a half-space exactly when all its vertices do, so
// w = max over vertices of (|y| − height above the tank's bottom) + clearance keeps every ramp off the
// tank. The tank sitting in the cradle is below the rim and posts, inside the pad's convex bound.
constexpr float kPadFloor = 8;         // cradle floor above the pad's base (the slab's thickness)
constexpr float kCradleClearance = 4;  // horizontal: 4/√2 ≈ 2.8 units from ramp to hull, above the
                                       // touchdown wobble (≤ 0.9 units), far above the reach
constexpr float kRimHeight = 32;       // above the floor: over the tank's widest ring (28 above its bottom)
constexpr float kRimThickness = 16;
constexpr float kPostHeight = 48;
constexpr float kHalfSqrt2 = 0.70710678f;

// Touchdown: the tank's flat bottom this far above the cradle floor. Half the reach: within it with
// room on both sides for the float transform into the pad's frame (~1e-4 units at these coordinates)
// and GJK's tolerance (1e-5), and clearly not overlapping.
constexpr float kTouchdownGap = kLetsRockReach / 2;
// Idle wobble of the hovering engine while landed (xy amplitude, yaw amplitude): the tank is never
// perfectly still, so each touchdown tick is a fresh question; z never moves, so the gap stays exact.
constexpr double kTouchdownWobble = 0.4;
constexpr double kTouchdownYawWobble = 0.002;

struct Cradle {
  float ramp_x, ramp_y;  // where the ramps meet the floor (|x|, |y|)
  float rim_x, rim_y;    // inner faces of the rim
};

float round_up_eighth(double v) {
  return float(std::ceil(v * 8) / 8);
}

Cradle cradle_for(std::span<const Vec3> tank_vertices) {
  double ramp_x = 0, ramp_y = 0, rim_x = 0, rim_y = 0;
  for (Vec3 v : tank_vertices) {
    const double h = double(v.z) - kTankBottom;
    ramp_x = std::max(ramp_x, std::abs(double(v.x)) - h);
    ramp_y = std::max(ramp_y, std::abs(double(v.y)) - h);
    rim_x = std::max(rim_x, std::abs(double(v.x)));
    rim_y = std::max(rim_y, std::abs(double(v.y)));
  }
  return {round_up_eighth(ramp_x + kCradleClearance), round_up_eighth(ramp_y + kCradleClearance),
          round_up_eighth(rim_x + kCradleClearance), round_up_eighth(rim_y + kCradleClearance)};
}

std::vector<Brush> pad_brushes(const Cradle& c) {
  const float f = kPadFloor;
  const float ox = c.rim_x + kRimThickness;
  const float oy = c.rim_y + kRimThickness;
  std::vector<Brush> brushes;
  brushes.push_back(brush_from_box({-ox, -oy, 0}, {ox, oy, f}));
  for (float s : {-1.0f, 1.0f}) {
    // Bars along the long sides and the ends, then the ramps below them (a triangular prism: floor,
    // rim side, two ends and the 45° slope).
    brushes.push_back(brush_from_box({-c.rim_x, s > 0 ? c.rim_y : -oy, f},
                                     {c.rim_x, s > 0 ? oy : -c.rim_y, f + kRimHeight}));
    brushes.push_back(brush_from_box({s > 0 ? c.rim_x : -ox, -c.rim_y, f},
                                     {s > 0 ? ox : -c.rim_x, c.rim_y, f + kRimHeight}));
    Brush side;
    side.planes = {{{0, 0, -1}, -f},
                   {{0, s, 0}, c.rim_y},
                   {{1, 0, 0}, c.rim_x},
                   {{-1, 0, 0}, c.rim_x},
                   {{0, -s * kHalfSqrt2, kHalfSqrt2}, (f - c.ramp_y) * kHalfSqrt2}};
    brushes.push_back(side);
    Brush end;
    end.planes = {{{0, 0, -1}, -f},
                  {{s, 0, 0}, c.rim_x},
                  {{0, 1, 0}, c.rim_y},
                  {{0, -1, 0}, c.rim_y},
                  {{-s * kHalfSqrt2, 0, kHalfSqrt2}, (f - c.ramp_x) * kHalfSqrt2}};
    brushes.push_back(end);
  }
  for (float sx : {-1.0f, 1.0f}) {
    for (float sy : {-1.0f, 1.0f}) {
      const Vec3 a{sx * c.rim_x, sy * c.rim_y, f};
      const Vec3 b{sx * ox, sy * oy, f + kPostHeight};
      brushes.push_back(brush_from_box(min(a, b), max(a, b)));
    }
  }
  return brushes;
}

// ---- The timeline (seconds).
constexpr double kDropTime = 4.5;     // the box leaves the tank's belly
constexpr double kDeployTime = 6.0;   // the box becomes the pad
constexpr double kSettleTime = 1.5;   // the pad pivots and slides this long, then sleeps
constexpr double kHoverStart = 15.0;  // above the pad
constexpr double kDescentStart = 17.0;
constexpr double kFinalApproach = 19.0;  // 20 units above touchdown, then slowly down
constexpr double kTouchdownTime = 20.5;
constexpr double kTakeoffTime = 24.0;
constexpr double kSceneEnd = 30.0;
constexpr double kGravity = 800;  // units/s² (DESIGN.md §3)
constexpr float kBoxHalf = 20;
constexpr float kBoxDropGap = 1;      // between the tank's belly and the box when it is let go
constexpr double kPadSlide = 60;      // how far the pad slides while settling
constexpr double kPadPivot = 0.6;     // and how far it turns at most (radians)
constexpr double kHoverHeight = 150;  // tank reference above the pad while hovering

// ---- Players and rockets.
constexpr float kPlayerRadius = 15;  // DESIGN.md §3
constexpr float kPlayerHeight = 56;
constexpr double kArenaHalf = 800;       // players' anchors in [−800, 800]²
constexpr double kPlayerGapMin = 6;      // closest two players' orbits may come (near misses, no touching)
constexpr double kPlayerPadGapMin = 10;  // closest a player may come to the pad's reach
constexpr float kRocketRadius = 4;
constexpr double kRocketSpeed = 900;  // SimulationConfig::projectile_speed
constexpr double kRocketLife = 1.0;
constexpr double kRocketInterval = 1.5;  // per slot
// Rockets fly over the players' heads (56) and the landed tank and posts (≤ 61) with room to spare, so
// they never overlap anything there; a rocket heading into the tank's bounding sphere is removed the tick
// before (in a match it would hit and explode).
constexpr double kRocketMinHeight = 70;
constexpr double kRocketMaxHeight = 100;
constexpr float kRocketTankMargin = 1;

// A circle walked by one player, or by a squad one behind the other. Squad members close up and string
// out by kSquadSway about their spacing, so the pairs between them move in and out of the boxes' reach
// (the near misses Blow's plane-divides stage was for).
struct Orbit {
  Vec3d anchor;
  double radius, rate, phase;
  int members = 1;
  double spacing = 0;  // mean angle between consecutive members (radians)
  double sway = 0;     // phase of the spacing's sway
};
constexpr int kSquadSize = 3;
constexpr int kPlayersPerSquad = 5;     // one squad of three per five players; the rest walk alone
constexpr double kSquadSway = 0.15;     // radians
constexpr double kSquadSwayRate = 0.7;  // radians per second
constexpr double kSquadGapMin = 3;      // closest two members' cylinders come (units)

Pose orbit_pose(const Orbit& o, int member, double t) {
  const double spacing = o.spacing + kSquadSway * std::sin(kSquadSwayRate * t + o.sway);
  const double a = o.phase + o.rate * t - std::copysign(member * spacing, o.rate);  // behind the leader
  const Vec3d p = o.anchor + Vec3d{o.radius * std::cos(a), o.radius * std::sin(a), 0};
  const double heading = a + std::copysign(std::numbers::pi / 2, o.rate);
  return {to_float(p), float(std::remainder(heading, kTau))};
}

double ease_out(double u) {
  return 1 - (1 - u) * (1 - u);
}

}  // namespace

std::unique_ptr<LetsRockScene> LetsRockScene::make(const LetsRockOptions& options, std::string* error) {
  const auto fail = [&](const std::string& what) {
    if (error != nullptr) *error = what;
    return std::unique_ptr<LetsRockScene>();
  };
  if (options.tick_rate < 1 || options.players < 0 || options.projectiles < 0) {
    return fail("lets_rock: tick rate must be positive, counts non-negative");
  }
  std::unique_ptr<LetsRockScene> scene(new LetsRockScene());
  scene->options_ = options;
  Rng rng(options.seed);

  PropModelResult tank = make_hull_model("hovertank", tank_points());
  if (!tank.ok()) return fail(tank.error);
  PropModelResult box = make_box_model("cargo_box", {kBoxHalf, kBoxHalf, kBoxHalf});
  if (!box.ok()) return fail(box.error);
  PropModelResult pad = make_brush_model("repair_pad", pad_brushes(cradle_for(tank.model->vertices)));
  if (!pad.ok()) return fail(pad.error);
  scene->tank_model_ = std::move(tank.model);
  scene->box_model_ = std::move(box.model);
  scene->pad_model_ = std::move(pad.model);

  // ---- Entities: tank, box, pad, players, rockets; ids in that order from 1.
  std::vector<Entity>& es = scene->entities_;
  const auto add = [&](EntityKind kind, PropMotion motion, Shape shape, const PropModel* model) {
    Entity e;
    e.id = EntityId(es.size() + 1);
    e.kind = kind;
    e.motion = motion;
    e.shape = shape;
    e.model = model;
    e.layer = kind == EntityKind::kPlayer ? kLayerPlayer
                                          : (kind == EntityKind::kProjectile ? kLayerProjectile : kLayerProp);
    e.mask = kind == EntityKind::kPlayer ? kMaskPlayer
                                         : (kind == EntityKind::kProjectile ? kMaskProjectile : kMaskProp);
    compute_entity_bounds(e);
    es.push_back(e);
    return e.id;
  };
  scene->tank_ = add(EntityKind::kProp, PropMotion::kKinematic, model_shape(*scene->tank_model_),
                     scene->tank_model_.get());
  scene->box_ =
      add(EntityKind::kProp, PropMotion::kCrate, model_shape(*scene->box_model_), scene->box_model_.get());
  scene->pad_ =
      add(EntityKind::kProp, PropMotion::kCrate, model_shape(*scene->pad_model_), scene->pad_model_.get());
  const EntityId first_player = EntityId(es.size() + 1);
  for (int i = 0; i < options.players; ++i) {
    add(EntityKind::kPlayer, PropMotion::kNone, Shape::cylinder(kPlayerRadius, kPlayerHeight), nullptr);
  }
  // ---- The box's fall and the pad's slide (the drop site is the origin).
  const float box_yaw = float(rng.uniform(-0.3, 0.3));
  const double box_start_z = 200 + kTankBottom - kBoxDropGap - kBoxHalf;
  const double fall_time = std::sqrt(2 * (box_start_z - kBoxHalf) / kGravity);
  const double slide_heading = rng.uniform(0, kTau);
  const double pivot = rng.sign() * rng.uniform(0.5 * kPadPivot, kPadPivot);
  const auto pad_pose = [&](double t) {
    const double u = ease_out(std::clamp((t - kDeployTime) / kSettleTime, 0.0, 1.0));
    const Vec3d p{kPadSlide * u * std::cos(slide_heading), kPadSlide * u * std::sin(slide_heading), 0};
    return Pose{to_float(p), float(box_yaw + pivot * u)};
  };
  const Pose pad_rest = pad_pose(kDeployTime + kSettleTime);

  // ---- The tank's flight: a MoverPath through keyed poses, plus hover jitter and touchdown wobble.
  const float landed_yaw = pad_rest.yaw + kPi;  // nose the other way round: the cradle is symmetric
  const float touchdown_z = pad_rest.position.z + kPadFloor - kTankBottom + kTouchdownGap;
  const auto above_pad = [&](double height) {
    return Vec3{pad_rest.position.x, pad_rest.position.y, float(height)};
  };
  std::string path_error;
  const MoverPath flight = MoverPath::make(
      {
          {{{-1800, -300, 260}, 0}, 0},
          {{{0, 0, 200}, 0}, 4},
          {{{0, 0, 200}, 0}, 5},
          {{{900, 300, 240}, 0.3f}, 8},
          {{{1100, 650, 240}, 1.9f}, 10},
          {{{700, 500, 220}, kPi}, 12},
          {{above_pad(kHoverHeight), landed_yaw}, kHoverStart},
          {{above_pad(kHoverHeight), landed_yaw}, kDescentStart},
          {{above_pad(touchdown_z + 20), landed_yaw}, kFinalApproach},
          {{above_pad(touchdown_z), landed_yaw}, kTouchdownTime},
          {{above_pad(touchdown_z), landed_yaw}, kTakeoffTime},
          {{above_pad(kHoverHeight), landed_yaw}, kTakeoffTime + 2},
          {{{2000, -1500, 400}, landed_yaw + 0.5f}, kSceneEnd},
      },
      PathMode::kOnce, &path_error);
  if (flight.empty()) return fail("lets_rock: tank flight: " + path_error);
  const std::array<double, 3> hover_phase = {rng.uniform(0, kTau), rng.uniform(0, kTau),
                                             rng.uniform(0, kTau)};
  const std::array<double, 3> wobble_phase = {rng.uniform(0, kTau), rng.uniform(0, kTau),
                                              rng.uniform(0, kTau)};

  // ---- Players: orbits about anchors kept apart from each other and from the pad's whole slide.
  const Aabb pad_box = scene->pad_model_->local_box;
  const double pad_reach_xy =
      std::hypot(std::max(-pad_box.min.x, pad_box.max.x), std::max(-pad_box.min.y, pad_box.max.y));
  const double keep_out = kPadSlide + pad_reach_xy + kPlayerRadius + kPlayerPadGapMin;
  std::vector<Orbit> orbits;
  std::vector<std::pair<int, int>> walkers;  // per player: (orbit, member)
  const int squads = options.players / kPlayersPerSquad;
  while (int(walkers.size()) < options.players) {
    const bool squad = int(orbits.size()) < squads;
    Orbit o{{rng.uniform(-kArenaHalf, kArenaHalf), rng.uniform(-kArenaHalf, kArenaHalf), 0},
            squad ? rng.uniform(45, 65) : rng.uniform(20, 45),
            rng.sign() * rng.uniform(1.2, 2.4),
            rng.uniform(0, kTau)};
    if (squad) {
      o.members = kSquadSize;
      // The chord between neighbours at the closest sway is two radii plus kSquadGapMin.
      const double closest = 2 * std::asin((2 * kPlayerRadius + kSquadGapMin) / (2 * o.radius));
      o.spacing = closest + kSquadSway + rng.uniform(0, 0.1);
      o.sway = rng.uniform(0, kTau);
    }
    bool ok = std::hypot(o.anchor.x, o.anchor.y) >= keep_out + o.radius;
    for (const Orbit& other : orbits) {
      ok = ok &&
           length(o.anchor - other.anchor) >= o.radius + other.radius + 2 * kPlayerRadius + kPlayerGapMin;
    }
    if (!ok) continue;
    for (int m = 0; m < o.members && int(walkers.size()) < options.players; ++m)
      walkers.push_back({int(orbits.size()), m});
    orbits.push_back(o);
  }
  const auto walker_pose = [&](int player, double t) {
    const auto [orbit, member] = walkers[std::size_t(player)];
    return orbit_pose(orbits[std::size_t(orbit)], member, t);
  };

  // ---- Rockets: each slot fires every kRocketInterval from a random player, level, over their heads.
  // Every shot is its own entity (ids are never reused in a match).
  struct Shot {
    EntityId id;
    double fire;
    Vec3d from;
    Vec3d velocity;
  };
  std::vector<Shot> shots;
  for (int slot = 0; slot < options.projectiles && options.players > 0; ++slot) {
    for (double fire = kRocketInterval * slot / options.projectiles; fire < kSceneEnd;
         fire += kRocketInterval) {
      const int shooter = int(rng.uniform(0, options.players));
      const Pose feet = walker_pose(shooter, fire);
      const double heading = rng.uniform(0, kTau);
      const Vec3d dir{std::cos(heading), std::sin(heading), 0};
      const double height = rng.uniform(kRocketMinHeight, kRocketMaxHeight);
      const EntityId id =
          add(EntityKind::kProjectile, PropMotion::kNone, Shape::sphere(kRocketRadius), nullptr);
      es[id - 1].owner = first_player + EntityId(shooter);
      shots.push_back(
          {id, fire, to_double(feet.position) + Vec3d{0, 0, height} + dir * 20.0, dir * kRocketSpeed});
    }
  }
  const std::size_t n = es.size();

  // ---- Every tick's poses.
  const int ticks = int(std::lround(kSceneEnd * options.tick_rate));
  scene->tick_count_ = ticks;
  scene->poses_.assign(std::size_t(ticks) * n, Pose{});
  scene->present_.assign(std::size_t(ticks) * n, 0);
  const Entity& tank_entity = es[scene->tank_ - 1];
  scene->touchdown_first_ = int(std::ceil(kTouchdownTime * options.tick_rate));
  scene->touchdown_last_ = int(std::floor(kTakeoffTime * options.tick_rate));
  for (int tick = 0; tick < ticks; ++tick) {
    const double t = double(tick) / options.tick_rate;
    Pose* pose = &scene->poses_[std::size_t(tick) * n];
    std::uint8_t* present = &scene->present_[std::size_t(tick) * n];

    Pose tank_pose = flight.at(t);
    if (t > kHoverStart && t < kFinalApproach) {
      // Hover: a bob that fades in and out (sin² envelope), so the path's keys are met exactly.
      const double env =
          std::pow(std::sin(std::numbers::pi * (t - kHoverStart) / (kFinalApproach - kHoverStart)), 2);
      tank_pose.position +=
          to_float(Vec3d{2 * std::sin(1.7 * t + hover_phase[0]), 2 * std::sin(1.3 * t + hover_phase[1]),
                         3 * std::sin(2.1 * t + hover_phase[2])} *
                   env);
    }
    if (tick >= scene->touchdown_first_ && tick <= scene->touchdown_last_) {
      tank_pose.position.x += float(kTouchdownWobble * std::sin(5.3 * t + wobble_phase[0]));
      tank_pose.position.y += float(kTouchdownWobble * std::sin(4.7 * t + wobble_phase[1]));
      tank_pose.yaw += float(kTouchdownYawWobble * std::sin(6.1 * t + wobble_phase[2]));
    }
    pose[scene->tank_ - 1] = tank_pose;
    present[scene->tank_ - 1] = 1;

    if (t >= kDropTime && t < kDeployTime) {
      const double fall = std::min(t - kDropTime, fall_time);
      pose[scene->box_ - 1] = {{0, 0, float(box_start_z - 0.5 * kGravity * fall * fall)}, box_yaw};
      present[scene->box_ - 1] = 1;
    }
    if (t >= kDeployTime) {
      pose[scene->pad_ - 1] = pad_pose(t);
      present[scene->pad_ - 1] = 1;
    }
    for (int i = 0; i < options.players; ++i) {
      pose[first_player - 1 + i] = walker_pose(i, t);
      present[first_player - 1 + i] = 1;
    }
  }
  // A rocket flies until its life ends or it reaches the tank's bounding sphere (in a match it would hit
  // and explode there); before that it is outside the sphere at every tick, so it never overlaps the tank.
  for (const Shot& shot : shots) {
    for (int tick = int(std::ceil(shot.fire * options.tick_rate)); tick < ticks; ++tick) {
      const double t = double(tick) / options.tick_rate;
      if (t >= shot.fire + kRocketLife) break;
      const Vec3 centre = to_float(shot.from + shot.velocity * (t - shot.fire));
      const Pose& tank_pose = scene->poses_[std::size_t(tick) * n + (scene->tank_ - 1)];
      if (length(centre - world_center(tank_entity, tank_pose)) <
          tank_entity.bound_radius + kRocketRadius + kRocketTankMargin) {
        break;
      }
      scene->poses_[std::size_t(tick) * n + (shot.id - 1)] = {centre, 0};
      scene->present_[std::size_t(tick) * n + (shot.id - 1)] = 1;
    }
  }
  scene->phases_ = {{0, "flying in"},
                    {int(std::ceil(kDropTime * options.tick_rate)), "box dropped"},
                    {int(std::ceil(kDeployTime * options.tick_rate)), "pad deploying, tank turning"},
                    {int(std::ceil(kHoverStart * options.tick_rate)), "hovering"},
                    {int(std::ceil(kDescentStart * options.tick_rate)), "descending"},
                    {scene->touchdown_first_, "touched down"},
                    {scene->touchdown_last_ + 1, "taking off"}};
  return scene;
}

std::span<const Pose> LetsRockScene::poses(int tick) const {
  return {poses_.data() + std::size_t(tick) * entities_.size(), entities_.size()};
}

bool LetsRockScene::present(int tick, EntityId id) const {
  return present_[std::size_t(tick) * entities_.size() + (id - 1)] != 0;
}

bool LetsRockScene::touchdown(int tick) const {
  return tick >= touchdown_first_ && tick <= touchdown_last_;
}

const char* LetsRockScene::phase(int tick) const {
  const char* name = phases_.empty() ? "" : phases_.front().second;
  for (const auto& [first, what] : phases_) {
    if (tick >= first) name = what;
  }
  return name;
}

}  // namespace shiftcast::bench
