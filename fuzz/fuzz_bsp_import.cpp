// Target: the Quake III .bsp importer (IBSP 46) over any bytes. Promise (world/level/q3_bsp_import.hpp):
// every range, count and index is checked, failures are LevelErrors, nothing throws or reads out of bounds,
// and every world brush is accounted for exactly once.
#include <cstddef>
#include <cstdint>

#include "fuzz/level_checks.hpp"
#include "world/level/q3_bsp_import.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace shiftcast;
  // A bound on patch subdivision keeps one input's work small; the default options otherwise.
  Q3ImportOptions options;
  options.patch_max_subdivision = 8;
  Q3ImportStats stats;
  const LevelResult r = import_q3_bsp({data, size}, "fuzz.bsp", options, &stats);
  fuzz::check_level(r);
  if (r.ok()) {
    fuzz::require(r.level.source_brushes == std::int32_t(r.level.brushes.size()) - r.level.patch_brushes +
                                                r.level.skipped_nonsolid + stats.degenerate_brushes,
                  "bsp import: world brushes not accounted for exactly once");
  }
  return 0;
}
