#include "world/prop_model.hpp"
