#include "server/interest_filter.hpp"

#include <algorithm>

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

InterestFilter::InterestFilter(const InterestSettings& settings, const PotentiallyVisibleSet& set)
    : settings_(settings), set_(set) {}

void InterestFilter::begin_snapshot(std::span<const Entity> entities, float period_s) {
  candidates_.resize(entities.size());
  next_projectiles_.clear();
  auto previous = previous_projectiles_.begin();
  for (std::size_t i = 0; i < entities.size(); ++i) {
    const Entity& e = entities[i];
    Candidate& c = candidates_[i];
    c.id = e.id;
    c.projectile = e.kind == EntityKind::kProjectile;
    c.box = world_box(e, e.pose);
    // The set is only asked when there is one: cluster_at on an empty set answers kNoCluster anyway.
    c.centre_cluster = set_.empty() ? kNoCluster : set_.cluster_at(c.box.center());
    if (!c.projectile) continue;
    while (previous != previous_projectiles_.end() && previous->first < e.id)
      ++previous;
    c.path_to = e.pose.position;
    c.path_from = previous != previous_projectiles_.end() && previous->first == e.id
                      ? previous->second
                      : e.pose.position - e.velocity * period_s;
    next_projectiles_.emplace_back(e.id, e.pose.position);
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

bool InterestFilter::visible(const InterestViewer& viewer, const Candidate& c) const {
  if (c.id == viewer.entity || !viewer.placed) return true;
  if (set_.empty()) {
    if (settings_.no_set_radius <= 0) return true;
    return within(viewer, c.box, std::max(settings_.radius, settings_.no_set_radius));
  }
  if (within(viewer, c.box, settings_.radius)) return true;
  if (viewer.cluster == kNoCluster) return true;
  // The centre's cluster seen: the box touches a visible cluster (one bit test, the common case).
  if (c.centre_cluster != kNoCluster && set_.cluster_sees(viewer.cluster, c.centre_cluster)) return true;
  if (c.projectile)
    return set_.sees_segment(viewer.cluster, c.path_from, c.path_to) || set_.sees_box(viewer.cluster, c.box);
  return set_.sees_box(viewer.cluster, c.box);
}

void InterestFilter::select(const InterestViewer& viewer, std::vector<std::uint32_t>& kept) const {
  kept.clear();
  for (std::size_t i = 0; i < candidates_.size(); ++i)
    if (!enabled() || visible(viewer, candidates_[i])) kept.push_back(std::uint32_t(i));
}

bool InterestFilter::sees_point(const InterestViewer& viewer, Vec3 point, std::int32_t point_cluster) const {
  if (!viewer.placed) return true;
  const Aabb at{point, point};
  if (set_.empty()) {
    if (settings_.no_set_radius <= 0) return true;
    return within(viewer, at, std::max(settings_.radius, settings_.no_set_radius));
  }
  return within(viewer, at, settings_.radius) || set_.cluster_sees(viewer.cluster, point_cluster);
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
