// Forbidden: world/level is below world/match and never includes it.
#include "world/match/simulation.hpp"
