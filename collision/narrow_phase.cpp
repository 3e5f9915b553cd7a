#include "collision/narrow_phase.hpp"
