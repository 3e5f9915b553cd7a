#include "world/character_motor.hpp"
