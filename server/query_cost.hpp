// Query cost: what a request is charged against the RPC's token buckets (server/query_budget.hpp),
// in units of one short raycast. The cost follows the work a query can make the world do, and is known
// before the world is touched (it reads only the request):
//
//   length factor  max(1, min(length, kMaxCostLength) / kCostLength)   (a ray's max_distance, a sweep's
//                                                                      from-to distance)
//   size factor    max(1, extent / kCostExtent)    extent: the shape's largest dimension (a sphere's or
//                                                 cylinder's diameter, a cylinder's height, a box's
//                                                 largest full extent)
//   raycast  kRaycastCost · length factor
//   sweep    kSweepCost   · length factor · size factor
//   overlap  kOverlapCost · size factor
//   batch    the sum of its queries (a query that sets none or several members: kRaycastCost)
//
// A trace visits the BSP leaves along its path, so its work grows with the length; a larger shape
// expands every brush it is tested against, so more leaves and brushes are touched. Lengths beyond
// kMaxCostLength leave any level, so they cost no more. Player-sized shapes (a 15 x 56 cylinder) over
// room-sized distances cost what they always did: 1 per raycast, 2 per sweep or overlap.
//
// Every frame is also charged for being read and verified, before anything else looks at it:
// frame_cost(bytes) = max(kControlCost, bytes / kFrameCostBytes). A request is charged the larger of its
// frame cost and its work, so a small request costs its work and a large one at least its size.
#pragma once

#include <cstddef>

#include "protocol/shiftcast_generated.h"

namespace shiftcast {

inline constexpr double kRaycastCost = 1;
inline constexpr double kSweepCost = 2;
inline constexpr double kOverlapCost = 2;
// Everything but queries (admin and control calls, refused frames) costs this much at least.
inline constexpr double kControlCost = 1;
// Units of length and of shape size that one cost factor stands for (Quake units).
inline constexpr double kCostLength = 4096;
inline constexpr double kMaxCostLength = 65536;
inline constexpr double kCostExtent = 128;
// Bytes of frame that cost one unit to read and verify.
inline constexpr double kFrameCostBytes = 1024;

double query_cost(const wire::RaycastRequest& request);
double query_cost(const wire::SweepRequest& request);
double query_cost(const wire::OverlapRequest& request);
double query_cost(const wire::BatchQuery& query);
// The sum of its queries' costs, at least kRaycastCost.
double batch_cost(const wire::BatchRequest& request);
double frame_cost(std::size_t frame_bytes);

}  // namespace shiftcast
