#include "server/interest_filter.hpp"

#include <algorithm>
#include <cmath>

namespace shiftcast {

namespace {

// Squared distance from p to the closed box (0 inside).
double squared_distance(Vec3 p, const Aabb& box) {
  const auto axis = [](float v, float lo, float hi) {
    const double d = v < lo ? double(lo) - v : v > hi ? double(v) - hi : 0.0;
    return d * d;
  };
  return axis(p.x, box.min.x, box.max.x) + axis(p.y, box.min.y, box.max.y) + axis(p.z, box.min.z, box.max.z);
}

bool is_player(std::uint8_t kind) {
  return kind == static_cast<std::uint8_t>(EntityKind::kPlayer);
}

}  // namespace

InterestFilter::InterestFilter(const InterestSettings& settings, const PotentiallyVisibleSet& set,
                               const BspTree* tree)
    : settings_(settings), set_(set), tree_(tree) {}

void InterestFilter::begin_snapshot(std::span<const Entity> entities, float period_s) {
  candidates_.resize(entities.size());
  next_projectiles_.clear();
  clusters_.clear();
  ++snapshot_;
  hold_snapshots_ =
      period_s > 0 ? static_cast<std::uint64_t>(std::ceil(settings_.sight_hold_s / period_s)) : 0;
  const Vec3 margin{float(settings_.sight_margin), float(settings_.sight_margin),
                    float(settings_.sight_margin)};
  auto previous = previous_projectiles_.begin();
  for (std::size_t i = 0; i < entities.size(); ++i) {
    const Entity& e = entities[i];
    Candidate& c = candidates_[i];
    c.id = e.id;
    c.projectile = e.kind == EntityKind::kProjectile;
    c.box = world_box(e, e.pose);
    c.player = is_player(static_cast<std::uint8_t>(e.kind));
    if (c.player) c.sight_box = {c.box.min - margin, c.box.max + margin};
    // The set is only asked when there is one: cluster_at on an empty set answers kNoCluster anyway.
    c.centre_cluster = set_.empty() ? kNoCluster : set_.cluster_at(c.box.center());
    c.box_first = std::uint32_t(clusters_.size());
    set_.clusters_in_box(c.box, clusters_);
    c.box_count = std::uint32_t(clusters_.size()) - c.box_first;
    c.path_first = std::uint32_t(clusters_.size());
    c.path_count = 0;
    if (!c.projectile) continue;
    while (previous != previous_projectiles_.end() && previous->first < e.id)
      ++previous;
    c.path_to = e.pose.position;
    c.path_from = previous != previous_projectiles_.end() && previous->first == e.id
                      ? previous->second
                      : e.pose.position - e.velocity * period_s;
    next_projectiles_.emplace_back(e.id, e.pose.position);
    set_.clusters_on_segment(c.path_from, c.path_to, clusters_);
    c.path_count = std::uint32_t(clusters_.size()) - c.path_first;
  }
  previous_projectiles_.swap(next_projectiles_);
}

InterestViewer InterestFilter::viewer(EntityId entity, const Entity* e) const {
  InterestViewer v;
  v.entity = entity;
  if (e == nullptr) return v;
  v.placed = true;
  v.eye = e->pose.position + Vec3{0, 0, kInterestEyeHeight};
  v.cluster = set_.empty() ? kNoCluster : set_.cluster_at(v.eye);
  return v;
}

bool InterestFilter::within(const InterestViewer& viewer, const Aabb& box, double radius) const {
  return squared_distance(viewer.eye, box) <= radius * radius;
}

InterestFilter::Admit InterestFilter::admit(const InterestViewer& viewer, const Candidate& c) const {
  if (c.id == viewer.entity || !viewer.placed) return Admit::kAlways;
  if (within(viewer, c.box, settings_.radius)) return Admit::kAlways;
  if (set_.empty()) {
    if (settings_.no_set_radius <= 0) return Admit::kBySet;
    return within(viewer, c.box, std::max(settings_.radius, settings_.no_set_radius)) ? Admit::kBySet
                                                                                      : Admit::kNo;
  }
  if (viewer.cluster == kNoCluster) return Admit::kBySet;
  // The centre's cluster seen: the box touches a visible cluster (one bit test, the common case).
  if (c.centre_cluster != kNoCluster && set_.cluster_sees(viewer.cluster, c.centre_cluster))
    return Admit::kBySet;
  const bool seen = (c.projectile && sees_any(viewer.cluster, c.path_first, c.path_count)) ||
                    sees_any(viewer.cluster, c.box_first, c.box_count);
  return seen ? Admit::kBySet : Admit::kNo;
}

bool InterestFilter::sees_any(std::int32_t from, std::uint32_t first, std::uint32_t count) const {
  return set_.sees_any(from, std::span<const std::int32_t>(clusters_).subspan(first, count));
}

bool InterestFilter::in_sight(const InterestViewer& viewer, bool eye_in_solid, const Candidate& c,
                              SightMemory& sight) const {
  const SightMemory::Entry* was = sight.find(c.id);
  const bool held = was != nullptr && was->until >= snapshot_;
  SightMemory::Entry next = was != nullptr ? *was : SightMemory::Entry{};
  next.target = c.id;
  bool seen = false;
  int segments = 0;
  if (was != nullptr && was->hidden && !eye_in_solid) {
    // Hidden last time: each segment is first clipped against the brush that blocked it then, and traced
    // through the tree only when it no longer crosses that brush. First, one test for all nine: the
    // centre's blocker, at the parameter where the centre's segment is deep in it, holds the whole box
    // as seen from the eye (brush_blocks_box); then that brush blocks every segment there.
    const std::int32_t centre_blocker = was->blockers[0];
    const bool centre_blocked =
        brush_blocks(*tree_, centre_blocker, viewer.eye, sight_sample(c.sight_box, 0), &next.deep_t[0]);
    if (centre_blocked && brush_blocks_box(*tree_, centre_blocker, viewer.eye, c.sight_box, next.deep_t[0])) {
      std::fill(std::begin(next.blockers), std::end(next.blockers), centre_blocker);
      std::fill(std::begin(next.deep_t), std::end(next.deep_t), next.deep_t[0]);
      sight.keep(next);
      sight.count(0, !held);
      return held;
    }
    for (int s = 0; s < kSightSamples && !seen; ++s) {
      const Vec3 point = sight_sample(c.sight_box, s);
      if (s == 0 ? centre_blocked
                 : brush_blocks(*tree_, was->blockers[s], viewer.eye, point, &next.deep_t[s]))
        continue;
      ++segments;
      next.deep_t[s] = -1;  // a new blocker, or none
      if (sees(*tree_, viewer.eye, point, &next.blockers[s])) {
        seen = true;
        next.sample = static_cast<std::uint8_t>(s);
      }
    }
  } else {
    const SightLook look = look_at(*tree_, viewer.eye, c.sight_box, was != nullptr ? was->sample : 0);
    seen = look.seen;
    segments = look.segments;
    next.sample = static_cast<std::uint8_t>(look.sample);
    std::copy(std::begin(look.blockers), std::end(look.blockers), std::begin(next.blockers));
    std::fill(std::begin(next.deep_t), std::end(next.deep_t), -1.0f);
  }
  next.hidden = !seen;
  if (seen) next.until = snapshot_ + hold_snapshots_;
  sight.keep(next);
  sight.count(segments, !seen && !held);
  return seen || held;
}

void InterestFilter::select(const InterestViewer& viewer, std::vector<std::uint32_t>& kept,
                            SightMemory* sight) const {
  kept.clear();
  const bool test_sight = sight != nullptr && sight_active() && enabled() && viewer.placed;
  // The occluder cache's answers hold for an eye outside solid (in solid, the tree sees everything).
  const bool eye_in_solid = test_sight && tree_->point_brush(viewer.eye) != kNoBrush;
  for (std::size_t i = 0; i < candidates_.size(); ++i) {
    const Candidate& c = candidates_[i];
    const Admit a = enabled() ? admit(viewer, c) : Admit::kAlways;
    if (a == Admit::kNo) continue;
    if (test_sight && c.player && c.id != viewer.entity) {
      if (a == Admit::kBySet && !in_sight(viewer, eye_in_solid, c, *sight)) continue;
      // A near player counts as seen, so one that steps beyond the radius behind a wall is held, not
      // dropped at once.
      if (a == Admit::kAlways) {
        const SightMemory::Entry* was = sight->find(c.id);
        SightMemory::Entry near;
        near.target = c.id;
        near.until = snapshot_ + hold_snapshots_;
        near.sample = was != nullptr ? was->sample : std::uint8_t{0};
        sight->keep(near);
      }
    }
    kept.push_back(std::uint32_t(i));
  }
  if (test_sight) sight->finish();
}

bool InterestFilter::sees_point(const InterestViewer& viewer, Vec3 point, std::int32_t point_cluster) const {
  if (!viewer.placed) return true;
  const Aabb at{point, point};
  if (within(viewer, at, settings_.radius)) return true;
  if (set_.empty()) {
    if (settings_.no_set_radius > 0 && !within(viewer, at, settings_.no_set_radius)) return false;
  } else if (!set_.cluster_sees(viewer.cluster, point_cluster)) {
    return false;
  }
  // Beyond the radius and admitted by the set (or by distance without one): with line of sight on, the
  // segment from the eye to the point must also be clear.
  return !sight_active() || sees(*tree_, viewer.eye, point);
}

ContactRoute InterestFilter::route_contact(const ContactRecord& record,
                                           std::span<const InterestViewer> viewers,
                                           std::vector<std::uint32_t>& to) const {
  ContactRoute route;
  const Contact& c = record.contact;
  const bool observed = enabled() && c.phase == ContactPhase::kBegin && c.b != kNoEntity &&
                        (is_player(record.a_kind) || is_player(record.b_kind));
  const std::int32_t point_cluster = observed && !set_.empty() ? set_.cluster_at(c.point) : kNoCluster;
  if (enabled() && c.phase == ContactPhase::kPersist && settings_.persist_events == 0) return route;
  for (std::size_t i = 0; i < viewers.size(); ++i) {
    const InterestViewer& v = viewers[i];
    const bool own = v.entity != kNoEntity && (v.entity == c.a || v.entity == c.b);
    if (own || (observed && sees_point(v, c.point, point_cluster))) {
      to.push_back(std::uint32_t(i));
      ++route.routed;
    } else if (observed) {
      ++route.suppressed;
    }
  }
  return route;
}

std::shared_ptr<const SnapshotState> FilteredWorlds::filtered(const SnapshotState& world,
                                                              std::span<const std::uint32_t> kept) {
  std::shared_ptr<SnapshotState> out;
  for (const auto& buffer : pool_)
    if (buffer.use_count() == 1) {
      out = buffer;
      break;
    }
  if (out == nullptr) {
    out = std::make_shared<SnapshotState>();
    if (pool_.size() < kMaxPooledWorlds) pool_.push_back(out);
  }
  out->clear();
  out->reserve(kept.size());
  for (std::uint32_t i : kept)
    out->push_back(world[i]);
  return out;
}

}  // namespace shiftcast
