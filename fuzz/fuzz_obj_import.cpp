// Target: the Wavefront .obj importer over any text, with either up axis. Promise
// (world/level/obj_import.hpp): errors name a line, nothing throws, every kept triangle is one thin brush of
// five finite planes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/level_checks.hpp"
#include "world/level/obj_import.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace shiftcast;
  if (size == 0) return 0;
  ObjImportOptions options;
  options.up_axis = data[0] & 1 ? 'y' : 'z';
  const LevelResult r = import_obj({reinterpret_cast<const char*>(data) + 1, size - 1}, "fuzz.obj", options);
  fuzz::check_level(r);
  if (r.ok()) {
    fuzz::require(std::int32_t(r.level.brushes.size()) <= r.level.source_brushes,
                  "obj import: more brushes than triangles");
    for (const Brush& b : r.level.brushes)
      fuzz::require(b.planes.size() == 5, "obj import: a triangle brush without five planes");
  } else {
    fuzz::require(r.error.is_line, "obj import: an error without a line");
  }
  return 0;
}
