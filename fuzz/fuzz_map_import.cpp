// Target: the .map importer (Quake, Quake III, Valve 220 and brush-primitive faces) over any text.
// Promise (world/level/map_import.hpp): malformed text never throws, every error names a line, and every
// parsed brush is accounted for: source_brushes = kept + nonsolid + entity brushes + brushDef3.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/level_checks.hpp"
#include "world/level/map_import.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace shiftcast;
  MapImportStats stats;
  const LevelResult r = import_map({reinterpret_cast<const char*>(data), size}, "fuzz.map", &stats);
  fuzz::check_level(r);
  if (r.ok()) {
    fuzz::require(r.level.source_brushes == std::int32_t(r.level.brushes.size()) + r.level.skipped_nonsolid +
                                                stats.skipped_entity_brushes + stats.skipped_brushdef3,
                  "map import: brushes not accounted for exactly once");
  } else {
    fuzz::require(r.error.is_line, "map import: an error without a line");
  }
  return 0;
}
