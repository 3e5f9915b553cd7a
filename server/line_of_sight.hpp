// Line of sight for interest management (issue 15): whether a player's eye can see a target through the
// level, so a player hidden behind a wall is not sent to a client whose cluster merely *might* see it
// (the potentially visible set is per cluster, and on an open arena most clusters see most others).
// Shooters do this against wallhacks (Valorant's and CS:GO's server-side occlusion culling); here it is
// also the largest saving of bandwidth left: on oa_dm1 the set keeps 73% of the other players, a clear
// line reaches 20%.
//
// The test is sampled and conservative by construction: the target's box is grown by a margin (the motion
// of a lookahead, so a player about to come round a corner is sent before it shows), and the target is
// seen when the segment from the eye to any of nine points of the grown box (its centre and its eight
// corners) is clear of solid brushes. Clear follows the trace contract (collision/trace_result.hpp):
// touching or grazing a brush face is not a hit, so a segment sliding along a wall sees past it; a point
// inside a brush is not seen through that brush. An eye inside solid sees everything (the filter never
// culls on missing information). A target seen is remembered (SightMemory) for a hold, so a player
// flickering in and out of view at a doorway is not removed and re-added every snapshot.
//
//   const SightLook look = look_at(tree, eye, grown_box, first_sample);   // nine segments at most
//   SightMemory sight;            // one per client, carried from snapshot to snapshot by its owner;
//   interest.select(viewer, kept, &sight);   // InterestFilter reads and updates it (interest_filter.hpp)
//
// Cost: a seen target usually costs one segment (the sample that was clear last time is tried first). A
// hidden one costs nine traces the first time; after that each segment is first clipped against the brush
// that blocked it last time (an occluder cache: walls stay where they are, and a segment that moved a
// little mostly still crosses the same wall), and the tree is asked only when one of them no longer
// does. The cache only confirms "blocked" where the tree would say so too (brush_blocks), so the answers
// are the tree's.
#pragma once

#include <cstdint>
#include <vector>

#include "collision/aabb.hpp"
#include "collision/bsp_tree.hpp"
#include "collision/vec3.hpp"
#include "world/match/entity.hpp"

namespace shiftcast {

// The centre and the eight corners of a box.
inline constexpr int kSightSamples = 9;

// How deep inside a cached blocking brush (units) a segment must pass for the cache to call it blocked
// without asking the tree: far above the trace's kContactSkin (1e-6) and double rounding, so the tree
// certainly reports a hit there, and far below any wall's thickness, so a segment that still crosses the
// wall is confirmed.
inline constexpr double kSightCacheDepth = 1.0 / 64;

// Sample `index` of `box`: 0 the centre, 1..8 the corners (bit 0 of index - 1 picks max x, bit 1 max y,
// bit 2 max z).
Vec3 sight_sample(const Aabb& box, int index);

// The segment from `eye` to `point` is clear of solid (or the eye is in solid, where nothing can be judged).
// `blocker`, when given, receives the brush the segment hit (kNoBrush when clear).
bool sees(const BspTree& tree, Vec3 eye, Vec3 point, std::int32_t* blocker = nullptr);

// The segment passes through brush `brush` at least kSightCacheDepth deep, and `eye` is outside it: a
// trace from an eye outside solid then certainly hits (this brush or one before it). False says nothing.
// `deep_t`, when given, is where along the segment (0 at the eye, 1 at the point) it was deep last time,
// or negative: that parameter is tried first (one pass over the faces, no division: a segment that moved
// a little is mostly still deep there), then the middle of the part inside the brush, which is written
// back when it is deep enough.
bool brush_blocks(const BspTree& tree, std::int32_t brush, Vec3 eye, Vec3 point, float* deep_t = nullptr);

// Every point of `box` at parameter `t` of its segment from `eye` (the box scaled about the eye by t)
// lies at least kSightCacheDepth deep in brush `brush`, and the eye is outside it: then the segment from
// the eye to any point of the box, each of the nine samples among them, is blocked by that brush. One
// pass over the brush's faces instead of nine; it holds when the brush is thick across the box's cone
// there (a wall near the eye or near the target, a large block), and says nothing otherwise.
bool brush_blocks_box(const BspTree& tree, std::int32_t brush, Vec3 eye, const Aabb& box, double t);

struct SightLook {
  bool seen = false;
  int sample = 0;                             // the clear sample when seen, else the first tried
  int segments = 0;                           // traces run
  std::int32_t blockers[kSightSamples] = {};  // not seen: the brush that blocked each sample
};

// Tries the samples of `box` from `first` round to `first` - 1 and stops at the first clear segment.
// `first` outside [0, kSightSamples) is taken as 0.
SightLook look_at(const BspTree& tree, Vec3 eye, const Aabb& box, int first);

// What one client has seen lately: per player tested, the snapshot until which it stays sent, the sample
// that was clear and, when it was hidden, the brush that blocked each sample (the occluder cache).
// InterestFilter::select rewrites it each snapshot with the players it tested; the others' entries are
// dropped, so its size is at most the number of entities.
class SightMemory {
 public:
  struct Entry {
    EntityId target = kNoEntity;
    std::uint64_t until = 0;  // sent through this snapshot number (InterestFilter's count)
    std::uint8_t sample = 0;  // last clear sample; hidden: the first to try when the cache fails
    bool hidden = false;      // the last look found it hidden: `blockers` are that look's brushes
    std::int32_t blockers[kSightSamples] = {};
    float deep_t[kSightSamples] = {-1, -1, -1, -1, -1, -1, -1, -1, -1};  // brush_blocks' deep_t, per sample
  };

  // Read during a select: the entry for `target`, or null. Targets must be asked in ascending order.
  const Entry* find(EntityId target);
  // The entries a select keeps, ascending by target; committed by finish().
  void keep(const Entry& entry) { next_.push_back(entry); }
  void finish();

  std::size_t size() const { return entries_.size(); }
  // Summed over selects until taken: segments traced through the tree, and targets the set admitted that no
  // clear line (nor the hold) reached.
  std::uint64_t take_segments();
  std::uint64_t take_culled();
  void count(int segments, bool culled) {
    segments_ += std::uint64_t(segments);
    culled_ += culled ? 1 : 0;
  }

 private:
  std::vector<Entry> entries_;
  std::vector<Entry> next_;
  std::size_t cursor_ = 0;
  std::uint64_t segments_ = 0;
  std::uint64_t culled_ = 0;
};

}  // namespace shiftcast
