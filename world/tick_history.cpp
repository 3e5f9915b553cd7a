#include "world/tick_history.hpp"
