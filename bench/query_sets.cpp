#include "bench/query_sets.hpp"
#include "tests/support/seeded_random.hpp"

#include <cmath>
#include <random>

namespace shiftcast::bench {
namespace {

// Player sweeps climb or fall at most this steeply (sin of the pitch): movement is mostly horizontal,
// but stairs, ramps, jumps and falls all give the motion a vertical part.
constexpr float kCylinderMaxPitchSine = 0.5f;
// A cap on start attempts per query makes a level that is mostly solid come back short instead of hang.
constexpr std::size_t kMaxStartAttemptsPerQuery = 64;

float motion_length(std::mt19937& rng, MotionLength length) {
  switch (length) {
    case MotionLength::kShort:
      return 16.0f * (1.0f - unit_float(rng));  // (0, 16]: a zero-length motion is a different query
    case MotionLength::kMedium:
      return uniform_float(rng, 16.0f, 256.0f);
    case MotionLength::kLong:
      return uniform_float(rng, 2048.0f, 4096.0f);
  }
  return 0.0f;
}

Vec3 motion_direction(std::mt19937& rng, QueryKind kind) {
  // Uniform in z is uniform on the sphere (Archimedes), so rays and spheres have no preferred direction.
  const float max_sine = kind == QueryKind::kCylinder ? kCylinderMaxPitchSine : 1.0f;
  const float sin_pitch = uniform_float(rng, -max_sine, max_sine);
  // The heading by rejection from the unit disc: sqrt is correctly rounded everywhere, cos/sin are not.
  for (;;) {
    const float x = uniform_float(rng, -1.0f, 1.0f);
    const float y = uniform_float(rng, -1.0f, 1.0f);
    const float s = x * x + y * y;
    if (s > 1e-2f && s <= 1.0f) {
      const float horizontal = std::sqrt(1.0f - sin_pitch * sin_pitch) / std::sqrt(s);
      return {x * horizontal, y * horizontal, sin_pitch};
    }
  }
}

}  // namespace

const char* to_string(MotionLength length) {
  switch (length) {
    case MotionLength::kShort:
      return "short";
    case MotionLength::kMedium:
      return "medium";
    case MotionLength::kLong:
      return "long";
  }
  return "?";
}

std::vector<Query> make_query_set(const BspTree& tree, const Shape& shape, QueryKind kind,
                                  MotionLength length, std::size_t count, float start_height_fraction,
                                  std::uint32_t seed) {
  std::mt19937 rng(seed);
  const Aabb box = tree.bounds();
  std::vector<Query> queries;
  queries.reserve(count);
  for (std::size_t attempt = 0; attempt < kMaxStartAttemptsPerQuery * count && queries.size() < count;
       ++attempt) {
    const Vec3 from{
        uniform_float(rng, box.min.x, box.max.x), uniform_float(rng, box.min.y, box.max.y),
        uniform_float(rng, box.min.z, box.min.z + start_height_fraction * (box.max.z - box.min.z))};
    // Drawn before the free-space test so every attempt consumes the same numbers: a change to the tree
    // that frees or fills a few starts changes only those queries, not every one after them.
    const Vec3 direction = motion_direction(rng, kind);
    const float distance = motion_length(rng, length);
    if (tree.overlap(shape, from).overlap) continue;
    queries.push_back({from, from + direction * distance, direction, distance});
  }
  return queries;
}

}  // namespace shiftcast::bench
