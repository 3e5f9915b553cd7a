#include "bench/lets_rock_scene.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <random>
#include <utility>

#include "collision/brush.hpp"
#include "world/grid.hpp"
#include "world/mover_path.hpp"

namespace shiftcast::bench {
namespace {

constexpr double kTau = 2 * std::numbers::pi;

// Uniform numbers from std::mt19937 through our own mapping (the standard distributions differ between
// libraries), so every platform builds the same scene.
class Rng {
 public:
  explicit Rng(std::uint32_t seed) : engine_(seed) {}
  double uniform(double lo, double hi) { return lo + (hi - lo) * double(engine_() >> 8) * 0x1p-24; }
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

LetsRockRun run_lets_rock(const LetsRockScene& scene, const FilterOptions& options, PairsByTick* tested) {
  std::vector<Entity> entities(scene.entities().begin(), scene.entities().end());
  const std::size_t n = entities.size();
  float largest = 0;
  for (const Entity& e : entities)
    largest = std::max(largest, e.bound_radius);
  Grid grid(Grid::derive_cell_size(largest));
  FilterCascade cascade(options);
  std::vector<std::pair<EntityId, EntityId>> pairs;
  pairs.reserve(4 * n);
  std::vector<std::uint8_t> was_present(n, 0);
  std::vector<Pose> previous(n);
  const EntityId tank = scene.tank();
  const EntityId pad = scene.pad();
  if (tested != nullptr) tested->assign(std::size_t(scene.tick_count()), {});

  LetsRockRun run;
  if (options.measure_time) {
    // The stage timers read steady_clock once per stage; what one read costs here, for the table.
    constexpr int kReads = 10000;
    const auto first = std::chrono::steady_clock::now();
    volatile std::int64_t sink = 0;  // now() is an opaque call anyway; this keeps its result used
    for (int i = 0; i < kReads - 1; ++i)
      sink = std::chrono::steady_clock::now().time_since_epoch().count();
    static_cast<void>(sink);
    run.clock_read_ns =
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - first).count() / kReads;
  }
  run.touchdown_min_separation = std::numeric_limits<float>::infinity();
  run.touchdown_max_separation = -std::numeric_limits<float>::infinity();
  const auto start = std::chrono::steady_clock::now();
  for (int tick = 0; tick < scene.tick_count(); ++tick) {
    const std::span<const Pose> poses = scene.poses(tick);
    for (std::size_t i = 0; i < n; ++i) {
      Entity& e = entities[i];
      if (!scene.present(tick, e.id)) {
        if (was_present[i] != 0) grid.remove(e.id);
        was_present[i] = 0;
        continue;
      }
      e.pose = poses[i];
      Aabb box = world_box(e, e.pose);
      // Rockets are fast movers: the grid gets their speedbox, start ∪ end of the tick.
      if (e.kind == EntityKind::kProjectile && was_present[i] != 0) box.grow(world_box(e, previous[i]));
      grid.update(e.id, box);
      previous[i] = e.pose;
      was_present[i] = 1;
    }
    grid.pairs(pairs);
    run.grid_pairs += pairs.size();
    bool tank_pad_touching = false;
    for (const auto& [ia, ib] : pairs) {
      const Entity& a = entities[ia - 1];
      const Entity& b = entities[ib - 1];
      if (!should_collide(a, b)) {
        ++run.masked_pairs;
        continue;
      }
      ++run.tested_pairs;
      if (tested != nullptr) (*tested)[std::size_t(tick)].push_back({ia, ib});
      const bool tank_pad = (ia == tank && ib == pad) || (ia == pad && ib == tank);
      PairContact contact;
      const bool touching = cascade.test(a, b, contact, tank_pad ? run.tank_pad_stats : run.stats);
      if (!touching) continue;
      ++run.touching;
      if (contact.overlapping) ++run.overlapping;
      if (tank_pad) {
        tank_pad_touching = true;
        if (scene.touchdown(tick)) {
          run.touchdown_min_separation = std::min(run.touchdown_min_separation, contact.separation);
          run.touchdown_max_separation = std::max(run.touchdown_max_separation, contact.separation);
        }
      }
    }
    if (scene.touchdown(tick)) {
      ++run.touchdown_ticks;
      if (tank_pad_touching) ++run.touchdown_touching;
    } else if (tank_pad_touching) {
      ++run.tank_pad_touching_elsewhere;
    }
    ++run.ticks;
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.stats.add(run.tank_pad_stats);
  return run;
}

LetsRockRun run_lets_rock_median(const LetsRockScene& scene, const FilterOptions& options, int repetitions) {
  std::vector<LetsRockRun> runs;
  for (int i = 0; i < std::max(repetitions, 1); ++i)
    runs.push_back(run_lets_rock(scene, options));
  // Counts are the same every time (the scene and the cascade are deterministic); times are not.
  const auto median = [&](auto field) {
    std::vector<double> v;
    for (LetsRockRun& r : runs)
      v.push_back(double(field(r)));
    std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  LetsRockRun out = runs.front();
  for (std::size_t i = 0; i < std::size_t(kFilterStageCount); ++i) {
    out.stats.stages[i].nanoseconds =
        std::uint64_t(median([i](LetsRockRun& r) { return r.stats.stages[i].nanoseconds; }));
    out.tank_pad_stats.stages[i].nanoseconds =
        std::uint64_t(median([i](LetsRockRun& r) { return r.tank_pad_stats.stages[i].nanoseconds; }));
  }
  out.seconds = median([](LetsRockRun& r) { return r.seconds; });
  out.clock_read_ns = median([](LetsRockRun& r) { return r.clock_read_ns; });
  out.repetitions = int(runs.size());
  return out;
}

namespace {

// Blow's "Let's Rock" table (Pentium 166, Linux, gcc -O3): definitive answers and mean running time
// per test in µs (the sphere test's time was printed as "tiny").
struct BlowRow {
  std::uint64_t definitive;
  double microseconds;  // < 0: "tiny"
};
constexpr std::array<BlowRow, kFilterStageCount> kBlow1997 = {
    {{3800, -1}, {1911, 26.13}, {93, 231.94}, {842, 450.98}}};

const char* blow_name(FilterStage stage) {
  switch (stage) {
    case FilterStage::kSpheres:
      return "bounding spheres";
    case FilterStage::kBoxes:
      return "bounding box safety";
    case FilterStage::kPlane:
      return "plane divides entities";
    case FilterStage::kHard:
      return "hard case";
  }
  return "?";
}

std::string mean_microseconds(const FilterStageStats& s, bool timed) {
  if (!timed || s.tests == 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", double(s.nanoseconds) / double(s.tests) / 1000.0);
  return buf;
}

}  // namespace

std::string format_blow_table(const LetsRockRun& run, const LetsRockScene& scene, std::string_view title) {
  std::string out;
  char line[256];
  const auto emit = [&](const char* fmt, auto... args) {
    std::snprintf(line, sizeof line, fmt, args...);
    out += line;
  };
  const FilterStats& stats = run.stats;
  bool timed = false;
  std::uint64_t definitive = 0;
  std::uint64_t blow_definitive = 0;
  for (int i = 0; i < kFilterStageCount; ++i) {
    timed = timed || stats.stages[std::size_t(i)].nanoseconds > 0;
    definitive += stats.stages[std::size_t(i)].definitive;
    blow_definitive += kBlow1997[std::size_t(i)].definitive;
  }
  emit(
      "Let's Rock, %.*s: %d ticks at %d Hz, %zu entities (%d players); tank %d faces, cargo box %d faces "
      "(12 triangles), repair pad %d faces in %zu brushes\n",
      int(title.size()), title.data(), scene.tick_count(), scene.tick_rate(), scene.entities().size(),
      scene.options().players, scene.tank_model().face_count, scene.box_model().face_count,
      scene.pad_model().face_count, scene.pad_model().brushes.size());
  emit(
      "grid pairs %llu, masked %llu, tested %llu (%.1f per tick), within reach %llu, overlapping %llu; "
      "run %.2f ms (%.1f us per tick)\n",
      (unsigned long long)run.grid_pairs, (unsigned long long)run.masked_pairs,
      (unsigned long long)run.tested_pairs,
      run.ticks > 0 ? double(run.tested_pairs) / double(run.ticks) : 0.0, (unsigned long long)run.touching,
      (unsigned long long)run.overlapping, run.seconds * 1e3,
      run.ticks > 0 ? run.seconds * 1e6 / double(run.ticks) : 0.0);
  emit("%-24s %10s %11s %7s %10s | %-11s %7s %10s\n", "", "", "", "", "", "Blow 1997", "", "P166");
  emit("%-24s %10s %11s %7s %10s | %11s %7s %10s\n", "stage", "tests", "definitive", "share", "us/test",
       "definitive", "share", "us/test");
  for (int i = 0; i < kFilterStageCount; ++i) {
    const auto stage = static_cast<FilterStage>(i);
    const FilterStageStats& s = stats[stage];
    const BlowRow& blow = kBlow1997[std::size_t(i)];
    char blow_time[32] = "tiny";
    if (blow.microseconds >= 0) std::snprintf(blow_time, sizeof blow_time, "%.2f", blow.microseconds);
    emit("%-24s %10llu %11llu %6.1f%% %10s | %11llu %6.1f%% %10s\n", blow_name(stage),
         (unsigned long long)s.tests, (unsigned long long)s.definitive,
         definitive > 0 ? 100.0 * double(s.definitive) / double(definitive) : 0.0,
         mean_microseconds(s, timed).c_str(), (unsigned long long)blow.definitive,
         100.0 * double(blow.definitive) / double(blow_definitive), blow_time);
  }
  if (timed) {
    emit("(us/test includes one steady_clock read per stage, %.0f ns here; median of %d runs)\n",
         run.clock_read_ns, run.repetitions);
  }
  out += "tank-pad pair alone (included above), definitive/tests and mean per test:";
  for (int i = 0; i < kFilterStageCount; ++i) {
    const FilterStageStats& s = run.tank_pad_stats.stages[std::size_t(i)];
    emit(" %s %llu/%llu %s us%s", blow_name(static_cast<FilterStage>(i)), (unsigned long long)s.definitive,
         (unsigned long long)s.tests, mean_microseconds(s, timed).c_str(),
         i + 1 < kFilterStageCount ? ";" : "");
  }
  out += "\n";
  emit(
      "touchdown: %d ticks meant to touch, %d found within reach (separation %.4f..%.4f); "
      "tank-pad within reach at other ticks: %d\n",
      run.touchdown_ticks, run.touchdown_touching,
      run.touchdown_touching > 0 ? double(run.touchdown_min_separation) : 0.0,
      run.touchdown_touching > 0 ? double(run.touchdown_max_separation) : 0.0,
      run.tank_pad_touching_elsewhere);
  return out;
}

}  // namespace shiftcast::bench
