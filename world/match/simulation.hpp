// Simulation: one match's world, advanced by a deterministic fixed tick. Players (character motor),
// projectiles (swept spheres), kinematic props (doors, lifts, platforms on MoverPaths) and crates
// (falling boxes that sleep at rest) move through a compiled level; every touch becomes a Contact; after
// every tick no entity overlaps the level or another solid entity.
//
//   Simulation sim(level, navmesh, config);        // level and navmesh shared, read-only
//   int crate = sim.add_model(make_box_model("crate", {16, 16, 16}).model);
//   EntityId p = sim.add_player({0, 0, 0}, 0);
//   sim.set_input(p, input);                       // once per tick per player (else: the last again)
//   sim.set_inputs(p, commands);                   // or: exactly these commands this tick (a server)
//   sim.step();                                    // one tick of 1 / tick_rate seconds
//   for (const Contact& c : sim.contacts()) ...    // this tick's contacts, deterministic order
//   sim.state_hash();                              // bit-exact fingerprint of the world
//
// A tick, in order:
//   1. kinematic props move to their path pose; riders are carried, pushed players swept out of the way
//      (a mover that cannot push a player stays where it was: it is blocked, as a Quake door is)
//   2. players run the character motor in id order, blocked by the level, props and earlier players
//   3. crates fall, projectiles fly: candidates from speedboxes in the grid, exact time of impact against
//      the level (the BSP trace) and entities (time_of_impact), resolved in time-of-impact order
//   4. the grid's candidate pairs pass the filter cascade: touches become contacts, overlaps are
//      invariant violations, re-placed at the nearest free spot (navmesh) and counted
//   5. the tick is published to the history (rewinds) and its stats recorded
//
// Determinism: the same level, config and inputs give the same state_hash at every tick, on any run.
// Nothing reads a clock inside step() except FilterOptions::measure_time's timers, which only feed stats.
// Not thread-safe: one thread steps a simulation; others read its history().
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "collision/bsp_tree.hpp"
#include "world/match/character_motor.hpp"
#include "world/match/contact.hpp"
#include "world/match/entity.hpp"
#include "world/match/filters.hpp"
#include "world/match/grid.hpp"
#include "world/match/match_defaults.hpp"
#include "world/match/mover_path.hpp"
#include "world/match/player_input.hpp"
#include "world/match/prop_model.hpp"
#include "world/match/tick_history.hpp"
#include "world/match/world_query.hpp"

namespace shiftcast {

class NavMesh;
struct SimulationState;

// Distance within which two things count as touching (a contact), Quake units.
inline constexpr float kContactDistance = 0.25f;
// Gap kept between entities that stop against each other: the level's kSurfaceBackoff, applied the same
// way (world/match/world_query.hpp backed_off_end), so stopped entities touch (it is below kContactDistance)
// and never start their next sweep inside each other (it is far above GJK's tolerance).
inline constexpr float kEntitySkin = kSurfaceBackoff;
// A move may not end nearer than this to an entity it started near unless it ends no nearer than it
// started (world/match/entity_sweep.cpp, the skin guard): half the skin, so an ordinary slide at the skin
// never trips it, and hundreds of times what time_of_impact's resting rule and float rounding can take
// off the gap in one sweep (kToiRestingDepth, half an ulp of a coordinate), so it trips long before
// the gap can reach zero.
inline constexpr float kEntityRestGap = kEntitySkin / 2;

// Release builds check each entity against the level every this many ticks (see SimulationConfig).
inline constexpr int kReleaseLevelCheckPeriod = 8;
#ifdef NDEBUG
inline constexpr int kDefaultLevelCheckPeriod = kReleaseLevelCheckPeriod;
#else
inline constexpr int kDefaultLevelCheckPeriod = 1;
#endif

struct SimulationConfig {
  int tick_rate = kDefaultTickRate;  // Hz, 20..128
  MotorConfig motor;
  float grid_cell = 0;  // 0: Grid::derive_cell_size from the largest entity added before the first step
  float projectile_radius = 4;
  float projectile_speed = 900;   // units/s, the speed a fired projectile leaves at (<= 10,000)
  float projectile_lifetime = 3;  // seconds
  float projectile_gravity = 0;   // 0: rockets; 800: grenades
  float fire_interval = 0.5f;     // seconds between shots of one player
  float crate_gravity = 800;
  int sleep_ticks = 16;  // ticks at rest before a crate sleeps
  float history_seconds = 1;
  // Entity pairs are checked every tick (the contact cascade runs on them anyway). Entities against the
  // level: every tick in debug builds and tests (period 1); release builds check each entity every
  // kReleaseLevelCheckPeriod ticks, round robin by id, and count what they find. 0 turns the level
  // check off.
  int level_check_period = kDefaultLevelCheckPeriod;
  bool measure_filter_time = false;  // Blow's table timing (costs a clock read per stage)
  float max_speed = 10000;           // any velocity beyond this is clamped and counted (absurd input)
};

// Why an add_* call was refused (it then returns kNoEntity, or -1 for add_model, and counts it).
enum class SpawnRefusal : std::uint8_t {
  kNone,
  kNonFinite,  // NaN or infinity in a position, yaw or velocity
  kBadModel,   // a model index that add_model never returned, or a null model
  kEmptyPath,  // a kinematic prop without a valid path (MoverPath::make refused it)
};
const char* to_string(SpawnRefusal refusal);

struct TickStats {
  std::uint64_t tick = 0;
  int candidate_pairs = 0;
  int contacts = 0;
  int invariant_violations = 0;
  int replacements = 0;
  int projectile_hits = 0;
  int toi_searches = 0;
  int skin_guards = 0;  // moves blocked by the skin guard (kEntityRestGap)
};

struct SimulationCounters {
  std::uint64_t ticks = 0;
  std::uint64_t contacts = 0;
  std::uint64_t invariant_violations = 0;
  std::uint64_t replacements = 0;          // entities re-placed at a free spot (an overlapping
                                           // projectile is removed instead, counted as a violation only)
  std::uint64_t replacement_failures = 0;  // no free spot found: the entity was removed (crates) or left
                                           // where it was (players) and counted again
  std::uint64_t invalid_inputs = 0;
  std::uint64_t blocked_movers = 0;
  std::uint64_t projectiles_fired = 0;
  std::uint64_t projectile_hits = 0;
  // Of projectile_hits: shots that joined, at the end of the tick they were fired in, inside an entity
  // that had moved into the spot since (world/match/invariants.cpp); hits, not violations.
  std::uint64_t point_blank_hits = 0;
  std::uint64_t toi_searches = 0;
  std::uint64_t skin_guards = 0;  // moves blocked by the skin guard (kEntityRestGap)
  std::uint64_t speed_clamps = 0;
  std::uint64_t refused_spawns = 0;  // add_* calls refused (SpawnRefusal)
  FilterStats filters;
};

class Simulation {
 public:
  // `level` must outlive the simulation; `navmesh` may be null (re-placement then searches outward in
  // free space only).
  Simulation(const BspTree& level, const NavMesh* navmesh, const SimulationConfig& config);
  ~Simulation();
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  // Models are added before the first step and never removed; the index names them. A null model is
  // refused (-1).
  int add_model(std::unique_ptr<PropModel> model);
  const PropModel& model(int index) const;  // index must come from add_model

  // Each returns the new entity's id, or kNoEntity when the arguments are refused: last_refusal() says
  // why and counters().refused_spawns counts it. Nothing is checked against the level here: an entity
  // placed in solid is found by the next tick's invariant check and re-placed. A projectile faster than
  // SimulationConfig::max_speed is slowed to it and counted in speed_clamps.
  EntityId add_player(Vec3 feet, float yaw);
  EntityId add_projectile(Vec3 centre, Vec3 velocity, EntityId owner);
  EntityId add_kinematic_prop(int model, MoverPath path);
  EntityId add_crate(int model, const Pose& pose);
  SpawnRefusal last_refusal() const;
  bool remove(EntityId id);

  // Out-of-range inputs are counted and replaced by "no input" (player_input.hpp).
  // set_input: the player's input from now on; a tick without a newer one runs it again.
  void set_input(EntityId player, const PlayerInput& input);
  // The commands `player` runs in the next step only, in order, each one motor step of dt (its own time
  // advances one tick per command, its fire cooldown counts its commands), as a Quake server runs every
  // user command exactly once. Empty: no motor step this tick (lifts still carry it, props still push
  // it). A later step without set_inputs or set_input runs the last command again.
  void set_inputs(EntityId player, std::span<const PlayerInput> commands);
  void step();

  std::uint64_t tick() const;
  double time() const;                        // seconds since the start: tick / tick_rate
  std::span<const Contact> contacts() const;  // this tick's, deterministic order
  const TickStats& last_tick() const;
  const SimulationCounters& counters() const;
  std::uint64_t state_hash() const;

  const Entity* find(EntityId id) const;
  std::span<const Entity> entities() const;  // sorted by id
  const MotorState* motor_state(EntityId player) const;
  const BspTree& level() const;
  const SimulationConfig& config() const;
  const Grid& grid() const;
  const TickHistory& history() const;

  // Live queries against the level and the entities as they are now (grid-walked candidates).
  WorldHit raycast(Vec3 origin, Vec3 direction, float max_distance, const QueryFilter& filter) const;
  WorldHit sweep(const Shape& shape, Vec3 from, Vec3 to, const QueryFilter& filter) const;

  // Every overlap between solid things now (entity vs level, entity vs entity), by brute force over all
  // pairs with the narrow phase: what tests assert is zero after every tick.
  int count_overlaps_brute_force() const;

 private:
  std::unique_ptr<SimulationState> state_;
};

}  // namespace shiftcast
