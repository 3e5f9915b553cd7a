#include "world/filters.hpp"
