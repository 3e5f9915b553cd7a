// Forbidden: the protocol never includes world/ (a client links protocol alone).
#include "world/match/simulation.hpp"
