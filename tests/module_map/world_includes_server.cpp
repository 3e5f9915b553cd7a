// Forbidden: nothing includes server/, world/match least of all.
#include "server/match.hpp"
