// Line of sight (server/line_of_sight.hpp) and the interest filter's use of it, against oracles computed
// without the BSP: a slab test of each segment against the level's boxes, and the contract of the hold and
// the occluder cache written as properties of a walk past a wall. The level is a room of axis-aligned
// brushes, so the slab test is exact for it.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "collision/brush.hpp"
#include "server/interest_filter.hpp"
#include "server/line_of_sight.hpp"
#include "tests/support/walled_room.hpp"

namespace shiftcast {
namespace {

struct Box {
  Vec3 lo, hi;
};

// The room's boxes as walled_room builds them, plus the blocks.
std::vector<Box> room_boxes(const std::vector<Box>& blocks) {
  std::vector<Box> boxes = {{{-1024, -1024, -64}, {1024, 1024, 0}},
                            {{-1088, -1024, 0}, {-1024, 1024, 256}},
                            {{1024, -1024, 0}, {1088, 1024, 256}},
                            {{-1024, -1088, 0}, {1024, -1024, 256}},
                            {{-1024, 1024, 0}, {1024, 1088, 256}}};
  boxes.insert(boxes.end(), blocks.begin(), blocks.end());
  return boxes;
}

BspTree room_tree(const std::vector<Box>& blocks) {
  std::vector<Brush> brushes;
  for (const Box& b : blocks)
    brushes.push_back(brush_from_box(b.lo, b.hi));
  return walled_room(brushes);
}

bool strictly_inside(Vec3 p, const Box& b) {
  return p.x > b.lo.x && p.x < b.hi.x && p.y > b.lo.y && p.y < b.hi.y && p.z > b.lo.z && p.z < b.hi.z;
}

// The segment a -> b passes through the open interior of the box: the parameter intervals in which it is
// strictly inside each slab overlap with positive length, within [0, 1].
bool segment_enters(Vec3 a, Vec3 b, const Box& box) {
  double t0 = 0, t1 = 1;
  for (int i = 0; i < 3; ++i) {
    const double p = a[i], d = double(b[i]) - a[i], lo = box.lo[i], hi = box.hi[i];
    if (d == 0) {
      if (!(p > lo && p < hi)) return false;
      continue;
    }
    double enter = (lo - p) / d, exit = (hi - p) / d;
    if (enter > exit) std::swap(enter, exit);
    t0 = std::max(t0, enter);
    t1 = std::min(t1, exit);
    if (t0 >= t1) return false;
  }
  return t0 < t1;
}

// The definition of "seen" by slab tests: an eye strictly inside a box sees everything; else a sample is
// seen when its segment enters no box.
bool oracle_sees(const std::vector<Box>& boxes, Vec3 eye, Vec3 point) {
  for (const Box& b : boxes)
    if (strictly_inside(eye, b)) return true;
  for (const Box& b : boxes)
    if (segment_enters(eye, point, b)) return false;
  return true;
}

bool oracle_sees_box(const std::vector<Box>& boxes, Vec3 eye, const Aabb& box) {
  for (int s = 0; s < kSightSamples; ++s)
    if (oracle_sees(boxes, eye, sight_sample(box, s))) return true;
  return false;
}

// Fourteen random pillars and slabs on the room's floor.
std::vector<Box> random_blocks(std::mt19937& rng) {
  std::uniform_real_distribution<float> xy(-1000, 1000), size(20, 300), height(40, 250);
  std::vector<Box> blocks;
  for (int i = 0; i < 14; ++i) {
    const Vec3 lo{xy(rng), xy(rng), 0};
    blocks.push_back({lo, {lo.x + size(rng), lo.y + size(rng) * 0.3f, height(rng)}});
  }
  return blocks;
}

bool in_solid(const std::vector<Box>& boxes, Vec3 p) {
  return std::any_of(boxes.begin(), boxes.end(), [&](const Box& b) { return strictly_inside(p, b); });
}

TEST(LineOfSight, SamplesAreTheCentreThenTheCorners) {
  const Aabb box{{-1, -2, -3}, {4, 6, 8}};
  EXPECT_EQ(sight_sample(box, 0), (Vec3{1.5f, 2, 2.5f}));
  std::vector<Vec3> corners;
  for (int s = 1; s < kSightSamples; ++s)
    corners.push_back(sight_sample(box, s));
  EXPECT_EQ(corners.front(), box.min);
  EXPECT_EQ(corners.back(), box.max);
  EXPECT_EQ(corners[1], (Vec3{4, -2, -3}));  // bit 0: max x
  EXPECT_EQ(corners[2], (Vec3{-1, 6, -3}));  // bit 1: max y
  EXPECT_EQ(corners[4], (Vec3{-1, -2, 8}));  // bit 2: max z
  for (std::size_t i = 0; i < corners.size(); ++i)
    for (std::size_t j = i + 1; j < corners.size(); ++j)
      EXPECT_NE(corners[i], corners[j]);
}

// Random pillars and slabs in the room; random eyes (some inside blocks) and random boxes: the BSP's answer
// is the slab test's, for every sample and for the box, whichever sample the search starts from.
TEST(LineOfSight, AgreesWithASlabTestOnRandomBlocks) {
  std::mt19937 rng(41);
  std::uniform_real_distribution<float> xy(-1000, 1000), z(-40, 240), size(20, 300), height(40, 250);
  const std::vector<Box> blocks = random_blocks(rng);
  const std::vector<Box> boxes = room_boxes(blocks);
  const BspTree tree = room_tree(blocks);
  std::uniform_int_distribution<int> first(-1, kSightSamples);
  std::size_t seen = 0, hidden = 0, samples_hidden = 0, eyes_in_solid = 0;
  for (int n = 0; n < 3000; ++n) {
    const Vec3 eye{xy(rng), xy(rng), z(rng)};
    const Vec3 c{xy(rng), xy(rng), z(rng)};
    const Aabb box{c - Vec3{size(rng) * 0.2f, size(rng) * 0.2f, 30}, c + Vec3{20, 20, height(rng) * 0.3f}};
    for (int s = 0; s < kSightSamples; ++s) {
      const bool expected = oracle_sees(boxes, eye, sight_sample(box, s));
      ASSERT_EQ(sees(tree, eye, sight_sample(box, s)), expected) << "pair " << n << " sample " << s;
      samples_hidden += expected ? 0 : 1;
    }
    const int start = first(rng);
    const SightLook look = look_at(tree, eye, box, start);
    const bool expected = oracle_sees_box(boxes, eye, box);
    ASSERT_EQ(look.seen, expected) << "pair " << n;
    if (look.seen) {
      ++seen;
      EXPECT_TRUE(oracle_sees(boxes, eye, sight_sample(box, look.sample)));
    } else {
      ++hidden;
      EXPECT_EQ(look.segments, kSightSamples);
    }
    for (const Box& b : boxes)
      eyes_in_solid += strictly_inside(eye, b) ? 1 : 0;
  }
  // Both outcomes common, and eyes in solid among them: the comparison means something.
  EXPECT_GT(seen, 500u);
  EXPECT_GT(hidden, 300u);
  EXPECT_GT(samples_hidden, 5000u);
  EXPECT_GT(eyes_in_solid, 50u);
}

// The occluder cache's test, from any remembered parameter (a random one, its own from the last call, or
// none): it only ever says "blocked" where the slab oracle says the segment enters a block with the eye
// outside every block, and from its own parameter of a segment moved a little it confirms what the middle
// test confirmed.
TEST(LineOfSight, TheCachedBlockerIsOnlyConfirmedWhereTheSegmentIsBlocked) {
  std::mt19937 rng(43);
  std::uniform_real_distribution<float> xy(-1000, 1000), z(-40, 240), size(20, 300), height(40, 250);
  std::uniform_real_distribution<float> any_t(-0.5f, 1.5f), nudge(-6, 6);
  const std::vector<Box> blocks = random_blocks(rng);
  const std::vector<Box> boxes = room_boxes(blocks);
  const BspTree tree = room_tree(blocks);
  std::size_t confirmed = 0, confirmed_moved = 0, from_memory = 0;
  for (int n = 0; n < 20000; ++n) {
    const Vec3 eye{xy(rng), xy(rng), z(rng)}, point{xy(rng), xy(rng), z(rng)};
    std::int32_t blocker = kNoBrush;
    const bool seen = sees(tree, eye, point, &blocker);
    if (seen || blocker == kNoBrush) continue;
    float t = any_t(rng);
    const bool eye_free = !in_solid(boxes, eye);
    if (brush_blocks(tree, blocker, eye, point, &t)) {
      ++confirmed;
      ASSERT_TRUE(eye_free) << "pair " << n;  // the tree said hidden, so the eye is outside solid
      ASSERT_FALSE(oracle_sees(boxes, eye, point)) << "pair " << n;
      ASSERT_TRUE(t >= 0 && t <= 1) << "pair " << n;
    }
    // The same blocker for the segment moved a few units, from the parameter just remembered.
    const Vec3 eye2 = eye + Vec3{nudge(rng), nudge(rng), nudge(rng)};
    const Vec3 point2 = point + Vec3{nudge(rng), nudge(rng), nudge(rng)};
    float middle_only = -1;
    const bool by_middle = brush_blocks(tree, blocker, eye2, point2, &middle_only);
    const float remembered = t;
    const bool by_memory = brush_blocks(tree, blocker, eye2, point2, &t);
    // An eye in another block sees everything (the filter never asks the cache then): only an eye
    // outside solid is judged.
    const bool eye2_free = !in_solid(boxes, eye2);
    if (by_memory && eye2_free) {
      ++confirmed_moved;
      ASSERT_FALSE(oracle_sees(boxes, eye2, point2)) << "moved pair " << n;
      from_memory += t == remembered ? 1 : 0;
    }
    // The remembered parameter only adds confirmations: whatever the middle confirms, it confirms.
    EXPECT_TRUE(!by_middle || by_memory) << "moved pair " << n;
  }
  EXPECT_GT(confirmed, 2000u);
  EXPECT_GT(confirmed_moved, 2000u);
  EXPECT_GT(from_memory, 1000u);  // the one-pass test answered most of them
}

// The one-pass test for a whole box: whenever it says the centre's blocker holds the box (scaled about
// the eye at a parameter: the centre segment's own deep one, or a random one), the slab oracle finds every
// sample of the box hidden from that eye.
TEST(LineOfSight, AWholeBoxIsOnlyConfirmedWhereEverySampleIsBlocked) {
  std::mt19937 rng(47);
  std::uniform_real_distribution<float> xy(-1000, 1000), z(-40, 240), size(20, 300), height(40, 250);
  std::uniform_real_distribution<float> unit(0, 1), half(5, 60);
  const std::vector<Box> blocks = random_blocks(rng);
  const std::vector<Box> boxes = room_boxes(blocks);
  const BspTree tree = room_tree(blocks);
  std::size_t confirmed = 0, refused = 0;
  for (int n = 0; n < 20000; ++n) {
    const Vec3 eye{xy(rng), xy(rng), z(rng)};
    if (in_solid(boxes, eye)) continue;  // the filter never asks the cache for an eye in solid
    const Vec3 c{xy(rng), xy(rng), z(rng)}, h{half(rng), half(rng), half(rng)};
    const Aabb box{c - h, c + h};
    std::int32_t blocker = kNoBrush;
    if (sees(tree, eye, sight_sample(box, 0), &blocker)) continue;
    float t = -1;
    const bool centre = brush_blocks(tree, blocker, eye, sight_sample(box, 0), &t);
    for (const double at : {double(t), double(unit(rng))}) {
      if (!(centre || at != t) || !brush_blocks_box(tree, blocker, eye, box, at)) {
        ++refused;
        continue;
      }
      ++confirmed;
      for (int s = 0; s < kSightSamples; ++s)
        ASSERT_FALSE(oracle_sees(boxes, eye, sight_sample(box, s))) << "pair " << n << " sample " << s;
    }
  }
  EXPECT_GT(confirmed, 500u);
  EXPECT_GT(refused, 500u);
}

Entity player(EntityId id, Vec3 feet) {
  Entity e;
  e.id = id;
  e.kind = EntityKind::kPlayer;
  e.shape = Shape::cylinder(15, 56);
  e.pose = Pose{feet, 0};
  compute_entity_bounds(e);
  return e;
}

constexpr float kPeriod = 1.0f / 32;

// A wall across the room at x in [-16, 16] from y = -1024 to y = 400: the west half sees the east half
// only through the gap north of it.
const Box kWall{{-16, -1024, 0}, {16, 400, 256}};

// A 300-unit radius and the given hold.
InterestSettings sight_settings(double hold_s) {
  InterestSettings settings;
  settings.radius = 300;
  settings.sight_hold_s = hold_s;
  return settings;
}

// One snapshot of a viewer (id 1) and one other player (id 2): whether the other is sent.
bool sends(InterestFilter& filter, SightMemory* memory, Vec3 viewer_feet, Vec3 target) {
  const std::vector<Entity> entities = {player(1, viewer_feet), player(2, target)};
  filter.begin_snapshot(entities, kPeriod);
  std::vector<std::uint32_t> kept;
  filter.select(filter.viewer(1, &entities[0]), kept, memory);
  return kept.size() == 2;
}

// kWall: a viewer in the west half sees the east half only through the gap north of y = 400. The target walks
// north along x = 600, from behind the wall into view and back, then far behind the wall; the viewer stands
// still. No set: beyond the radius everything is admitted, so line of sight alone decides.
TEST(InterestSight, AWalkPastAWallIsSentWhenSeenAndForTheHold) {
  const std::vector<Box> boxes = room_boxes({kWall});
  const BspTree tree = room_tree({kWall});
  const PotentiallyVisibleSet none;
  InterestSettings settings = sight_settings(0.25);  // 8 snapshots at 32 Hz
  settings.sight_margin = 32;
  const std::size_t hold = 8;
  std::vector<float> path;  // the target's y, snapshot by snapshot
  for (float y = -900; y <= 900; y += 24)
    path.push_back(y);
  for (float y = 900; y >= -900; y -= 40)
    path.push_back(y);
  for (int i = 0; i < 20; ++i)
    path.push_back(-900);

  std::size_t times_seen = 0, times_hidden = 0, appeared = 0;
  // Viewers at several places, so the target comes into view past several edges of the wall and the cache
  // meets segments that leave their wall at every sample.
  for (int place = 0; place < 12; ++place) {
    InterestFilter filter(settings, none, &tree);
    SightMemory memory;
    const Entity viewer = player(1, {-900.0f + 60 * place, 450.0f + 37 * place, 0});
    std::vector<bool> seen, sent;
    std::vector<std::uint32_t> kept;
    for (const float y : path) {
      const std::vector<Entity> entities = {viewer, player(2, {600, y, 0})};
      filter.begin_snapshot(entities, kPeriod);
      const InterestViewer v = filter.viewer(1, &entities[0]);
      filter.select(v, kept, &memory);
      const Aabb box = world_box(entities[1], entities[1].pose);
      const Aabb grown{box.min - Vec3{32, 32, 32}, box.max + Vec3{32, 32, 32}};
      seen.push_back(oracle_sees_box(boxes, v.eye, grown));
      sent.push_back(std::find(kept.begin(), kept.end(), 1u) != kept.end());
      ASSERT_NE(std::find(kept.begin(), kept.end(), 0u), kept.end());  // its own player, always
    }
    for (std::size_t s = 0; s < path.size(); ++s) {
      times_seen += seen[s] ? 1 : 0;
      times_hidden += seen[s] ? 0 : 1;
      appeared += s > 0 && seen[s] && !seen[s - 1] ? 1 : 0;
      // Seen now: sent now (the occluder cache never holds back a player the tree would see).
      EXPECT_TRUE(!seen[s] || sent[s]) << "place " << place << ", snapshot " << s;
      // Sent only when seen within the hold (the snapshot itself and the `hold` before it).
      if (sent[s]) {
        bool recently = false;
        for (std::size_t k = s >= hold ? s - hold : 0; k <= s; ++k)
          recently = recently || seen[k];
        EXPECT_TRUE(recently) << "place " << place << ", snapshot " << s;
      }
      // Seen at s: still sent through s + hold.
      if (seen[s] && sent[s]) {
        for (std::size_t k = s; k <= std::min(path.size() - 1, s + hold); ++k)
          EXPECT_TRUE(sent[k]) << "place " << place << ", held from " << s << " to " << k;
      }
    }
    EXPECT_FALSE(sent.back());
    EXPECT_GT(memory.take_segments(), 0u);
    EXPECT_GT(memory.take_culled(), 20u);
  }
  EXPECT_GT(times_seen, 200u);
  EXPECT_GT(times_hidden, 400u);
  EXPECT_GE(appeared, 12u);
}

// Within the radius a player is sent through walls (it can be heard, and it is about to come round); one
// that steps out of the radius behind the wall stays for the hold; without a tree, or with line of sight
// off, the set alone decides.
TEST(InterestSight, NearPlayersAreSentAndHeldAndTheSettingTurnsItOff) {
  const BspTree tree = room_tree({kWall});
  const PotentiallyVisibleSet none;
  const InterestSettings settings = sight_settings(0.25);
  InterestFilter filter(settings, none, &tree);
  SightMemory memory;
  const Vec3 viewer{-100, -500, 0};
  EXPECT_TRUE(sends(filter, &memory, viewer, {100, -500, 0}));  // 200 units away, behind the wall
  for (int s = 0; s < 8; ++s)
    EXPECT_TRUE(sends(filter, &memory, viewer, {700, -500, 0})) << s;  // beyond the radius, hidden: held
  EXPECT_FALSE(sends(filter, &memory, viewer, {700, -500, 0}));
  EXPECT_FALSE(sends(filter, &memory, viewer, {700, -500, 0}));
  EXPECT_TRUE(sends(filter, nullptr, viewer, {700, -500, 0}));  // no memory: the set alone

  InterestSettings off = settings;
  off.line_of_sight = 0;
  InterestFilter without(off, none, &tree);
  SightMemory unused;
  EXPECT_TRUE(sends(without, &unused, viewer, {700, -500, 0}));
  InterestFilter treeless(settings, none, nullptr);
  EXPECT_TRUE(sends(treeless, &unused, viewer, {700, -500, 0}));
  EXPECT_EQ(unused.size(), 0u);
}

// The occluder cache answers for an eye outside solid only: a viewer whose eye ends up inside a brush (a
// pillar here; nothing can be judged from there, so nothing is culled) is sent the player the cache last
// found hidden behind the wall, though every segment still crosses the wall.
TEST(InterestSight, TheOccluderCacheSkipsTracesButNotAnEyeInSolid) {
  const BspTree tree = room_tree({kWall, {{-520, -520, 0}, {-480, -480, 100}}});
  const PotentiallyVisibleSet none;
  InterestFilter filter(sight_settings(0), none, &tree);
  SightMemory memory;
  const Vec3 target{700, -500, 0};
  EXPECT_FALSE(sends(filter, &memory, {-500, -600, 0}, target));  // traced: hidden behind the wall
  EXPECT_GE(memory.take_segments(), std::uint64_t(kSightSamples));
  EXPECT_FALSE(sends(filter, &memory, {-500, -590, 0}, target));  // every segment still crosses the wall
  EXPECT_EQ(memory.take_segments(), 0u);
  EXPECT_TRUE(sends(filter, &memory, {-500, -500, 0}, target));  // the eye (feet + 50) inside the pillar
  EXPECT_FALSE(sends(filter, &memory, {-500, -600, 0}, target));
}

// An onlooker beyond the radius is sent the beginning of a touch only when it sees the point; the
// players in the touch always get it.
TEST(InterestSight, AnOnlookerGetsATouchOnlyWhenItSeesThePoint) {
  const std::vector<Box> boxes = room_boxes({kWall});
  const BspTree tree = room_tree({kWall});
  const PotentiallyVisibleSet none;
  InterestFilter filter(sight_settings(0.25), none, &tree);
  const std::vector<Entity> entities = {player(1, {600, -600, 0}), player(2, {630, -600, 0}),
                                        player(3, {-600, -600, 0}), player(4, {-600, 800, 0}),
                                        player(5, {600, 800, 0})};
  filter.begin_snapshot(entities, kPeriod);
  std::vector<InterestViewer> viewers;
  for (const Entity& e : entities)
    viewers.push_back(filter.viewer(e.id, &e));
  ContactRecord record;
  record.contact.phase = ContactPhase::kBegin;
  record.contact.a = 1;
  record.contact.b = 2;
  record.contact.point = {615, -600, 28};
  record.a_kind = record.b_kind = static_cast<std::uint8_t>(EntityKind::kPlayer);
  std::vector<std::uint32_t> to;
  const ContactRoute route = filter.route_contact(record, viewers, to);
  std::vector<std::uint32_t> expected = {0, 1};  // the two in the touch
  for (std::uint32_t i = 2; i < viewers.size(); ++i)
    if (oracle_sees(boxes, viewers[i].eye, record.contact.point)) expected.push_back(i);
  EXPECT_EQ(to, expected);
  // Player 3 (behind the wall) is not sent it, nor 4 (its line crosses the wall south of the gap); 5, across
  // open floor, is.
  EXPECT_EQ(std::count(to.begin(), to.end(), 2u), 0);
  EXPECT_EQ(std::count(to.begin(), to.end(), 3u), 0);
  EXPECT_EQ(std::count(to.begin(), to.end(), 4u), 1);
  EXPECT_EQ(route.suppressed, viewers.size() - to.size());
}

}  // namespace
}  // namespace shiftcast
