// Forbidden: collision may use std only, so a collision source that reaches into world/ must not build.
#include "world/level/level.hpp"
