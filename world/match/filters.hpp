// The filter cascade: is a pair of entities within touching distance, and if so, where do they touch?
// Blow's order ("Practical Collision Detection", 1997): each stage is cheaper than the next and settles
// what it can, so the exact hard case runs only on the few pairs the others could not settle.
//
//   1. bounding spheres   squared centre distance against (r_a + r_b + reach)²: "apart" settles it
//   2. box safety         the two yaw-turned boxes (2D separating axes of both, then the z interval)
//   3. plane divides      the last separating axis found for this pair (remembered across ticks): if it
//                         still separates them, "apart"
//   4. hard case          narrow phase (closed forms for round pairs, GJK otherwise); for concave props
//                         the prop's own BSP in its local frame (the other shape grown by `reach`; a box
//                         or hull by its local box grown by `reach`), then GJK against every brush whose
//                         box is within reach, keeping the closest, for the contact. Concave vs concave
//                         tests each brush of the smaller against the larger's tree.
//
// The axis cache (stage 3) holds, per pair that reached the hard case, the hard case's last normal,
// whether it found them apart (then it separates them with the whole distance to spare) or touching
// (the axis most likely to separate them once they part); an overlap without a normal keeps the old
// axis. A stale axis is harmless: it settles a pair only if it still separates it. Concave props are
// tested by their convex bound (PropModel::shape), which contains every brush.
//
// Every stage is conservative by construction (bounds grown by kBoundsSlack, see entity.hpp): a stage
// may say "maybe" about a pair that is apart, never "apart" about a pair the hard case calls touching.
// tests/world/match/filters_test.cpp checks exactly that on random pairs of every kind.
//
//   FilterCascade cascade({.reach = kContactDistance});
//   PairContact c;
//   if (cascade.test(a, b, c, stats)) ... c.separation < 0 means they overlap: an invariant violation
//
// Counts and times per stage feed Blow's table (FilterStats::format) from a live match or a benchmark.
// Not thread-safe: one cascade per match (it owns the per-pair axis cache).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>

#include "collision/trace_result.hpp"
#include "collision/vec3.hpp"
#include "world/match/entity.hpp"

namespace shiftcast {

enum class FilterStage : std::uint8_t { kSpheres, kBoxes, kPlane, kHard };
inline constexpr int kFilterStageCount = 4;
const char* to_string(FilterStage stage);

struct FilterStageStats {
  std::uint64_t tests = 0;        // pairs this stage looked at
  std::uint64_t definitive = 0;   // pairs it settled (for the hard case: every test)
  std::uint64_t nanoseconds = 0;  // total time in this stage, when FilterOptions::measure_time
};

struct FilterStats {
  std::array<FilterStageStats, kFilterStageCount> stages{};

  FilterStageStats& operator[](FilterStage s) { return stages[static_cast<int>(s)]; }
  const FilterStageStats& operator[](FilterStage s) const { return stages[static_cast<int>(s)]; }
  void add(const FilterStats& other);
  // Blow's table: stage, tests, definitive answers, share of all definitive answers, mean time per test.
  std::string format() const;
};

struct FilterOptions {
  // The question asked: are the shapes within this distance of each other (0: overlapping or touching)?
  float reach = 0;
  bool use_plane_cache = true;  // stage 3; off skips it (for measuring what it is worth)
  bool measure_time = false;    // steady_clock around every stage: for tables, not for production ticks
};

struct PairContact {
  Vec3 point{};              // midway between the closest points, world space
  Vec3 normal{};             // unit, from a towards b
  float separation = 0;      // distance between the shapes; negative when they overlap (then an estimate)
  bool overlapping = false;  // interiors intersect (the narrow phase's verdict, not the sign of a float)
  std::int32_t brush_a = kNoBrush;  // the brush of a concave prop involved, else kNoBrush
  std::int32_t brush_b = kNoBrush;
};

class FilterCascade {
 public:
  explicit FilterCascade(const FilterOptions& options);

  // True when a and b are within options.reach (touching or overlapping); fills `contact` then.
  // Both entities' shapes, models and poses are read as they are now.
  bool test(const Entity& a, const Entity& b, PairContact& contact, FilterStats& stats);
  // The same, with each entity's bounding_centre given: a caller testing many pairs per entity (the
  // tick's pair pass) computes it once per entity instead of once per pair. Same answers, same stats.
  bool test(const Entity& a, const Vec3d& centre_a, const Entity& b, const Vec3d& centre_b,
            PairContact& contact, FilterStats& stats);

  // Forgets the cached axes that involve any of `ids` (call when entities are removed, all of a tick's at
  // once: one scan of the cache however many). (Caching a new pair is the cascade's only allocation.)
  void forget(std::span<const EntityId> ids);
  void forget(EntityId id) { forget(std::span<const EntityId>(&id, 1)); }
  std::size_t cached_axes() const { return axes_.size(); }
  const FilterOptions& options() const { return options_; }

 private:
  FilterOptions options_;
  std::unordered_map<std::uint64_t, Vec3d> axes_;  // (min id << 32 | max id) → last separating axis a→b
};

// The stages one by one, for the property test and benchmarks: true means "certainly apart by more than
// reach"; false means "maybe" (the next stage decides).
bool spheres_apart(const Entity& a, const Entity& b, float reach);
// Stage 1's measure of an entity: its bounding sphere's centre in world space, in double. Centres on the
// turning axis (players, projectiles, centred props) need no trigonometry; the result is exactly
// to_world(e.pose, local_center) either way (up to the sign of a zero).
Vec3d bounding_centre(const Entity& e);
bool boxes_apart(const Entity& a, const Entity& b, float reach);
// The hard case alone: true and `contact` filled when within reach.
bool hard_case(const Entity& a, const Entity& b, float reach, PairContact& contact);
// The same answer with stages 1 and 2 in front (no axis cache, no statistics): for one-off questions
// outside the pair pass, such as a mover asking whether an entity is in its way. Exactly hard_case's
// answer, since neither stage says "apart" about a pair within reach.
bool culled_hard_case(const Entity& a, const Entity& b, float reach, PairContact& contact);

}  // namespace shiftcast
