#include "collision/brush.hpp"

namespace shiftcast {

Brush brush_from_box(Vec3 min, Vec3 max) {
  Brush b;
  b.planes = {
      {{1, 0, 0}, max.x},   {{-1, 0, 0}, -min.x}, {{0, 1, 0}, max.y},
      {{0, -1, 0}, -min.y}, {{0, 0, 1}, max.z},   {{0, 0, -1}, -min.z},
  };
  return b;
}

}  // namespace shiftcast
