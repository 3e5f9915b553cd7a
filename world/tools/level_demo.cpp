// shiftcast-demo: the main job until the server exists. Builds a procedural level into the collision
// BSP, prints the build statistics, then sweeps players (cylinders), spheres and rays through it from
// random free positions and prints what they hit, with a checksum of every answer so two builds can be
// compared.
//
//   shiftcast-demo [--brushes N] [--seed S] [--queries Q]
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "collision/bsp_build.hpp"
#include "world/level/procedural_level.hpp"

namespace {

using namespace shiftcast;

struct DemoOptions {
  std::int32_t brushes = 1200;
  std::uint32_t seed = 1;
  std::int32_t queries = 200000;
};

DemoOptions parse(int argc, char** argv) {
  DemoOptions o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const long value = std::strtol(argv[i + 1], nullptr, 10);
    if (std::strcmp(argv[i], "--brushes") == 0)
      o.brushes = std::int32_t(value);
    else if (std::strcmp(argv[i], "--seed") == 0)
      o.seed = std::uint32_t(value);
    else if (std::strcmp(argv[i], "--queries") == 0)
      o.queries = std::int32_t(value);
    else
      throw std::runtime_error(std::string("unknown option ") + argv[i]);
  }
  return o;
}

std::uint64_t mix(std::uint64_t h, float v) {
  std::uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return (h ^ bits) * 0x100000001b3ull;
}

}  // namespace

int main(int argc, char** argv) try {
  const DemoOptions options = parse(argc, argv);
  const ProceduralLevel level =
      make_procedural_level({.seed = options.seed, .target_brushes = options.brushes});
  const BspBuildResult built = build_bsp(level.brushes, {});
  if (built.error != BspBuildError::kNone) {
    spdlog::error("level build failed at brush {}: {}", built.error_brush, to_string(built.error));
    return 1;
  }
  spdlog::info("level: {}", format_stats(built.stats));
  const BspTree& tree = built.tree;

  std::mt19937 rng(options.seed);
  const auto uniform = [&](float lo, float hi) {
    return lo + (hi - lo) * float(rng() >> 8) * (1.0f / 16777216.0f);
  };
  const Aabb box = tree.bounds();
  const auto random_point = [&] {
    return Vec3{uniform(box.min.x, box.max.x), uniform(box.min.y, box.max.y), uniform(0.0f, 512.0f)};
  };
  const Shape shapes[] = {Shape::cylinder(15, 56), Shape::sphere(8), Shape::point()};
  const char* names[] = {"player cylinder r15 h56", "sphere r8", "ray"};
  for (int s = 0; s < 3; ++s) {
    std::int64_t hits = 0;
    std::int64_t starts_free = 0;
    std::uint64_t checksum = 0xcbf29ce484222325ull;
    const auto start = std::chrono::steady_clock::now();
    for (std::int32_t q = 0; q < options.queries; ++q) {
      Vec3 from = random_point();
      if (tree.overlap(shapes[s], from).overlap) continue;
      ++starts_free;
      const Vec3 to = from + Vec3{uniform(-512, 512), uniform(-512, 512), uniform(-256, 256)};
      const TraceResult r = tree.trace(shapes[s], from, to);
      hits += r.hit;
      checksum = mix(mix(checksum, r.fraction), r.end_position.z);
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    spdlog::info("{}: {} sweeps from free space, {} hit, {:.0f} overlap+sweep pairs/s, checksum {:016x}",
                 names[s], starts_free, hits, double(options.queries) / seconds, checksum);
  }
  return 0;
} catch (const std::exception& e) {
  spdlog::error("{}", e.what());
  return 2;
}
