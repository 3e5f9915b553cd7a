// The entity printout of `shiftcast-level replay --until` and `simulate --until`: every entity's pose,
// velocity and motor state at the tick the run stopped, or one entity and the entities near it, so an
// invariant violation found by either command can be looked at from both.
#pragma once

#include <optional>

#include "world/match/entity.hpp"
#include "world/match/simulation.hpp"

namespace shiftcast {

// How far around the watched entity's bounding sphere the printout looks for neighbours (units): a tick's
// worth of running (320 units/s at 64 Hz is 5 units) many times over, so whatever it could meet is listed.
inline constexpr float kPrintoutNeighbourhood = 64;

// All entities, or `only` and the entities whose bounding spheres come within kPrintoutNeighbourhood of
// its bounding sphere (each with the gap between the two spheres, a lower bound of their distance).
void print_entities(const Simulation& sim, std::optional<EntityId> only);

}  // namespace shiftcast
