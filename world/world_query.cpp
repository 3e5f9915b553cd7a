#include "world/world_query.hpp"
