// Forbidden: tools/token may use the protocol alone, never world/.
#include "world/match/simulation.hpp"
