// SimulationState: everything one match owns, and the tick's phases as functions over it. Internal to
// world/match/: the public face is Simulation (simulation.hpp). Each phase lives in its own file:
//   kinematic_props.cpp  movers follow their paths, carry riders, push or are blocked by players
//   players.cpp          the character motor against the level and entities, firing
//   crates.cpp           falling props that come to rest and sleep
//   projectiles.cpp      swept spheres, exact time of impact, resolved in time-of-impact order
//   invariants.cpp       the cascade over grid pairs: contacts, overlap checks, re-placement
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "collision/time_of_impact.hpp"
#include "world/level/navmesh.hpp"
#include "world/match/entity_sweep.hpp"
#include "world/match/simulation.hpp"

namespace shiftcast {

// Entity id → index in SimulationState::entities: an open-addressing table rebuilt whenever indices
// change (add, remove, compaction), so a lookup is one or two probes instead of a binary search.
class IdIndex {
 public:
  void rebuild(std::span<const Entity> entities);
  void insert(EntityId id, int index);
  int find(EntityId id) const {
    if (table_.empty()) return -1;
    for (std::size_t i = hash(id);; i = (i + 1) & mask_) {
      const Slot& slot = table_[i];
      if (slot.id == id) return slot.index;
      if (slot.id == kNoEntity) return -1;
    }
  }

 private:
  struct Slot {
    EntityId id = kNoEntity;
    int index = -1;
  };
  std::size_t hash(EntityId id) const { return (std::size_t(id) * 0x9e3779b1u) & mask_; }
  std::vector<Slot> table_;
  std::size_t mask_ = 0;
  std::size_t count_ = 0;
};

// Per-entity state the Entity record does not carry, aligned with SimulationState::entities.
struct EntityExtra {
  MotorState motor;   // players
  PlayerInput input;  // players: the last command run, run again in a tick without set_inputs
  // players: the commands this tick runs, in order, when set_inputs named them (`has_commands`); none
  // means no motor step this tick. Cleared by the tick.
  std::vector<PlayerInput> commands;
  bool has_commands = false;
  int fire_cooldown = 0;  // players: ticks until the next shot
  MoverPath path;         // kinematic props
  double path_start = 0;  // kinematic props: simulation time at which the path's time 0 was
  int rest_ticks = 0;     // crates: consecutive ticks without moving
  int age_ticks = 0;      // projectiles
  bool dead = false;      // removed during this tick; compacted at its end
  Pose start_pose;        // pose at the start of this tick (the motion other movers see)
};

// A player or crate a kinematic prop carried or pushed this tick, and where it was before (to undo the
// push when the prop turns out to be blocked).
struct PushedEntity {
  std::size_t index;
  Pose before;
};

// A projectile's first hit, waiting to be resolved in time-of-impact order.
struct PendingHit {
  double t;
  EntityId id;
  std::size_t index;
  SweepHit hit;
};

struct SimulationState {
  SimulationState(const BspTree& level, const NavMesh* navmesh, const SimulationConfig& config);

  const BspTree& level;
  const NavMesh* navmesh;
  std::unique_ptr<NavQuery> nav_query;
  SimulationConfig config;
  float dt;
  std::uint64_t tick = 0;
  EntityId next_id = 1;

  std::shared_ptr<std::vector<std::unique_ptr<PropModel>>> models;
  std::vector<Entity> entities;  // sorted by id
  std::vector<EntityExtra> extras;
  IdIndex index;
  Grid grid;
  bool grid_sized = false;
  FilterCascade cascade;
  ContactTracker tracker;
  TickHistory history;
  std::vector<Contact> contacts;
  TickStats last_tick;
  SimulationCounters counters;
  SpawnRefusal last_refusal = SpawnRefusal::kNone;

  // Scratch, reused every tick so the tick does not allocate in steady state.
  std::vector<EntityId> near;               // SimulationState::sweep's candidates
  std::vector<std::size_t> near_start;      // sweep_among: convex candidates it starts near (skin guard)
  std::vector<EntityId> player_candidates;  // one player's move
  std::vector<EntityId> mover_candidates;   // one kinematic prop's swept box
  std::vector<PushedEntity> pushed;
  std::vector<PendingHit> pending_hits;
  std::vector<EntityId> removed;  // compact's: the entities it dropped, for one cascade.forget
  std::vector<std::pair<EntityId, EntityId>> pairs;
  std::vector<Vec3d> centres;  // check_pairs_and_invariants: bounding_centre by entity index
  std::vector<Entity> spawned;
  std::vector<EntityId> sleepers;

  int index_of(EntityId id) const;  // -1 if absent
  Entity* find(EntityId id);
  EntityId add(Entity entity, EntityExtra extra);
  EntityId refuse(SpawnRefusal why);                      // counts it; returns kNoEntity
  const PropModel* model_at(int index) const;             // null when out of range
  void place_in_grid(const Entity& e, const Pose& from);  // box of from ∪ e.pose (the speedbox)

  // The earliest hit of self's shape (turned by its yaw) moving from→to, against the level and every
  // entity the grid finds near the sweep that `self` should collide with (entities at their current pose,
  // or moving start_pose→pose when `moving_targets`).
  SweepHit sweep(const Entity& self, Vec3 from, Vec3 to, bool moving_targets, std::uint32_t skip_layers = 0,
                 EntityId ignore = kNoEntity);
  // The same against the entities in `candidates` only (ascending ids, gathered once by the caller for
  // several sweeps that all stay inside the box they were gathered for).
  SweepHit sweep_among(const Entity& self, Vec3 from, Vec3 to, bool moving_targets, std::uint32_t skip_layers,
                       EntityId ignore, std::span<const EntityId> candidates);
  // Level touch or entity touch → a Contact for the tracker.
  void record(const Entity& self, const SweepHit& hit, float time, float relative_speed);
  // The touch of a mover that stopped against `other` (kNoEntity: the level's `brush`) at `point`, with
  // `normal` pointing back at the mover; wakes `other` if it sleeps (something touched it).
  void record_touch(EntityId mover, EntityId other, std::int32_t brush, Vec3 point, Vec3 normal, float time,
                    float relative_speed);
};

// The phases, in tick order.
void move_kinematic_props(SimulationState& s);
void move_players(SimulationState& s);
void move_crates(SimulationState& s);
void move_projectiles(SimulationState& s);
void check_pairs_and_invariants(SimulationState& s);

}  // namespace shiftcast
