#include "collision/time_of_impact.hpp"
