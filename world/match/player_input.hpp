// PlayerInput (protocol/player_input.hpp): what a client sends for one tick (one "usercmd"). The
// simulation applies exactly one per player per tick; the server fills it from the network, bots and
// tests fill it directly. This header adds the rule for which inputs are applied.
#pragma once

#include <cstdint>

#include "protocol/player_input.hpp"

namespace shiftcast {

// Values outside the ranges of PlayerInput's fields (or NaN) are not applied: the simulation counts them and
// treats the input as "no input". The check is here so the server refuses the same inputs the simulation
// would.
bool input_valid(const PlayerInput& input);

}  // namespace shiftcast
