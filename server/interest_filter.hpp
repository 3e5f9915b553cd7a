// Interest management (issue 15): which entities each client's snapshot carries and which contact events
// each client is sent. A client is sent its own entity, everything within InterestSettings::radius of its
// eye, and beyond that what the level's potentially visible set says its eye's cluster may see: an
// entity whose bounds touch a visible cluster, a projectile whose path since the previous snapshot
// crosses one. A level without a set falls back to distance alone (InterestSettings::no_set_radius).
// With the level's tree and InterestSettings::line_of_sight, a player beyond the radius that the set admits
// is sent only while a line from the eye reaches its box grown by sight_margin, or did within sight_hold_s
// (server/line_of_sight.hpp; the client's SightMemory keeps that). Contact events go to the clients whose
// entity is in them and, for the beginning of a touch between a player and another entity, to every
// client that sees its point (docs/server.md, "Interest").
//
//   InterestFilter interest(settings.interest, level.compiled.visibility, &level.compiled.tree);  // per
//   match interest.begin_snapshot(sim.entities(), snapshot_period_s);    // once per snapshot (or event tick)
//   InterestViewer v = interest.viewer(entity, sim.find(entity));  // once per client
//   interest.select(v, kept, &client.sight);                       // indices into the entities, ascending
//   client_world = worlds.filtered(*world_, kept);                 // FilteredWorlds: reused buffers
//   interest.route_contact(record, viewers, to);                   // the viewers a contact goes to
//
// The filter never culls on missing information: no set, or an eye or a point the set cannot place,
// means "visible" (world/level/potentially_visible_set.hpp). Worker thread only (it keeps per-snapshot
// scratch); the set it reads is immutable and shared.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "collision/aabb.hpp"
#include "collision/vec3.hpp"
#include "protocol/snapshot_delta.hpp"
#include "server/config/interest_settings.hpp"
#include "server/contact_feed.hpp"
#include "server/line_of_sight.hpp"
#include "world/level/potentially_visible_set.hpp"
#include "world/match/entity.hpp"

namespace shiftcast {

// A player's eye above its feet (Quake III: 50 of the 56-unit box, as the bots' BotSettings::eye_height).
inline constexpr float kInterestEyeHeight = 50;

// A client as the filter sees it: its entity, its eye, and the eye's cluster, found once per snapshot.
struct InterestViewer {
  EntityId entity = kNoEntity;
  Vec3 eye{};
  std::int32_t cluster = kNoCluster;
  bool placed = false;  // false: the client has no entity in the world yet, it is sent everything
};

// What route_contact decided for one contact: clients it was queued for, and clients that would have
// been sent it by its kind and phase but could not see its point.
struct ContactRoute {
  std::size_t routed = 0;
  std::size_t suppressed = 0;
};

class InterestFilter {
 public:
  // `set` and `tree` must outlive the filter (the hosted level's, shared by its matches). Without a tree
  // there is no line-of-sight test, whatever the settings say.
  InterestFilter(const InterestSettings& settings, const PotentiallyVisibleSet& set,
                 const BspTree* tree = nullptr);

  bool enabled() const { return settings_.enabled != 0; }

  // Once per snapshot: each entity's bounds, the cluster of its bounds' centre, and for projectiles the
  // path since the previous call (from where it was then; a projectile new since then, from where its
  // velocity puts it `period_s` ago). `entities` sorted by id; the indices select() returns are into it.
  void begin_snapshot(std::span<const Entity> entities, float period_s);

  // `entity`: the client's own entity id, `e` its state (null: not in the world, sees everything).
  InterestViewer viewer(EntityId entity, const Entity* e) const;

  // The indices (ascending) of begin_snapshot's entities the viewer is sent, into `kept` (cleared first).
  // With `sight` (the viewer's own memory, carried from one snapshot to the next) and line of sight on,
  // players the set admits beyond the radius must also be in sight or held; null: the set alone decides.
  void select(const InterestViewer& viewer, std::vector<std::uint32_t>& kept,
              SightMemory* sight = nullptr) const;

  // The viewer may see `point`, whose cluster is `point_cluster` (set.cluster_at(point)).
  bool sees_point(const InterestViewer& viewer, Vec3 point, std::int32_t point_cluster) const;

  // Appends to `to` the indices into `viewers` that `record` is queued for, in viewer order: the
  // viewers whose entity is a or b (always); then, when enabled, for a begin between a player and
  // another entity, every viewer that sees the contact point.
  ContactRoute route_contact(const ContactRecord& record, std::span<const InterestViewer> viewers,
                             std::vector<std::uint32_t>& to) const;

  const PotentiallyVisibleSet& set() const { return set_; }

 private:
  // Why a candidate is sent: not at all, always (own, near, unplaced viewer), or because the set admits it.
  enum class Admit : std::uint8_t { kNo, kAlways, kBySet };
  struct Candidate {
    EntityId id = kNoEntity;
    bool projectile = false;
    bool player = false;
    Aabb box;                                  // world bounds now
    Aabb sight_box;                            // players: box grown by sight_margin
    Vec3 path_from{};                          // projectiles: where it was at the previous snapshot
    Vec3 path_to{};                            // projectiles: where it is
    std::int32_t centre_cluster = kNoCluster;  // of box.center(): seen from there means seen
    // The clusters the box touches and (projectiles) the path passes through (kNoCluster entries for its
    // opaque stretches), as ranges of clusters_:
    // found once per snapshot, so each viewer tests bits instead of walking the set's tree.
    std::uint32_t box_first = 0, box_count = 0;
    std::uint32_t path_first = 0, path_count = 0;
  };
  bool within(const InterestViewer& viewer, const Aabb& box, double radius) const;
  Admit admit(const InterestViewer& viewer, const Candidate& c) const;
  // set_.sees_any over a candidate's list in clusters_.
  bool sees_any(std::int32_t from, std::uint32_t first, std::uint32_t count) const;
  bool sight_active() const { return tree_ != nullptr && settings_.line_of_sight != 0; }
  bool in_sight(const InterestViewer& viewer, bool eye_in_solid, const Candidate& c,
                SightMemory& sight) const;

  InterestSettings settings_;
  const PotentiallyVisibleSet& set_;
  const BspTree* tree_ = nullptr;
  std::uint64_t snapshot_ = 0;        // begin_snapshot calls: the clock of SightMemory
  std::uint64_t hold_snapshots_ = 0;  // sight_hold_s in snapshots at the last period
  std::vector<Candidate> candidates_;
  std::vector<std::int32_t> clusters_;  // the candidates' cluster lists (set_.sees_any reads them)
  // Projectiles' positions at the previous begin_snapshot, ascending by id (their paths' starts).
  std::vector<std::pair<EntityId, Vec3>> previous_projectiles_;
  std::vector<std::pair<EntityId, Vec3>> next_projectiles_;  // scratch, swapped with the above
};

// Per-client filtered worlds from reused buffers. A connection keeps the world it was sent (as the
// baseline the client will hold), so a buffer is reused only once nothing else holds it.
class FilteredWorlds {
 public:
  // world[i] for every i in `kept` (ascending), in a buffer nobody else holds.
  std::shared_ptr<const SnapshotState> filtered(const SnapshotState& world,
                                                std::span<const std::uint32_t> kept);
  std::size_t buffers() const { return pool_.size(); }

 private:
  std::vector<std::shared_ptr<SnapshotState>> pool_;
};

// Buffers one client's FilteredWorlds keeps: the worlds its connection may still hold (the unacknowledged
// snapshots and the baseline) and one to fill; beyond that, a new buffer is made and dropped after use.
inline constexpr std::size_t kMaxPooledWorlds = kSnapshotHistory + 2;

}  // namespace shiftcast
