// Blow's "Let's Rock" scene (Practical Collision Detection, CGDC 1997; seeds digest 5.7), rebuilt so
// shiftcast's filter cascade can be measured on the situation his table came from:
//
//   a hovertank (a convex hull of ~100 faces) flies in and drops a cargo box (a box: 12 triangles);
//   the box lands, rests, and becomes a repair pad (a concave model of ~70 faces built from brushes)
//   that pivots and slides to rest; the tank turns round, hovers, descends and touches down in the
//   pad's cradle (within contact reach, not overlapping, and inside the pad's convex bound, so no plane
//   divides them), sits there, takes off and flies away. Around them 30 players mill and rockets fly
//   over their heads, so the pair mix is a match's, not a lab's.
//
//   std::string error;
//   auto scene = LetsRockScene::make({}, &error);
//   LetsRockRun run = run_lets_rock(*scene, {.reach = kLetsRockReach, .measure_time = true});
//   std::puts(format_blow_table(run, *scene, "shiftcast").c_str());
//
// The landscape is the level, not an entity (as in Blow's table): the ground is z = 0 and nothing in
// the scene goes below it. Every pose of every tick is computed when the scene is made (closed forms and
// MoverPaths, jitter from std::mt19937 with a fixed seed), so a run only copies poses: runs are
// deterministic and their timings are of the grid and the cascade alone.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "world/match/entity.hpp"
#include "world/match/filters.hpp"
#include "world/match/match_defaults.hpp"
#include "world/match/prop_model.hpp"

namespace shiftcast::bench {

// The question the cascade answers each tick: within contact distance (the simulation's
// kContactDistance, 0.25 units)?
inline constexpr float kLetsRockReach = 0.25f;

struct LetsRockOptions {
  int players = 30;
  int projectiles = 8;               // rockets in flight at any time
  int tick_rate = kDefaultTickRate;  // Hz: the simulation's default
  std::uint32_t seed = 1997;
};

class LetsRockScene {
 public:
  // Null (and `error` set) only when a model fails to build.
  static std::unique_ptr<LetsRockScene> make(const LetsRockOptions& options, std::string* error);

  int tick_count() const { return tick_count_; }
  int tick_rate() const { return options_.tick_rate; }
  const LetsRockOptions& options() const { return options_; }

  // Ids are 1..entities().size(), in order; the poses here are those of tick 0.
  std::span<const Entity> entities() const { return entities_; }
  // Every entity's pose at `tick`, and whether it is in the world then (the box before it lands and
  // after it deploys, the pad before it appears, rockets between shots are not).
  std::span<const Pose> poses(int tick) const;
  bool present(int tick, EntityId id) const;

  EntityId tank() const { return tank_; }
  EntityId box() const { return box_; }
  EntityId pad() const { return pad_; }
  const PropModel& tank_model() const { return *tank_model_; }
  const PropModel& box_model() const { return *box_model_; }
  const PropModel& pad_model() const { return *pad_model_; }

  // The ticks the tank sits in the pad's cradle: the scene is built so that it touches the pad there
  // (kTouchdownGap above the cradle floor), and only there.
  bool touchdown(int tick) const;
  // What the tank is doing at `tick`, for logs.
  const char* phase(int tick) const;

 private:
  LetsRockScene() = default;

  LetsRockOptions options_;
  int tick_count_ = 0;
  std::unique_ptr<PropModel> tank_model_;
  std::unique_ptr<PropModel> box_model_;
  std::unique_ptr<PropModel> pad_model_;
  std::vector<Entity> entities_;
  std::vector<Pose> poses_;            // tick-major: poses_[tick · entities + (id − 1)]
  std::vector<std::uint8_t> present_;  // same layout
  EntityId tank_ = kNoEntity;
  EntityId box_ = kNoEntity;
  EntityId pad_ = kNoEntity;
  int touchdown_first_ = 0;
  int touchdown_last_ = -1;
  std::vector<std::pair<int, const char*>> phases_;  // (first tick, name), ascending
};

// What one run of the scene through the grid and the cascade found.
struct LetsRockRun {
  FilterStats stats;           // every tested pair
  FilterStats tank_pad_stats;  // the tank–pad pair alone (also counted in `stats`)
  std::uint64_t ticks = 0;
  std::uint64_t grid_pairs = 0;    // pairs the grid reported
  std::uint64_t masked_pairs = 0;  // of those, refused by layers/masks or the owner rule (never tested)
  std::uint64_t tested_pairs = 0;
  std::uint64_t touching = 0;     // pairs the cascade found within reach
  std::uint64_t overlapping = 0;  // of those, overlapping (PairContact::overlapping): a defect of the scene
  int touchdown_ticks = 0;        // ticks the scene means the tank to touch the pad
  int touchdown_touching = 0;     // of those, ticks the cascade found them within reach
  int tank_pad_touching_elsewhere = 0;  // ticks outside touchdown where they were within reach
  float touchdown_min_separation = 0;
  float touchdown_max_separation = 0;
  double seconds = 0;        // wall time of the whole run (grid updates, pair walk and cascade)
  int repetitions = 1;       // runs behind the times (run_lets_rock_median)
  double clock_read_ns = 0;  // cost of one steady_clock read (measure_time only): part of each stage time
};

using PairsByTick = std::vector<std::vector<std::pair<EntityId, EntityId>>>;

// Runs every tick: the grid is updated with each present entity's world box (rockets with their
// speedbox, the union of last tick's and this tick's boxes), absent entities are removed, and every
// grid pair that may collide passes FilterCascade::test. `tested`, when given, receives those pairs
// tick by tick (to time the cascade without the grid).
LetsRockRun run_lets_rock(const LetsRockScene& scene, const FilterOptions& options,
                          PairsByTick* tested = nullptr);

// `repetitions` runs; the counts of the first (all are equal: the scene is deterministic) with each
// stage's time, the wall time and the clock cost replaced by their medians, so one preempted run on a
// shared machine does not make the table.
LetsRockRun run_lets_rock_median(const LetsRockScene& scene, const FilterOptions& options, int repetitions);

// Blow's table for a run, beside his 1997 figures (Pentium 166): per stage, tests, definitive answers,
// their share of all definitive answers and the mean time per test; then the tank–pad pair alone and
// the scene's own checks (touchdown touching, no overlaps).
std::string format_blow_table(const LetsRockRun& run, const LetsRockScene& scene, std::string_view title);

}  // namespace shiftcast::bench
