// Target: the compiled-level loader (world/level/compiled_level.hpp): identifier, version, the FlatBuffers
// verifier, the checksum, the brush ranges and BspTree::check, then the navmesh data it carries through
// NavMesh::from_data and Detour's queries. Most inputs are resealed first (the checksum recomputed, as a
// hostile but careful author would), so mutations reach the checks behind the checksum.
// Promise: a LevelLoadError with a message, or a level whose tree passes check() and answers queries
// anywhere in and around its bounds; navmesh bytes load or are refused, and a loaded mesh answers queries.
//
// Input: u8 mode | a compiled level file.  mode bit 0: load as is (no reseal).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fuzz/fuzz_support.hpp"
#include "world/level/compiled_level.hpp"
#include "world/level/navmesh.hpp"

namespace shiftcast::fuzz {
namespace {

// A few queries against the loaded tree: rays and sweeps across its bounds and a point test at the centre.
void query_tree(const BspTree& tree) {
  const Aabb& b = tree.bounds();
  const Vec3 lo = b.min - Vec3{64, 64, 64};
  const Vec3 hi = b.max + Vec3{64, 64, 64};
  if (!(std::isfinite(lo.x) && std::isfinite(lo.y) && std::isfinite(lo.z) && std::isfinite(hi.x) &&
        std::isfinite(hi.y) && std::isfinite(hi.z))) {
    return;
  }
  const Vec3 centre = (lo + hi) * 0.5f;
  const Vec3 corners[] = {lo, hi, {lo.x, hi.y, lo.z}, {hi.x, lo.y, hi.z}};
  for (const Vec3& from : corners) {
    const Vec3 d = centre - from;
    (void)tree.raycast(from, d, length(d) * 2 + 1);
    (void)tree.trace(Shape::cylinder(15, 56), from, centre);
  }
  (void)tree.point_brush(centre);
  (void)tree.overlap(Shape::box({16, 16, 28}), centre);
}

void query_navmesh(std::vector<std::uint8_t> bytes, const Aabb& bounds) {
  std::string error;
  const std::unique_ptr<NavMesh> mesh = NavMesh::from_data(std::move(bytes), &error);
  if (mesh == nullptr) {
    require(!error.empty(), "NavMesh::from_data: refused without a reason");
    return;
  }
  NavQuery query(*mesh);
  if (!query.ok()) return;
  std::uint32_t rng = 1;
  const auto a = query.random_point(rng);
  const auto b = query.random_point(rng);
  (void)query.nearest_point((bounds.min + bounds.max) * 0.5f);
  if (a && b) {
    std::vector<Vec3> path;
    (void)query.find_path(*a, *b, path);
  }
}

}  // namespace
}  // namespace shiftcast::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace shiftcast;
  using namespace shiftcast::fuzz;
  if (size == 0) return 0;
  std::vector<std::uint8_t> bytes(data + 1, data + size);
  if (!(data[0] & 1)) (void)reseal_compiled_level(bytes);
  LevelLoadResult loaded = load_compiled_level(bytes);
  if (!loaded.ok()) {
    require(!loaded.message.empty(), "load_compiled_level: refused without a message");
    return 0;
  }
  require(loaded.level.tree.check() == BspLoadError::kNone, "load_compiled_level: a tree that fails check()");
  query_tree(loaded.level.tree);
  if (!loaded.level.navmesh.empty())
    query_navmesh(std::move(loaded.level.navmesh), loaded.level.tree.bounds());
  return 0;
}
