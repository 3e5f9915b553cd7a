#include "world/match/simulation.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "world/level/level.hpp"
#include "world/match/simulation_state_internal.hpp"

namespace shiftcast {

namespace {

constexpr int kMinTickRate = 20;
constexpr int kMaxTickRate = 128;

int history_ticks(const SimulationConfig& config) {
  return std::max(2, int(std::ceil(config.history_seconds * float(config.tick_rate))) + 1);
}

SimulationConfig sanitized(SimulationConfig config) {
  config.tick_rate = std::clamp(config.tick_rate, kMinTickRate, kMaxTickRate);
  config.projectile_speed = std::min(config.projectile_speed, config.max_speed);
  return config;
}

// Drops the entities removed during the tick (projectiles that hit, re-placement failures).
void compact(SimulationState& s) {
  const std::size_t before = s.entities.size();
  std::size_t out = 0;
  s.removed.clear();
  for (std::size_t i = 0; i < s.entities.size(); ++i) {
    if (s.extras[i].dead) {
      s.grid.remove(s.entities[i].id);
      s.removed.push_back(s.entities[i].id);
      continue;
    }
    if (out != i) {
      s.entities[out] = s.entities[i];

      s.extras[out] = std::move(s.extras[i]);
    }
    ++out;
  }
  s.cascade.forget(s.removed);
  s.entities.resize(out);
  if (out != before) s.index.rebuild(s.entities);
  s.extras.resize(out);
}

}  // namespace

// ---- IdIndex ----------------------------------------------------------------------------------------

void IdIndex::rebuild(std::span<const Entity> entities) {
  // At most half full, so probes stay short.
  std::size_t size = 16;
  while (size < 2 * entities.size() + 2)
    size *= 2;
  table_.assign(size, Slot{});
  mask_ = size - 1;
  count_ = 0;
  for (std::size_t i = 0; i < entities.size(); ++i)
    insert(entities[i].id, int(i));
}

void IdIndex::insert(EntityId id, int index) {
  if (2 * (count_ + 1) > table_.size()) {
    // Grow: re-insert what is there (ids and indices are all kept in the table itself).
    std::vector<Slot> old = std::move(table_);
    std::size_t size = std::max<std::size_t>(16, old.size() * 2);
    table_.assign(size, Slot{});
    mask_ = size - 1;
    count_ = 0;
    for (const Slot& slot : old) {
      if (slot.id != kNoEntity) insert(slot.id, slot.index);
    }
  }
  std::size_t i = hash(id);
  while (table_[i].id != kNoEntity && table_[i].id != id)
    i = (i + 1) & mask_;
  if (table_[i].id == kNoEntity) ++count_;
  table_[i] = {id, index};
}

// ---- SimulationState -------------------------------------------------------------------------------

SimulationState::SimulationState(const BspTree& level_tree, const NavMesh* nav, const SimulationConfig& cfg)
    : level(level_tree),
      navmesh(nav),
      config(sanitized(cfg)),
      dt(1.0f / float(config.tick_rate)),
      models(std::make_shared<std::vector<std::unique_ptr<PropModel>>>()),
      grid(config.grid_cell > 0 ? config.grid_cell : 128.0f),
      grid_sized(config.grid_cell > 0),
      cascade(FilterOptions{
          .reach = kContactDistance, .use_plane_cache = true, .measure_time = config.measure_filter_time}),
      history(history_ticks(config)) {
  if (navmesh != nullptr) {
    nav_query = std::make_unique<NavQuery>(*navmesh);
    if (!nav_query->ok()) nav_query.reset();
  }
}

int SimulationState::index_of(EntityId id) const {
  return index.find(id);
}

Entity* SimulationState::find(EntityId id) {
  const int i = index_of(id);
  return i < 0 ? nullptr : &entities[std::size_t(i)];
}

EntityId SimulationState::add(Entity entity, EntityExtra extra) {
  entity.id = next_id++;
  compute_entity_bounds(entity);
  extra.start_pose = entity.pose;
  // Ids only grow, so appending keeps the arrays sorted by id.
  entities.push_back(entity);
  index.insert(entity.id, int(entities.size()) - 1);
  extras.push_back(std::move(extra));
  if (grid_sized) place_in_grid(entity, entity.pose);
  return entity.id;
}

void SimulationState::place_in_grid(const Entity& e, const Pose& from) {
  Aabb box = world_box(e, e.pose);
  if (!(from == e.pose)) box.grow(world_box(e, from));
  // Grown by the contact distance, so two entities close enough to touch always share a cell.
  const Vec3 reach{kContactDistance, kContactDistance, kContactDistance};
  box.min -= reach;
  box.max += reach;
  grid.update(e.id, box);
}

// ---- Simulation --------------------------------------------------------------------------------------

Simulation::Simulation(const BspTree& level, const NavMesh* navmesh, const SimulationConfig& config)
    : state_(std::make_unique<SimulationState>(level, navmesh, config)) {}

Simulation::~Simulation() = default;

const char* to_string(SpawnRefusal refusal) {
  switch (refusal) {
    case SpawnRefusal::kNone:
      return "none";
    case SpawnRefusal::kNonFinite:
      return "non-finite position, yaw or velocity";
    case SpawnRefusal::kBadModel:
      return "unknown model";
    case SpawnRefusal::kEmptyPath:
      return "empty path";
  }
  return "unknown";
}

EntityId SimulationState::refuse(SpawnRefusal why) {
  last_refusal = why;
  ++counters.refused_spawns;
  return kNoEntity;
}

const PropModel* SimulationState::model_at(int index) const {
  if (index < 0 || std::size_t(index) >= models->size()) return nullptr;
  return (*models)[std::size_t(index)].get();
}

int Simulation::add_model(std::unique_ptr<PropModel> model) {
  if (model == nullptr) {
    state_->refuse(SpawnRefusal::kBadModel);
    return -1;
  }
  state_->models->push_back(std::move(model));
  return int(state_->models->size()) - 1;
}

SpawnRefusal Simulation::last_refusal() const {
  return state_->last_refusal;
}

const PropModel& Simulation::model(int index) const {
  return *(*state_->models)[std::size_t(index)];
}

EntityId Simulation::add_player(Vec3 feet, float yaw) {
  if (!is_finite(feet) || !std::isfinite(yaw)) return state_->refuse(SpawnRefusal::kNonFinite);
  Entity e;
  e.kind = EntityKind::kPlayer;
  e.shape = player_shape(state_->config.motor);
  e.pose = {feet, yaw};
  e.layer = kLayerPlayer;
  e.mask = kMaskPlayer;
  return state_->add(e, {});
}

EntityId Simulation::add_projectile(Vec3 centre, Vec3 velocity, EntityId owner) {
  if (!is_finite(centre) || !is_finite(velocity)) return state_->refuse(SpawnRefusal::kNonFinite);
  const float speed = length(velocity);
  if (speed > state_->config.max_speed) {
    ++state_->counters.speed_clamps;
    velocity = velocity * (state_->config.max_speed / speed);
  }
  Entity e;
  e.kind = EntityKind::kProjectile;
  e.shape = Shape::sphere(state_->config.projectile_radius);
  e.pose = {centre, 0};
  e.velocity = velocity;
  e.layer = kLayerProjectile;
  e.mask = kMaskProjectile;
  e.owner = owner;
  return state_->add(e, {});
}

EntityId Simulation::add_kinematic_prop(int model_index, MoverPath path) {
  const PropModel* found = state_->model_at(model_index);
  if (found == nullptr) return state_->refuse(SpawnRefusal::kBadModel);
  if (path.empty()) return state_->refuse(SpawnRefusal::kEmptyPath);
  const PropModel& m = *found;
  Entity e;
  e.kind = EntityKind::kProp;
  e.motion = PropMotion::kKinematic;
  e.model = &m;
  e.shape = model_shape(m);
  e.pose = path.at(0);
  e.layer = kLayerProp;
  e.mask = kMaskProp;
  EntityExtra extra;
  extra.path = std::move(path);
  extra.path_start = time();
  return state_->add(e, std::move(extra));
}

EntityId Simulation::add_crate(int model_index, const Pose& pose) {
  const PropModel* found = state_->model_at(model_index);
  if (found == nullptr) return state_->refuse(SpawnRefusal::kBadModel);
  if (!is_finite(pose.position) || !std::isfinite(pose.yaw)) return state_->refuse(SpawnRefusal::kNonFinite);
  const PropModel& m = *found;
  Entity e;
  e.kind = EntityKind::kProp;
  e.motion = PropMotion::kCrate;
  e.model = &m;
  e.shape = model_shape(m);
  e.pose = pose;
  e.layer = kLayerProp;
  e.mask = kMaskProp;
  return state_->add(e, {});
}

bool Simulation::remove(EntityId id) {
  SimulationState& s = *state_;
  const int i = s.index_of(id);
  if (i < 0) return false;
  s.entities.erase(s.entities.begin() + i);
  s.index.rebuild(s.entities);
  s.extras.erase(s.extras.begin() + i);
  s.grid.remove(id);
  s.cascade.forget(id);
  s.tracker.forget(id);
  return true;
}

void Simulation::set_input(EntityId player, const PlayerInput& input) {
  SimulationState& s = *state_;
  const int i = s.index_of(player);
  if (i < 0 || s.entities[std::size_t(i)].kind != EntityKind::kPlayer) return;
  EntityExtra& x = s.extras[std::size_t(i)];
  x.commands.clear();
  x.has_commands = false;  // the latest call wins: this input, once per tick
  if (!input_valid(input)) {
    ++s.counters.invalid_inputs;
    x.input = {};
    return;
  }
  x.input = input;
}

void Simulation::set_inputs(EntityId player, std::span<const PlayerInput> commands) {
  SimulationState& s = *state_;
  const int i = s.index_of(player);
  if (i < 0 || s.entities[std::size_t(i)].kind != EntityKind::kPlayer) return;
  EntityExtra& x = s.extras[std::size_t(i)];
  x.commands.clear();
  x.has_commands = true;
  for (const PlayerInput& input : commands) {
    if (input_valid(input)) {
      x.commands.push_back(input);
    } else {
      ++s.counters.invalid_inputs;
      x.commands.push_back({});
    }
  }
}

void Simulation::step() {
  SimulationState& s = *state_;
  if (!s.grid_sized) {
    // Blow's rule: cells at least the largest entity's bounding diameter. Players and projectiles set
    // it; a prop sets it only if it is under twice their size (bigger ones go oversize instead of making
    // every cell hold a crowd), and kinematic props (few, large, on fixed paths) never do. Before any
    // player exists, the size a player will have stands in. The cells are only a
    // cull: any size gives the same candidates after the exact tests, so the same state; only the pair
    // walk's length changes (oa_dm1's match: cells of 142 units before, when the motor's height + radius
    // stood in for a player's size, against 70 now).
    float movers = 0;
    for (const Entity& e : s.entities) {
      if (e.kind != EntityKind::kProp) movers = std::max(movers, e.bound_radius);
    }
    if (movers == 0) {
      Entity player;  // none yet (they join later): the size one will have
      player.shape = player_shape(s.config.motor);
      compute_entity_bounds(player);
      movers = player.bound_radius;
    }
    float largest = movers;
    for (const Entity& e : s.entities) {
      if (e.kind == EntityKind::kProp && e.motion != PropMotion::kKinematic && e.bound_radius < 2 * movers)
        largest = std::max(largest, e.bound_radius);
    }
    s.grid = Grid(Grid::derive_cell_size(largest));
    s.grid_sized = true;
    // Entities added before the grid had its size wait for it here; later ones enter in add().
    for (const Entity& e : s.entities)
      s.place_in_grid(e, e.pose);
  }
  s.last_tick = {};
  s.last_tick.tick = s.tick + 1;
  for (std::size_t i = 0; i < s.entities.size(); ++i)
    s.extras[i].start_pose = s.entities[i].pose;

  move_kinematic_props(s);
  move_players(s);
  move_crates(s);
  move_projectiles(s);

  compact(s);
  // Projectiles fired this tick join after everyone moved, so they fly from the next tick on.
  for (Entity& e : s.spawned)
    s.add(e, {});
  s.spawned.clear();

  check_pairs_and_invariants(s);
  compact(s);

  ++s.tick;
  s.tracker.finish(s.tick, s.contacts);
  s.last_tick.contacts = int(s.contacts.size());
  s.counters.contacts += s.contacts.size();
  s.counters.toi_searches += std::uint64_t(s.last_tick.toi_searches);
  ++s.counters.ticks;

  auto view = std::make_shared<WorldView>();
  view->tick = s.tick;
  view->entities = s.entities;
  view->models = s.models;
  s.history.publish(std::move(view));
}

std::uint64_t Simulation::tick() const {
  return state_->tick;
}
double Simulation::time() const {
  return double(state_->tick) / double(state_->config.tick_rate);
}
std::span<const Contact> Simulation::contacts() const {
  return state_->contacts;
}
const TickStats& Simulation::last_tick() const {
  return state_->last_tick;
}
const SimulationCounters& Simulation::counters() const {
  return state_->counters;
}
std::span<const Entity> Simulation::entities() const {
  return state_->entities;
}
const BspTree& Simulation::level() const {
  return state_->level;
}
const SimulationConfig& Simulation::config() const {
  return state_->config;
}
const Grid& Simulation::grid() const {
  return state_->grid;
}
const TickHistory& Simulation::history() const {
  return state_->history;
}

const Entity* Simulation::find(EntityId id) const {
  const int i = state_->index_of(id);
  return i < 0 ? nullptr : &state_->entities[std::size_t(i)];
}

const MotorState* Simulation::motor_state(EntityId player) const {
  const int i = state_->index_of(player);
  if (i < 0 || state_->entities[std::size_t(i)].kind != EntityKind::kPlayer) return nullptr;
  return &state_->extras[std::size_t(i)].motor;
}

std::uint64_t Simulation::state_hash() const {
  const SimulationState& s = *state_;
  // FNV-1a over the exact bits of everything that evolves: two runs agree only if every float agrees.
  std::vector<std::uint32_t> words;
  words.reserve(4 + s.entities.size() * 16);
  const auto put = [&](float f) { words.push_back(std::bit_cast<std::uint32_t>(f)); };
  const auto put3 = [&](Vec3 v) {
    put(v.x);
    put(v.y);
    put(v.z);
  };
  words.push_back(std::uint32_t(s.tick));
  words.push_back(std::uint32_t(s.tick >> 32));
  for (std::size_t i = 0; i < s.entities.size(); ++i) {
    const Entity& e = s.entities[i];
    const EntityExtra& x = s.extras[i];
    words.push_back(e.id);
    words.push_back(std::uint32_t(e.kind) | (std::uint32_t(e.asleep) << 8));
    put3(e.pose.position);
    put(e.pose.yaw);
    put3(e.velocity);
    put3(x.motor.velocity);
    words.push_back(std::uint32_t(x.motor.on_ground) | (std::uint32_t(x.motor.ground_entity) << 1));
  }
  return fnv1a64(words.data(), words.size() * sizeof(std::uint32_t));
}

namespace {

// The entities the grid finds within `radius` of the segment, copied for the world queries.
std::vector<Entity> grid_candidates(const SimulationState& s, Vec3 from, Vec3 to, float radius) {
  std::vector<EntityId> ids;
  std::vector<Entity> candidates;
  s.grid.query_sweep(from, to, radius, ids);
  for (EntityId id : ids) {
    const int i = s.index_of(id);
    if (i >= 0) candidates.push_back(s.entities[std::size_t(i)]);
  }
  return candidates;
}

}  // namespace

WorldHit Simulation::raycast(Vec3 origin, Vec3 direction, float max_distance,
                             const QueryFilter& filter) const {
  const SimulationState& s = *state_;
  std::vector<Entity> candidates;
  const float len = length(direction);
  if (len > 0 && std::isfinite(len) && std::isfinite(max_distance)) {
    candidates = grid_candidates(s, origin, origin + direction * (max_distance / len), 0);
  }
  return world_raycast(s.level, candidates, origin, direction, max_distance, filter);
}

WorldHit Simulation::sweep(const Shape& shape, Vec3 from, Vec3 to, const QueryFilter& filter) const {
  const SimulationState& s = *state_;
  std::vector<Entity> candidates;
  if (is_finite(from) && is_finite(to) && shape.valid())
    candidates = grid_candidates(s, from, to, shape.reach());
  return world_sweep(s.level, candidates, shape, from, to, filter);
}

}  // namespace shiftcast
