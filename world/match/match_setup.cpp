#include "world/match/match_setup.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "collision/pose.hpp"
#include "world/match/world_query.hpp"

namespace shiftcast {

namespace {

// Quake's spawn origin is the centre of the player's 56-unit box seen from a 24-unit-deep bottom half.
constexpr float kSpawnOriginAboveFeet = 24;
// Heights tried above a spawn's feet or a navmesh point when the first overlaps the level: the navmesh's
// floor is within a few units on flat ground and within a step (18) on ramps and stairs (navmesh.hpp).
constexpr std::array<float, 4> kPlayerLifts{1, 4, 10, 20};
// Random points tried per player or prop before giving up on it.
constexpr int kPlacementAttempts = 48;
// Everything placed keeps this far (xy and z) from everything else: far above kContactDistance, so nothing
// starts out touching, small against any prop.
constexpr float kPlacementMargin = 4;
// Props rest on the floor found by a box trace from this far above the navmesh point to this far below:
// the detail mesh can be off by up to a step either way.
constexpr float kFloorProbeUp = 20;
constexpr float kFloorProbeDown = 40;
// Sliding and swinging movers glide this far above the floor: real doors have the gap too, and it keeps
// a turned hull clear of float rounding against the floor it sweeps over.
constexpr float kMoverFloorGap = 1;
// Room left above a lift at the top of its travel for a player riding it (56 tall, plus a hop).
constexpr float kRiderHeadroom = 64;
// A door is checked against the level every this many radians of its swing: its far edge (64 out) moves
// 64 · 0.087 ≈ 5.6 units between samples, less than its 8-unit thickness.
constexpr float kDoorSampleStep = kPi / 36;
// At most this fraction of the projectile budget is topped up per tick, so the first second does not
// launch every projectile in the same tick (they would then all expire together).
constexpr int kTopUpSpreadTicks = 32;
// Landing slots: a cradle's free corner (the crate sits at +x) and how far a drop may land off a crate's
// centre (the player still overhangs an edge, the case that exercises step-off and edge contacts).
constexpr float kCradleCrateX = 20;
constexpr float kCradleSlotX = -22;
constexpr float kCrateSlotJitter = 8;

// The props' shapes (Quake units): lifts and platforms are 16-unit slabs a player steps onto (step 18).
constexpr Vec3 kLiftHalf{32, 32, 8};
constexpr Vec3 kPlatformHalf{48, 32, 8};
constexpr Vec3 kCrateHalf{16, 16, 16};
constexpr Vec3 kDoorSize{64, 8, 96};  // the hinge at the reference point, the leaf along +x
constexpr float kCradleFloorTop = 8;

enum class PropKind : std::uint8_t { kLift, kPlatform, kDoor, kCradle, kCrate };

// The match mix, repeated: in any 8 consecutive props one of each mover kind and a cradle; over 20,
// 2 lifts, 2 platforms, 2 doors, 1 cradle and 13 crates.
constexpr std::array<PropKind, 20> kMatchMix{
    PropKind::kLift,     PropKind::kCrate,  PropKind::kPlatform, PropKind::kCrate, PropKind::kDoor,
    PropKind::kCrate,    PropKind::kCradle, PropKind::kCrate,    PropKind::kLift,  PropKind::kCrate,
    PropKind::kPlatform, PropKind::kCrate,  PropKind::kDoor,     PropKind::kCrate, PropKind::kCrate,
    PropKind::kCrate,    PropKind::kCrate,  PropKind::kCrate,    PropKind::kCrate, PropKind::kCrate};

Aabb box_at(const Shape& box, Vec3 position) {
  return {position + box.offset - box.half_extents, position + box.offset + box.half_extents};
}

Aabb grown(Aabb b, float by) {
  b.min -= Vec3{by, by, by};
  b.max += Vec3{by, by, by};
  return b;
}

float distance_xy(Vec3 a, Vec3 b) {
  return std::hypot(b.x - a.x, b.y - a.y);
}

}  // namespace

TickTimeSummary summarize_tick_times(std::vector<double> ms) {
  TickTimeSummary s;
  s.count = ms.size();
  if (ms.empty()) return s;
  std::sort(ms.begin(), ms.end());
  const auto rank = [&](double p) { return ms[std::size_t(std::ceil(p * double(ms.size()))) - 1]; };
  s.p50 = rank(0.50);
  s.p99 = rank(0.99);
  s.max = ms.back();
  double sum = 0;
  for (double v : ms)
    sum += v;
  s.mean = sum / double(ms.size());
  return s;
}

const char* to_string(SceneKind kind) {
  return kind == SceneKind::kLanding ? "landing" : "match";
}

std::optional<SceneKind> parse_scene_kind(std::string_view text) {
  if (text == "match") return SceneKind::kMatch;
  if (text == "landing") return SceneKind::kLanding;
  return std::nullopt;
}

MatchSetup::MatchSetup(const BspTree& tree, const Level& level, const NavMesh* navmesh,
                       const SimulationConfig& sim_config, const MatchSetupConfig& config)
    : tree_(tree),
      level_(level),
      navmesh_(navmesh),
      config_(config),
      sim_(std::make_unique<Simulation>(tree, navmesh, sim_config)),
      rng_state_(bot_seed(config.seed, 0xffffffffu)) {
  config_.bot.tick_rate = sim_->config().tick_rate;
  nav_rng_ = next();
}

MatchSetup::~MatchSetup() = default;

MatchSetupResult MatchSetup::create(const BspTree& tree, const Level& level, const NavMesh* navmesh,
                                    const SimulationConfig& sim_config, const MatchSetupConfig& config) {
  MatchSetupResult result;
  if (navmesh == nullptr) {
    result.error = "the level has no navmesh (compile it with shiftcast-level import)";
    return result;
  }
  if (config.players < 0 || config.projectiles < 0 || config.props < 0) {
    result.error = "negative player, projectile or prop count";
    return result;
  }
  std::unique_ptr<MatchSetup> scene(new MatchSetup(tree, level, navmesh, sim_config, config));
  result.error = scene->populate();
  if (result.error.empty()) result.scene = std::move(scene);
  return result;
}

MatchSetupResult make_hosted_match_setup(const BspTree& tree, const Level& level, const NavMesh* navmesh,
                                         const HostedMatchOptions& setup) {
  SimulationConfig sim;
  sim.tick_rate = setup.tick_rate;
  sim.level_check_period = setup.level_check_period;
  MatchSetupConfig scene;
  scene.players = 0;
  scene.projectiles = 0;
  scene.props = setup.props;
  scene.seed = setup.seed;
  return MatchSetup::create(tree, level, navmesh, sim, scene);
}

std::uint32_t MatchSetup::next() {
  // splitmix32: a Weyl step hashed; fixed, platform-independent, and any state (0 included) is fine.
  rng_state_ += 0x9e3779b9u;
  std::uint32_t z = rng_state_;
  z = (z ^ (z >> 16)) * 0x85ebca6bu;
  z = (z ^ (z >> 13)) * 0xc2b2ae35u;
  return z ^ (z >> 16);
}

float MatchSetup::uniform(float lo, float hi) {
  return lo + (hi - lo) * (float(next() >> 8) * (1.0f / 16777216.0f));
}

std::optional<Vec3> MatchSetup::random_walkable() {
  return nav_->random_point(nav_rng_);
}

bool MatchSetup::box_is_clear(const Aabb& box) const {
  const Aabb b = grown(box, kPlacementMargin);
  return std::none_of(placed_.begin(), placed_.end(), [&](const Aabb& p) { return p.overlaps(b); });
}

std::string MatchSetup::populate() {
  nav_ = std::make_unique<NavQuery>(*navmesh_);
  if (!nav_->ok()) return "Detour could not allocate a navmesh query";
  const auto add = [&](PropModelResult made, int& index) {
    if (!made.ok()) return made.error;
    index = sim_->add_model(std::move(made.model));
    return std::string();
  };
  std::vector<Vec3> door;
  for (int i = 0; i < 8; ++i) {
    door.push_back(
        {(i & 1) ? kDoorSize.x : 0, (i & 2) ? kDoorSize.y / 2 : -kDoorSize.y / 2, (i & 4) ? kDoorSize.z : 0});
  }
  const std::vector<Brush> cradle{brush_from_box({-48, -40, 0}, {48, 40, kCradleFloorTop}),
                                  brush_from_box({-48, -40, kCradleFloorTop}, {-40, 40, 48}),
                                  brush_from_box({40, -40, kCradleFloorTop}, {48, 40, 48})};
  for (std::string error : {add(make_box_model("lift", kLiftHalf), lift_model_),
                            add(make_box_model("platform", kPlatformHalf), platform_model_),
                            add(make_hull_model("door", door), door_model_),
                            add(make_brush_model("cradle", cradle), cradle_model_),
                            add(make_box_model("crate", kCrateHalf), crate_model_)}) {
    if (!error.empty()) return "prop model: " + error;
  }
  if (config_.kind == SceneKind::kMatch) {
    place_players();
    if (counts_.players == 0 && config_.players > 0) return "no player could be placed on this level";
  }
  place_props();
  settle();
  return {};
}

// ------------------------------------------------------------------------------------------- players

void MatchSetup::place_players() {
  const Shape cylinder = player_shape(sim_->config().motor);
  const auto try_feet = [&](Vec3 feet, float yaw) {
    for (float lift : kPlayerLifts) {
      const Vec3 at = feet + Vec3{0, 0, lift};
      const Aabb box{at - Vec3{cylinder.radius, cylinder.radius, 0},
                     at + Vec3{cylinder.radius, cylinder.radius, cylinder.height}};
      if (tree_.overlap(cylinder, at).overlap || !box_is_clear(box)) continue;
      players_.push_back(sim_->add_player(at, yaw));
      placed_.push_back(box);
      return true;
    }
    return false;
  };
  for (const SpawnPoint& spawn : level_.spawns) {
    if (int(players_.size()) >= config_.players) break;
    const float yaw = spawn.yaw_degrees * (kPi / 180);
    if (try_feet(spawn.origin - Vec3{0, 0, kSpawnOriginAboveFeet}, yaw)) ++counts_.players_at_spawns;
  }
  while (int(players_.size()) < config_.players) {
    bool placed = false;
    for (int attempt = 0; attempt < kPlacementAttempts && !placed; ++attempt) {
      if (const std::optional<Vec3> p = random_walkable()) placed = try_feet(*p, uniform(-kPi, kPi));
    }
    if (!placed) break;
  }
  counts_.players = int(players_.size());
  for (std::size_t i = 0; i < players_.size(); ++i)
    bots_.emplace_back(config_.bot, config_.seed, std::uint32_t(i));
}

// --------------------------------------------------------------------------------------------- props

void MatchSetup::place_props() {
  if (config_.kind == SceneKind::kMatch) {
    for (int i = 0; i < config_.props; ++i) {
      const PropKind kind = kMatchMix[std::size_t(i) % kMatchMix.size()];
      const bool ok = kind == PropKind::kCrate ? place_crate(std::nullopt) : place_mover(int(kind));
      if (!ok) ++counts_.props_skipped;
    }
    return;
  }
  // Landing: a quarter cradles, each with a crate dropped into one end, the rest crates on the floor.
  const int cradles = config_.props == 0 ? 0 : std::max(1, config_.props / 4);
  int used = 0;
  for (int i = 0; i < cradles; ++i) {
    ++used;
    if (!place_mover(int(PropKind::kCradle))) {
      ++counts_.props_skipped;
      continue;
    }
    if (used >= config_.props) break;
    ++used;
    const Vec3 floor = sim_->entities().back().pose.position + Vec3{kCradleCrateX, 0, kCradleFloorTop};
    if (!place_crate(floor)) ++counts_.props_skipped;
  }
  for (; used < config_.props; ++used) {
    if (!place_crate(std::nullopt)) ++counts_.props_skipped;
  }
}

bool MatchSetup::place_mover(int kind_index) {
  const PropKind kind = PropKind(kind_index);
  const bool landing = config_.kind == SceneKind::kLanding;
  const int model = kind == PropKind::kLift       ? lift_model_
                    : kind == PropKind::kPlatform ? platform_model_
                    : kind == PropKind::kDoor     ? door_model_
                                                  : cradle_model_;
  const PropModel& m = sim_->model(model);
  // Translating movers are traced as their (axis-aligned, yaw 0) local box; a door's rest height is found
  // with a small box under its hinge and its swing checked as turned hulls below.
  const Shape box = kind == PropKind::kDoor ? Shape::box({4, 4, 4}, {0, 0, 4})
                                            : Shape::box(m.local_box.size() * 0.5f, m.local_box.center());
  const float bottom = box.offset.z - box.half_extents.z;
  for (int attempt = 0; attempt < kPlacementAttempts; ++attempt) {
    const std::optional<Vec3> p = random_walkable();
    if (!p) continue;
    const Vec3 probe = *p - Vec3{0, 0, bottom};
    const TraceResult floor =
        tree_.trace(box, probe + Vec3{0, 0, kFloorProbeUp}, probe - Vec3{0, 0, kFloorProbeDown});
    if (!floor.hit || floor.start_solid) continue;
    const Vec3 start = floor.end_position + Vec3{0, 0, kMoverFloorGap};
    const float hold = uniform(0.5f, 1.5f);
    std::vector<PathKey> keys;
    Aabb swept;
    if (kind == PropKind::kDoor) {
      const float yaw0 = uniform(-kPi, kPi);
      const float swing = (next() & 1u) != 0 ? kPi / 2 : -kPi / 2;
      bool clear = true;
      std::array<Vec3, 8> turned;
      for (float a = 0; a <= kPi / 2 + kDoorSampleStep / 2 && clear; a += kDoorSampleStep) {
        const float yaw = yaw0 + std::copysign(std::min(a, kPi / 2), swing);
        for (std::size_t v = 0; v < turned.size(); ++v) {
          turned[v] = rotate_z(m.vertices[v % m.vertices.size()], std::cos(yaw), std::sin(yaw));
          swept.grow(start + turned[v]);
        }
        clear = !tree_.overlap(Shape::hull(turned), start).overlap;
      }
      if (!clear || !box_is_clear(swept)) continue;
      const float swing_time = uniform(0.75f, 1.5f);
      keys = {{{start, yaw0}, 0},
              {{start, yaw0}, hold},
              {{start, yaw0 + swing}, hold + swing_time},
              {{start, yaw0 + swing}, 2 * hold + swing_time}};
    } else {
      Vec3 travel{0, 0, uniform(64, 128)};
      bool lift = kind == PropKind::kLift || (kind == PropKind::kCradle && (next() & 1u) != 0);
      if (landing) travel = {};  // landing cradles hold still: the structure players land in
      if (kind == PropKind::kPlatform || (kind == PropKind::kCradle && !lift && !landing)) {
        const float distance = uniform(96, 192);
        const std::uint32_t d = next() & 3u;
        travel = {d == 0 ? distance : (d == 1 ? -distance : 0), d == 2 ? distance : (d == 3 ? -distance : 0),
                  0};
        lift = false;
      }
      const Vec3 end = start + travel;
      const Vec3 check_to = end + Vec3{0, 0, lift ? kRiderHeadroom : 0};
      const TraceResult path = tree_.trace(box, start, check_to);
      if (path.hit || path.start_solid) continue;
      swept = box_at(box, start);
      swept.grow(box_at(box, check_to));
      if (!box_is_clear(swept)) continue;
      if (landing) {
        keys = {{{start, 0}, 0}};
      } else {
        const float travel_time = length(travel) / uniform(64, 128);
        keys = {{{start, 0}, 0},
                {{start, 0}, hold},
                {{end, 0}, hold + travel_time},
                {{end, 0}, 2 * hold + travel_time}};
      }
    }
    MoverPath path = MoverPath::make(std::move(keys), landing ? PathMode::kOnce : PathMode::kPingPong);
    if (path.empty()) continue;
    const EntityId id = sim_->add_kinematic_prop(model, std::move(path));
    placed_.push_back(swept);
    switch (kind) {
      case PropKind::kLift:
        ++counts_.lifts;
        break;
      case PropKind::kPlatform:
        ++counts_.platforms;
        break;
      case PropKind::kDoor:
        ++counts_.doors;
        break;
      default:
        ++counts_.cradles;
        if (landing) structures_.push_back(id);
        break;
    }
    return true;
  }
  return false;
}

bool MatchSetup::place_crate(std::optional<Vec3> above) {
  // A crate turned by any yaw stays inside this axis-aligned box: the level check is conservative.
  const float reach_xy = kCrateHalf.x * std::sqrt(2.0f);
  const Shape cover = Shape::box({reach_xy, reach_xy, kCrateHalf.z});
  for (int attempt = 0; attempt < (above ? 1 : kPlacementAttempts); ++attempt) {
    const std::optional<Vec3> p = above ? above : random_walkable();
    if (!p) continue;
    const Vec3 centre = *p + Vec3{0, 0, kCrateHalf.z + uniform(32, 64)};
    // In a cradle the crate stays square to it, so it clears the walls (4 units each side of x = 20 ± 16).
    const float yaw = above ? 0 : uniform(-kPi, kPi);
    if (tree_.overlap(cover, centre).overlap) continue;
    const Aabb column{*p - Vec3{reach_xy, reach_xy, 0}, centre + Vec3{reach_xy, reach_xy, kCrateHalf.z}};
    // A crate dropped into a cradle is inside the cradle's box by design: the cradle is the last thing
    // placed, so it alone is left out of the check.
    const Aabb cradle = above && !placed_.empty() ? placed_.back() : Aabb{};
    if (above) placed_.pop_back();
    const bool clear = box_is_clear(column);
    if (above) placed_.push_back(cradle);
    if (!clear) continue;
    const EntityId id = sim_->add_crate(crate_model_, {centre, yaw});
    placed_.push_back(column);
    if (config_.kind == SceneKind::kLanding) structures_.push_back(id);
    ++counts_.crates;
    return true;
  }
  return false;
}

void MatchSetup::settle() {
  const int ticks = int(std::lround(config_.settle_seconds * float(sim_->config().tick_rate)));
  for (int i = 0; i < ticks; ++i)
    sim_->step();
}

// ------------------------------------------------------------------------------------------- the tick

int MatchSetup::projectiles_alive() const {
  int alive = 0;
  for (const Entity& e : sim_->entities())
    alive += e.kind == EntityKind::kProjectile ? 1 : 0;
  return alive;
}

void MatchSetup::step() {
  before_step();
  sim_->step();
  after_step();
}

void MatchSetup::before_step() {
  if (config_.kind == SceneKind::kLanding) {
    if (ticks_to_next_drop_ <= 0) {
      drop_players();
      ticks_to_next_drop_ =
          std::max(1, int(std::lround(config_.landing_period_seconds * float(config_.bot.tick_rate))));
    }
    --ticks_to_next_drop_;
    top_up_projectiles(0);
  } else {
    top_up_projectiles(drive_bots());
  }
}

void MatchSetup::after_step() {
  last_in_window_ = window_open_;
  if (!window_open_) return;
  ++window_ticks_;
  landed_ = 0;
  for (EntityId id : players_) {
    const MotorState* motor = sim_->motor_state(id);
    landed_ += motor != nullptr && motor->on_ground ? 1 : 0;
  }
  // A player that never lands (it fell off everything) must not keep the window open past the next drop.
  if (landed_ == int(players_.size()) || ticks_to_next_drop_ <= 0) window_open_ = false;
}

int MatchSetup::drive_bots() {
  feet_scratch_.clear();
  for (EntityId id : players_) {
    const Entity* e = sim_->find(id);
    feet_scratch_.push_back(e != nullptr ? e->pose.position : Vec3{});
  }
  // Bots fire at their own rate whenever the budget is not exceeded by more than one volley of theirs;
  // top-ups only fill what they leave, so the bots' shots replace top-ups rather than being crowded out.
  const bool may_fire = projectiles_alive() < config_.projectiles + int(players_.size());
  int presses = 0;
  for (std::size_t i = 0; i < players_.size(); ++i) {
    if (sim_->find(players_[i]) == nullptr) continue;
    const BotSenses senses{.feet = feet_scratch_[i],
                           .motor = sim_->motor_state(players_[i]),
                           .players = feet_scratch_,
                           .self = int(i),
                           .may_fire = may_fire,
                           .level = &tree_};
    const PlayerInput input = bots_[i].think(*nav_, senses);
    presses += (input.buttons & kButtonFire) != 0 ? 1 : 0;
    sim_->set_input(players_[i], input);
  }
  return presses;
}

void MatchSetup::top_up_projectiles(int bot_presses) {
  if (players_.empty() || config_.projectiles <= 0) return;
  // The bots' shots come first (each press is at most one shot this tick): top-ups fill what they leave.
  const int wanted = std::min(config_.projectiles - projectiles_alive() - bot_presses,
                              std::max(1, config_.projectiles / kTopUpSpreadTicks));
  const Shape sphere = Shape::sphere(sim_->config().projectile_radius);
  for (int k = 0; k < wanted; ++k) {
    const EntityId owner = players_[std::size_t((std::uint64_t(next()) * players_.size()) >> 32)];
    const float yaw = uniform(-kPi, kPi);
    const Entity* player = sim_->find(owner);
    if (player == nullptr) continue;
    const Vec3 eye = player->pose.position + Vec3{0, 0, config_.bot.eye_height};
    // Never start inside the level or a player or prop (that would be an overlap the tick must repair).
    const WorldOverlap o =
        world_overlap(tree_, sim_->entities(), sphere, {eye, 0}, {.mask = kMaskProjectile, .ignore = owner});
    if (o.status != QueryStatus::kOk || o.brush != kNoBrush || !o.entities.empty()) continue;
    sim_->add_projectile(eye, Vec3{std::cos(yaw), std::sin(yaw), 0} * sim_->config().projectile_speed, owner);
    ++topped_up_;
  }
}

void MatchSetup::drop_players() {
  for (EntityId id : players_)
    sim_->remove(id);
  players_.clear();
  feet_scratch_.clear();
  ++drops_;
  const Shape cylinder = player_shape(sim_->config().motor);
  // One height for the whole drop: every player falls the same distance, so all land in the same tick.
  const float height = uniform(64, 128);
  // How far below the landing surface the check sweep reaches: anything within it is what they land on.
  constexpr float kLandingProbe = 8;
  struct Slot {
    Vec3 surface;
    EntityId on;
  };
  std::vector<Slot> slots;
  for (EntityId id : structures_) {
    const Entity* e = sim_->find(id);
    if (e == nullptr) continue;
    if (e->motion == PropMotion::kCrate) {
      const Vec3 jitter{uniform(-kCrateSlotJitter, kCrateSlotJitter),
                        uniform(-kCrateSlotJitter, kCrateSlotJitter), kCrateHalf.z};
      slots.push_back({e->pose.position + jitter, id});
    } else {
      slots.push_back({to_world(e->pose, Vec3{kCradleSlotX, 0, kCradleFloorTop}), id});
    }
  }
  for (std::size_t i = slots.size(); i > 1; --i) {
    std::swap(slots[i - 1], slots[std::size_t((std::uint64_t(next()) * i) >> 32)]);
  }
  const auto try_drop = [&](Vec3 surface, EntityId on) {
    const Vec3 feet = surface + Vec3{0, 0, height};
    for (Vec3 other : feet_scratch_) {
      if (distance_xy(other, feet) < 2 * cylinder.radius + kPlacementMargin) return;
    }
    if (tree_.overlap(cylinder, feet).overlap) return;
    const WorldHit below =
        sim_->sweep(cylinder, feet, surface - Vec3{0, 0, kLandingProbe}, {.mask = kLayerPlayer | kLayerProp});
    if (below.trace.start_solid || !below.trace.hit || (on != kNoEntity && below.entity != on)) return;
    players_.push_back(sim_->add_player(feet, uniform(-kPi, kPi)));
    feet_scratch_.push_back(feet);
  };
  for (const Slot& slot : slots) {
    if (int(players_.size()) >= config_.players) break;
    try_drop(slot.surface, slot.on);
  }
  for (int attempt = 0;
       int(players_.size()) < config_.players && attempt < kPlacementAttempts * config_.players; ++attempt) {
    if (const std::optional<Vec3> p = random_walkable()) try_drop(*p, kNoEntity);
  }
  counts_.players = int(players_.size());
  window_open_ = !players_.empty();
  window_ticks_ = 0;
  landed_ = 0;
}

}  // namespace shiftcast
