#include "server/query_cost.hpp"

#include <algorithm>
#include <cmath>

namespace shiftcast {

namespace {

// NaN and infinities are refused later (BadArgument); here they cost the most a length or size can.
double length_factor(double length) {
  if (!(length >= 0)) length = kMaxCostLength;
  return std::max(1.0, std::min(length, kMaxCostLength) / kCostLength);
}

double size_factor(const wire::ShapeSpec* spec) {
  if (spec == nullptr) return 1;
  double extent = 0;
  switch (spec->kind()) {
    case wire::ShapeKind::Sphere:
      extent = 2.0 * double(spec->radius());
      break;
    case wire::ShapeKind::Cylinder:
      extent = std::max(2.0 * double(spec->radius()), double(spec->height()));
      break;
    case wire::ShapeKind::Box:
      if (const wire::Vec3f* h = spec->half_extents()) {
        extent = 2.0 * std::max({double(h->x()), double(h->y()), double(h->z())});
      }
      break;
    default:
      break;
  }
  if (std::isnan(extent)) return 1;  // refused later, before any work
  return std::max(1.0, std::min(extent, 1e9) / kCostExtent);
}

double distance(const wire::Vec3f* a, const wire::Vec3f* b) {
  if (a == nullptr || b == nullptr) return 0;
  const double dx = double(b->x()) - a->x(), dy = double(b->y()) - a->y(), dz = double(b->z()) - a->z();
  return std::sqrt(dx * dx + dy * dy + dz * dz);
}

}  // namespace

double query_cost(const wire::RaycastRequest& request) {
  return kRaycastCost * length_factor(request.max_distance());
}

double query_cost(const wire::SweepRequest& request) {
  return kSweepCost * length_factor(distance(request.from(), request.to())) * size_factor(request.shape());
}

double query_cost(const wire::OverlapRequest& request) {
  return kOverlapCost * size_factor(request.shape());
}

double query_cost(const wire::BatchQuery& q) {
  const int members = int(q.raycast() != nullptr) + int(q.sweep() != nullptr) + int(q.overlap() != nullptr);
  if (members != 1) return kRaycastCost;  // answered with an error, which is work too
  if (q.raycast()) return query_cost(*q.raycast());
  if (q.sweep()) return query_cost(*q.sweep());
  return query_cost(*q.overlap());
}

double batch_cost(const wire::BatchRequest& request) {
  const auto* queries = request.queries();
  if (queries == nullptr) return kRaycastCost;
  double cost = 0;
  for (const wire::BatchQuery* q : *queries)
    cost += query_cost(*q);
  return std::max(cost, kRaycastCost);
}

double frame_cost(std::size_t frame_bytes) {
  return std::max(kControlCost, double(frame_bytes) / kFrameCostBytes);
}

}  // namespace shiftcast
