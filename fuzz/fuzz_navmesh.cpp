// Target: NavMesh::from_data over any bytes (the Detour tile image a compiled level carries, which Detour
// itself trusts completely), then queries on what loads. Promise (world/level/navmesh.hpp): corrupt data
// gives an error, never a crash; a mesh that loads answers nearest-point, path and random-point queries.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fuzz/fuzz_support.hpp"
#include "world/level/navmesh.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace shiftcast;
  std::string error;
  const std::unique_ptr<NavMesh> mesh = NavMesh::from_data({data, data + size}, &error);
  if (mesh == nullptr) {
    fuzz::require(!error.empty(), "NavMesh::from_data: refused without a reason");
    return 0;
  }
  NavQuery query(*mesh);
  if (!query.ok()) return 0;
  std::uint32_t rng = 7;
  const auto a = query.random_point(rng);
  const auto b = query.random_point(rng);
  (void)query.nearest_point({0, 0, 0});
  if (a && b) {
    std::vector<Vec3> path;
    (void)query.find_path(*a, *b, path);
    (void)query.nearest_point(*a, {8, 8, 8});
  }
  return 0;
}
