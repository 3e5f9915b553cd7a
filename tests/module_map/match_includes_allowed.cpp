// Allowed, and must build: everything world/match may use, spelled as the forbidden cases spell theirs, so
// those cases fail for the missing header alone (not for a typo in a target or a broken build).
#include "collision/vec3.hpp"
#include "protocol/player_input.hpp"
#include "world/level/level.hpp"
#include "world/level/level_generated.h"
#include "world/match/simulation.hpp"
