#include "server/line_of_sight.hpp"

#include "collision/shape.hpp"

namespace shiftcast {

Vec3 sight_sample(const Aabb& box, int index) {
  if (index <= 0 || index >= kSightSamples) return box.center();
  const int corner = index - 1;
  return {(corner & 1) != 0 ? box.max.x : box.min.x, (corner & 2) != 0 ? box.max.y : box.min.y,
          (corner & 4) != 0 ? box.max.z : box.min.z};
}

bool sees(const BspTree& tree, Vec3 eye, Vec3 point) {
  const TraceResult r = tree.trace(Shape::point(), eye, point);
  // An eye in solid cannot be judged: seen (never cull on missing information).
  return r.start_solid || !r.hit;
}

SightLook look_at(const BspTree& tree, Vec3 eye, const Aabb& box, int first) {
  if (first < 0 || first >= kSightSamples) first = 0;
  SightLook look;
  look.sample = first;
  for (int k = 0; k < kSightSamples; ++k) {
    const int sample = (first + k) % kSightSamples;
    ++look.segments;
    if (sees(tree, eye, sight_sample(box, sample))) {
      look.seen = true;
      look.sample = sample;
      return look;
    }
  }
  return look;
}

const SightMemory::Entry* SightMemory::find(EntityId target) {
  while (cursor_ < entries_.size() && entries_[cursor_].target < target)
    ++cursor_;
  return cursor_ < entries_.size() && entries_[cursor_].target == target ? &entries_[cursor_] : nullptr;
}

void SightMemory::finish() {
  entries_.swap(next_);
  next_.clear();
  cursor_ = 0;
}

std::uint64_t SightMemory::take_segments() {
  const std::uint64_t n = segments_;
  segments_ = 0;
  return n;
}

std::uint64_t SightMemory::take_culled() {
  const std::uint64_t n = culled_;
  culled_ = 0;
  return n;
}

}  // namespace shiftcast
