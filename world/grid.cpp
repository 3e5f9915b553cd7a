#include "world/grid.hpp"
