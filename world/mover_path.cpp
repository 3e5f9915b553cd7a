#include "world/mover_path.hpp"
