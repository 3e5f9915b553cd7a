#include "world/level/compiled_level.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "world/level/level_generated.h"
#include "world/level/map_import.hpp"
#include "world/level/pvs_compute.hpp"
#include "world/level/pvs_conservative.hpp"
#include "world/level/q3_bsp_import.hpp"

namespace shiftcast {
namespace {

namespace fbs = shiftcast::fb;

// The deepest table nesting the schema has is 2 (root → spawn point or statistics); the headroom lets
// later versions nest a little more while a hostile buffer still cannot make the verifier recurse far.
constexpr flatbuffers::uoffset_t kVerifierMaxDepth = 8;
// Tables are the root, three statistics tables and one per spawn point; no real level has anywhere near
// 65,000 spawn points, and the cap bounds the verifier's work on a buffer made of tiny tables.
constexpr flatbuffers::uoffset_t kVerifierMaxTables = 1 << 16;
// FlatBuffers reads scalars in place, so the buffer must be aligned like its largest scalar (uint64,
// double); an unaligned caller's span is copied first.
constexpr std::size_t kBufferAlignment = 8;
// Written in the checksum field before the real checksum is known; any non-zero value works (a zero
// would equal the field's default, and FlatBuffers would leave the field out).
constexpr std::uint64_t kChecksumPlaceholder = ~std::uint64_t{0};

constexpr std::uint64_t kFnvOffsetBasis = 0xcbf29ce484222325ull;
constexpr std::uint64_t kFnvPrime = 0x100000001b3ull;

// FNV-1a over little-endian 64-bit words, eight times faster than over bytes, which keeps it a small
// part of a load. A changed word always changes the result (each step is a bijection of the state), so
// every single-byte corruption is caught. The word at `skip_offset` (the checksum field) counts as zero.
std::uint64_t buffer_checksum(std::span<const std::uint8_t> bytes, std::size_t skip_offset) {
  std::uint64_t h = kFnvOffsetBasis;
  for (std::size_t i = 0; i < bytes.size(); i += 8) {
    std::uint64_t word = 0;
    const std::size_t n = std::min<std::size_t>(8, bytes.size() - i);
    for (std::size_t k = 0; k < n; ++k)
      word |= std::uint64_t(bytes[i + k]) << (8 * k);
    if (i == skip_offset) word = 0;
    h = (h ^ word) * kFnvPrime;
  }
  return (h ^ bytes.size()) * kFnvPrime;
}

fbs::Vec3 to_fb(Vec3 v) {
  return {v.x, v.y, v.z};
}
fbs::Plane to_fb(const Plane& p) {
  return {p.normal.x, p.normal.y, p.normal.z, p.d};
}
fbs::Bounds to_fb(const Aabb& b) {
  return {to_fb(b.min), to_fb(b.max)};
}
Vec3 from_fb(const fbs::Vec3& v) {
  return {v.x(), v.y(), v.z()};
}
Plane from_fb(const fbs::Plane& p) {
  return {{p.nx(), p.ny(), p.nz()}, p.d()};
}
// An absent bounds struct reads as the empty box, like a level without brushes.
Aabb from_fb(const fbs::Bounds* b) {
  if (b == nullptr) return {};
  return {from_fb(b->min()), from_fb(b->max())};
}

std::vector<Plane> planes_from_fb(const flatbuffers::Vector<const fbs::Plane*>& planes) {
  std::vector<Plane> out;
  out.reserve(planes.size());
  for (const fbs::Plane* p : planes)
    out.push_back(from_fb(*p));
  return out;
}

LevelLoadResult load_failure(LevelLoadError error, std::string message) {
  LevelLoadResult r;
  r.error = error;
  r.message = std::move(message);
  return r;
}

// Copies a verified buffer into the in-memory structures. Everything read here was range-checked by the
// verifier; cross-references between arrays are checked afterwards.
CompiledLevel copy_out(const fbs::CompiledLevel& root) {
  CompiledLevel out;
  Level& level = out.level;
  level.name = root.source_name()->str();
  level.source_hash = root.source_hash();
  const auto& planes = *root.planes();
  const auto& brushes = *root.brushes();
  level.brushes.resize(brushes.size());
  level.brush_contents.reserve(brushes.size());
  level.brush_surface_flags.reserve(brushes.size());
  for (flatbuffers::uoffset_t i = 0; i < brushes.size(); ++i) {
    const fbs::BrushRecord& record = *brushes.Get(i);
    // Ranges are checked by check_brush_ranges() before this runs.
    std::vector<Plane>& brush_planes = level.brushes[i].planes;
    brush_planes.reserve(record.plane_count());
    for (std::uint32_t k = 0; k < record.plane_count(); ++k) {
      brush_planes.push_back(from_fb(*planes.Get(record.first_plane() + k)));
    }
    level.brush_contents.push_back(record.contents());
    level.brush_surface_flags.push_back(record.surface_flags());
  }
  if (const auto* spawns = root.spawns()) {
    for (const fbs::SpawnPoint* s : *spawns) {
      SpawnPoint spawn;
      if (s->origin() != nullptr) spawn.origin = from_fb(*s->origin());
      spawn.yaw_degrees = s->yaw_degrees();
      if (s->classname() != nullptr) spawn.classname = s->classname()->str();
      level.spawns.push_back(std::move(spawn));
    }
  }
  level.bounds = from_fb(root.bounds());
  if (const fbs::ImportStats* s = root.import_stats()) {
    level.source_brushes = s->source_brushes();
    level.skipped_nonsolid = s->skipped_nonsolid();
    level.patches = s->patches();
    level.patch_brushes = s->patch_brushes();
  }

  std::vector<BspNode> nodes;
  nodes.reserve(root.nodes()->size());
  for (const fbs::Node* n : *root.nodes())
    nodes.push_back({from_fb(n->plane()), {n->back(), n->front()}});
  std::vector<BspLeaf> leaves;
  leaves.reserve(root.leaves()->size());
  for (const fbs::SolidLeaf* l : *root.leaves())
    leaves.push_back({l->brush(), l->first_bevel(), l->bevel_count()});
  // check_brush_ranges() has made sure the tree names exactly the stored brushes.
  out.tree = BspTree(std::move(nodes), std::move(leaves), planes_from_fb(*root.bevels()), root.root(),
                     level.brushes, from_fb(root.tree_bounds()));

  if (const fbs::BspStats* s = root.bsp_stats()) {
    out.bsp_stats = {.brushes = s->brushes(),
                     .brushes_empty = s->brushes_empty(),
                     .brush_splits = s->brush_splits(),
                     .nodes = s->nodes(),
                     .bevel_planes = s->bevel_planes(),
                     .solid_leaves = s->solid_leaves(),
                     .empty_leaves = s->empty_leaves(),
                     .max_depth = s->max_depth(),
                     .build_ms = s->build_ms()};
  }
  if (const auto* navmesh = root.navmesh()) out.navmesh.assign(navmesh->begin(), navmesh->end());
  if (const fbs::NavmeshStats* s = root.navmesh_stats()) {
    out.navmesh_polygons = s->polygons();
    out.navmesh_build_ms = s->build_ms();
  }
  return out;
}

// The stored set through from_parts (untrusted until it passes); an absent table is no set. Returns the
// reason when refused.
std::string copy_out_visibility(const fbs::CompiledLevel& root, CompiledLevel& out) {
  const fbs::Visibility* v = root.visibility();
  if (v == nullptr) return {};
  if (v->origin() > std::uint8_t(VisibilityOrigin::kComputed))
    return "potentially visible set: unknown origin " + std::to_string(v->origin());
  std::vector<PvsNode> nodes;
  if (const auto* stored = v->nodes()) {
    nodes.reserve(stored->size());
    for (const fbs::PvsNode* n : *stored)
      nodes.push_back({{n->nx(), n->ny(), n->nz()}, n->distance(), {n->front(), n->back()}});
  }
  std::vector<std::uint8_t> bits;
  if (const auto* stored = v->bits()) bits.assign(stored->begin(), stored->end());
  PvsResult set = PotentiallyVisibleSet::from_parts(std::move(nodes), v->cluster_count(),
                                                    v->bytes_per_cluster(), std::move(bits));
  if (!set.ok()) return std::string("potentially visible set: ") + to_string(set.error) + ": " + set.detail;
  out.visibility = std::move(set.set);
  out.visibility_origin = out.visibility.empty() ? VisibilityOrigin::kNone : VisibilityOrigin(v->origin());
  out.visibility_cell_size = v->cell_size();
  out.visibility_build_ms = v->build_ms();
  return {};
}

// Bounds go to the tree (its start-cell grids are sized from them) and to the level's users: finite, and
// either empty (a level without brushes) or inside +-kWorldExtent like every brush an importer accepts.
// Found by fuzz/fuzz_compiled_level: tree bounds of 6e20 overflowed the grid size (float to int).
bool bounds_in_world(const Aabb& b) {
  for (int axis = 0; axis < 3; ++axis) {
    if (!std::isfinite(b.min[axis]) || !std::isfinite(b.max[axis])) return false;
  }
  if (b.empty()) return true;
  for (int axis = 0; axis < 3; ++axis) {
    if (std::abs(double(b.min[axis])) > kWorldExtent || std::abs(double(b.max[axis])) > kWorldExtent)
      return false;
  }
  return true;
}

// Brush plane runs must lie inside the plane array and the tree must name exactly the stored brushes.
std::string check_brush_ranges(const fbs::CompiledLevel& root) {
  const std::uint64_t plane_count = root.planes()->size();
  const auto& brushes = *root.brushes();
  for (flatbuffers::uoffset_t i = 0; i < brushes.size(); ++i) {
    const fbs::BrushRecord& r = *brushes.Get(i);
    if (std::uint64_t(r.first_plane()) + r.plane_count() > plane_count) {
      return "brush " + std::to_string(i) + " has planes [" + std::to_string(r.first_plane()) + ", +" +
             std::to_string(r.plane_count()) + ") outside the " + std::to_string(plane_count) +
             " stored planes";
    }
  }
  if (root.brush_count() < 0 || std::uint64_t(root.brush_count()) != brushes.size()) {
    return "the tree names " + std::to_string(root.brush_count()) + " brushes but the level stores " +
           std::to_string(brushes.size());
  }
  return {};
}

// The checks every reader of the buffer needs before it may touch a field: size, identifier, version,
// the verifier. Returns the verified root, or null with `failure` filled in.
const fbs::CompiledLevel* verified_root(std::span<const std::uint8_t> bytes, LevelLoadResult& failure) {
  const std::uint8_t* data = bytes.data();
  const std::size_t size = bytes.size();
  if (size >= FLATBUFFERS_MAX_BUFFER_SIZE) {
    failure = load_failure(LevelLoadError::kTooLarge,
                           std::to_string(size) + " bytes is beyond a FlatBuffer's 2 GiB");
    return nullptr;
  }
  if (size < 2 * sizeof(flatbuffers::uoffset_t)) {
    failure = load_failure(LevelLoadError::kTooSmall,
                           std::to_string(size) + " bytes is shorter than a FlatBuffer header (8 bytes)");
    return nullptr;
  }
  if (!fbs::CompiledLevelBufferHasIdentifier(data)) {
    std::string found;
    for (std::size_t i = 4; i < 8; ++i) {
      char escaped[8];
      if (std::isprint(data[i])) {
        std::snprintf(escaped, sizeof escaped, "%c", data[i]);
      } else {
        std::snprintf(escaped, sizeof escaped, "\\x%02x", data[i]);
      }
      found += escaped;
    }
    failure =
        load_failure(LevelLoadError::kBadIdentifier, "file identifier is \"" + found + "\", expected \"" +
                                                         fbs::CompiledLevelIdentifier() + "\"");
    return nullptr;
  }

  flatbuffers::Verifier::Options options;
  options.max_depth = kVerifierMaxDepth;
  options.max_tables = kVerifierMaxTables;

  // The version is read before the full verification so that a file of another version is reported as
  // such even when the rest of its layout no longer verifies against this schema. Only the root offset,
  // the root table's vtable and the version field itself are checked for this.
  {
    flatbuffers::Verifier probe(data, size, options);
    const flatbuffers::uoffset_t root_offset = probe.VerifyOffset(0);
    const auto* table = reinterpret_cast<const flatbuffers::Table*>(data + root_offset);
    if (root_offset == 0 || !table->VerifyTableStart(probe) ||
        !table->VerifyField<std::uint32_t>(probe, fbs::CompiledLevel::VT_FORMAT_VERSION,
                                           sizeof(std::uint32_t))) {
      failure = load_failure(LevelLoadError::kVerifyFailed,
                             "the root table or its version field is outside the buffer");
      return nullptr;
    }
    const auto version = table->GetField<std::uint32_t>(fbs::CompiledLevel::VT_FORMAT_VERSION, 0);
    if (version != kCompiledLevelVersion) {
      failure = load_failure(LevelLoadError::kWrongVersion, "format version " + std::to_string(version) +
                                                                ", this build reads version " +
                                                                std::to_string(kCompiledLevelVersion));
      return nullptr;
    }
  }

  flatbuffers::Verifier verifier(data, size, options);
  if (!fbs::VerifyCompiledLevelBuffer(verifier)) {
    failure =
        load_failure(LevelLoadError::kVerifyFailed,
                     "the FlatBuffers verifier rejected the buffer (an offset, size or alignment is out of "
                     "range, or a required vector is missing)");
    return nullptr;
  }
  return fbs::GetCompiledLevel(data);
}

// Where the checksum field is in a verified buffer (null when absent).
const std::uint8_t* checksum_field(const fbs::CompiledLevel& root) {
  return reinterpret_cast<const flatbuffers::Table*>(&root)->GetAddressOf(fbs::CompiledLevel::VT_CHECKSUM);
}

LevelLoadResult load_aligned(std::span<const std::uint8_t> bytes) {
  LevelLoadResult failure;
  const fbs::CompiledLevel* verified = verified_root(bytes, failure);
  if (verified == nullptr) return failure;
  const fbs::CompiledLevel& root = *verified;
  const std::uint8_t* data = bytes.data();

  const std::uint8_t* field = checksum_field(root);
  if (field == nullptr) return load_failure(LevelLoadError::kBadChecksum, "the checksum field is missing");
  const std::uint64_t expected = buffer_checksum(bytes, std::size_t(field - data));
  if (root.checksum() != expected) {
    char line[128];
    std::snprintf(line, sizeof line, "checksum %016llx, the bytes hash to %016llx",
                  static_cast<unsigned long long>(root.checksum()),
                  static_cast<unsigned long long>(expected));
    return load_failure(LevelLoadError::kBadChecksum, line);
  }

  if (std::string why = check_brush_ranges(root); !why.empty()) {
    return load_failure(LevelLoadError::kBadLevel, std::move(why));
  }
  if (!bounds_in_world(from_fb(root.bounds()))) {
    return load_failure(LevelLoadError::kBadLevel,
                        "level bounds are not finite or lie beyond the world extent");
  }
  if (!bounds_in_world(from_fb(root.tree_bounds()))) {
    return load_failure(LevelLoadError::kBadTree,
                        "BSP tree: bounds are not finite or lie beyond the world extent");
  }
  LevelLoadResult result;
  result.level = copy_out(root);
  if (const BspLoadError e = result.level.tree.check(); e != BspLoadError::kNone) {
    return load_failure(LevelLoadError::kBadTree, std::string("BSP tree: ") + to_string(e));
  }
  if (std::string why = copy_out_visibility(root, result.level); !why.empty())
    return load_failure(LevelLoadError::kBadVisibility, std::move(why));
  return result;
}

std::string lowercase_extension(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return ext;
}

}  // namespace

const char* to_string(LevelLoadError error) {
  switch (error) {
    case LevelLoadError::kNone:
      return "none";
    case LevelLoadError::kIo:
      return "io";
    case LevelLoadError::kTooSmall:
      return "too small";
    case LevelLoadError::kTooLarge:
      return "too large";
    case LevelLoadError::kBadIdentifier:
      return "bad identifier";
    case LevelLoadError::kWrongVersion:
      return "wrong version";
    case LevelLoadError::kVerifyFailed:
      return "verify failed";
    case LevelLoadError::kBadChecksum:
      return "bad checksum";
    case LevelLoadError::kBadLevel:
      return "bad level";
    case LevelLoadError::kBadTree:
      return "bad tree";
    case LevelLoadError::kBadVisibility:
      return "bad visibility";
  }
  return "unknown";
}

std::string describe_visibility(const CompiledLevel& compiled) {
  const PotentiallyVisibleSet& set = compiled.visibility;
  if (set.empty()) return "none (distance alone decides)";
  char line[256];
  std::snprintf(line, sizeof line,
                "%s: %d clusters, %d bytes a row, %zu nodes; %.1f%% of cluster pairs visible",
                to_string(compiled.visibility_origin), set.cluster_count(), set.bytes_per_cluster(),
                set.nodes().size(), 100.0 * set.visible_pair_share());
  std::string out = line;
  if (compiled.visibility_origin == VisibilityOrigin::kComputed) {
    std::snprintf(line, sizeof line, "; %.0f-unit cells", double(compiled.visibility_cell_size));
    out += line;
  }
  std::snprintf(line, sizeof line, "; %.1f ms at compile time", compiled.visibility_build_ms);
  return out + line;
}

const char* to_string(VisibilityOrigin origin) {
  switch (origin) {
    case VisibilityOrigin::kNone:
      return "none";
    case VisibilityOrigin::kImported:
      return "imported";
    case VisibilityOrigin::kComputed:
      return "computed";
  }
  return "unknown";
}

std::vector<std::uint8_t> serialize_compiled_level(const CompiledLevel& compiled) {
  const Level& level = compiled.level;
  const BspTree& tree = compiled.tree;

  std::vector<fbs::BrushRecord> brushes;
  std::vector<fbs::Plane> planes;
  brushes.reserve(level.brushes.size());
  for (std::size_t i = 0; i < level.brushes.size(); ++i) {
    const std::vector<Plane>& brush_planes = level.brushes[i].planes;
    // Level keeps the flag arrays parallel to the brushes; a shorter array reads as "no flags".
    const std::uint32_t contents = i < level.brush_contents.size() ? level.brush_contents[i] : 0;
    const std::uint32_t surface = i < level.brush_surface_flags.size() ? level.brush_surface_flags[i] : 0;
    brushes.emplace_back(std::uint32_t(planes.size()), std::uint32_t(brush_planes.size()), contents, surface);
    for (const Plane& p : brush_planes)
      planes.push_back(to_fb(p));
  }
  std::vector<fbs::Node> nodes;
  nodes.reserve(tree.nodes().size());
  for (const BspNode& n : tree.nodes())
    nodes.emplace_back(to_fb(n.plane), n.child[0], n.child[1]);
  std::vector<fbs::SolidLeaf> leaves;
  leaves.reserve(tree.leaves().size());
  for (const BspLeaf& l : tree.leaves())
    leaves.emplace_back(l.brush, l.first_bevel, l.bevel_count);
  std::vector<fbs::Plane> bevels;
  bevels.reserve(tree.bevels().size());
  for (const Plane& p : tree.bevels())
    bevels.push_back(to_fb(p));

  const std::size_t estimate =
      1024 + planes.size() * sizeof(fbs::Plane) + brushes.size() * sizeof(fbs::BrushRecord) +
      nodes.size() * sizeof(fbs::Node) + leaves.size() * sizeof(fbs::SolidLeaf) +
      bevels.size() * sizeof(fbs::Plane) + compiled.navmesh.size() + level.spawns.size() * 64 +
      compiled.visibility.nodes().size() * sizeof(fbs::PvsNode) + compiled.visibility.bits().size();
  flatbuffers::FlatBufferBuilder fbb(estimate);
  const auto name_offset = fbb.CreateString(level.name);
  const auto brushes_offset = fbb.CreateVectorOfStructs(brushes);
  const auto planes_offset = fbb.CreateVectorOfStructs(planes);
  std::vector<flatbuffers::Offset<fbs::SpawnPoint>> spawn_offsets;
  for (const SpawnPoint& s : level.spawns) {
    const fbs::Vec3 origin = to_fb(s.origin);
    spawn_offsets.push_back(fbs::CreateSpawnPointDirect(fbb, &origin, s.yaw_degrees, s.classname.c_str()));
  }
  const auto spawns_offset = fbb.CreateVector(spawn_offsets);
  const auto nodes_offset = fbb.CreateVectorOfStructs(nodes);
  const auto leaves_offset = fbb.CreateVectorOfStructs(leaves);
  const auto bevels_offset = fbb.CreateVectorOfStructs(bevels);
  const auto navmesh_offset = fbb.CreateVector(compiled.navmesh);
  const auto import_offset = fbs::CreateImportStats(fbb, level.source_brushes, level.skipped_nonsolid,
                                                    level.patches, level.patch_brushes);
  const BspBuildStats& s = compiled.bsp_stats;
  const auto bsp_offset =
      fbs::CreateBspStats(fbb, s.brushes, s.brushes_empty, s.brush_splits, s.nodes, s.bevel_planes,
                          s.solid_leaves, s.empty_leaves, s.max_depth, s.build_ms);
  const auto navmesh_stats_offset =
      fbs::CreateNavmeshStats(fbb, compiled.navmesh_polygons, compiled.navmesh_build_ms);
  const fbs::Bounds bounds = to_fb(level.bounds);
  const fbs::Bounds tree_bounds = to_fb(tree.bounds());
  flatbuffers::Offset<fbs::Visibility> visibility_offset;
  if (!compiled.visibility.empty()) {
    std::vector<fbs::PvsNode> pvs_nodes;
    pvs_nodes.reserve(compiled.visibility.nodes().size());
    for (const PvsNode& n : compiled.visibility.nodes())
      pvs_nodes.emplace_back(n.normal.x, n.normal.y, n.normal.z, n.distance, n.children[0], n.children[1]);
    const auto nodes_vector = fbb.CreateVectorOfStructs(pvs_nodes);
    const auto bits_vector =
        fbb.CreateVector(compiled.visibility.bits().data(), compiled.visibility.bits().size());
    visibility_offset = fbs::CreateVisibility(
        fbb, std::uint8_t(compiled.visibility_origin), compiled.visibility.cluster_count(),
        compiled.visibility.bytes_per_cluster(), nodes_vector, bits_vector, compiled.visibility_cell_size,
        compiled.visibility_build_ms);
  }

  fbs::CompiledLevelBuilder root(fbb);
  root.add_format_version(kCompiledLevelVersion);
  root.add_checksum(kChecksumPlaceholder);
  root.add_source_name(name_offset);
  root.add_source_hash(level.source_hash);
  root.add_brushes(brushes_offset);
  root.add_planes(planes_offset);
  root.add_bounds(&bounds);
  root.add_spawns(spawns_offset);
  root.add_nodes(nodes_offset);
  root.add_leaves(leaves_offset);
  root.add_bevels(bevels_offset);
  root.add_root(tree.root());
  root.add_brush_count(tree.brush_count());
  root.add_tree_bounds(&tree_bounds);
  root.add_navmesh(navmesh_offset);
  root.add_import_stats(import_offset);
  root.add_bsp_stats(bsp_offset);
  root.add_navmesh_stats(navmesh_stats_offset);
  if (!visibility_offset.IsNull()) root.add_visibility(visibility_offset);
  fbs::FinishCompiledLevelBuffer(fbb, root.Finish());

  std::vector<std::uint8_t> out(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  std::uint8_t* field = flatbuffers::GetMutableRoot<flatbuffers::Table>(out.data())
                            ->GetAddressOf(fbs::CompiledLevel::VT_CHECKSUM);
  const std::uint64_t checksum = buffer_checksum(out, std::size_t(field - out.data()));
  flatbuffers::WriteScalar(field, checksum);
  return out;
}

LevelLoadResult load_compiled_level(std::span<const std::uint8_t> bytes) {
  if (reinterpret_cast<std::uintptr_t>(bytes.data()) % kBufferAlignment != 0) {
    const std::vector<std::uint8_t> aligned(bytes.begin(), bytes.end());
    return load_aligned(aligned);
  }
  return load_aligned(bytes);
}

LevelLoadError reseal_compiled_level(std::span<std::uint8_t> bytes) {
  if (reinterpret_cast<std::uintptr_t>(bytes.data()) % kBufferAlignment != 0)
    return LevelLoadError::kVerifyFailed;
  LevelLoadResult failure;
  const fbs::CompiledLevel* root = verified_root(bytes, failure);
  if (root == nullptr) return failure.error;
  const std::uint8_t* field = checksum_field(*root);
  if (field == nullptr) return LevelLoadError::kBadChecksum;
  const std::size_t offset = std::size_t(field - bytes.data());
  flatbuffers::WriteScalar(bytes.data() + offset, buffer_checksum(bytes, offset));
  return LevelLoadError::kNone;
}

LevelLoadResult load_compiled_level_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return load_failure(LevelLoadError::kIo, path + ": cannot open: " + std::strerror(errno));
  const std::streamoff size = in.tellg();
  if (size < 0) return load_failure(LevelLoadError::kIo, path + ": cannot determine the file size");
  if (std::uint64_t(size) >= FLATBUFFERS_MAX_BUFFER_SIZE) {
    return load_failure(LevelLoadError::kTooLarge,
                        path + ": " + std::to_string(size) + " bytes is beyond a FlatBuffer's 2 GiB");
  }
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(size));
  in.seekg(0);
  if (!in.read(reinterpret_cast<char*>(bytes.data()), size)) {
    return load_failure(LevelLoadError::kIo, path + ": read failed after " + std::to_string(in.gcount()) +
                                                 " of " + std::to_string(size) + " bytes");
  }
  LevelLoadResult result = load_compiled_level(bytes);
  if (!result.ok()) result.message = path + ": " + result.message;
  return result;
}

CompiledLevelResult compile_level(Level level, const BspBuildOptions& bsp_options,
                                  const NavmeshSettings& navmesh_settings, const CompileProgress& progress,
                                  const PvsComputeSettings& visibility) {
  CompiledLevelResult result;
  if (progress) progress("building BSP");
  BspBuildResult built = build_bsp(level.brushes, bsp_options);
  if (built.error != BspBuildError::kNone) {
    result.error = CompileError::kBsp;
    result.message = level.name + ": BSP build failed at brush " + std::to_string(built.error_brush) + ": " +
                     to_string(built.error);
    return result;
  }
  if (progress) progress("building navmesh");
  NavmeshBuild navmesh = build_navmesh(level, navmesh_settings);
  if (!navmesh.ok()) {
    result.error = CompileError::kNavmesh;
    result.message = level.name + ": navmesh build failed: " + navmesh.error;
    return result;
  }
  if (!level.imported_visibility.empty()) {
    // Quake III's set, widened where its opaque leaves are open space for the collision set
    // (world/level/pvs_conservative.hpp).
    if (progress) progress("widening the imported visibility");
    const auto start = std::chrono::steady_clock::now();
    result.level.visibility =
        widen_through_open_opaque_space(level.imported_visibility, built.tree, level.bounds, {});
    result.level.visibility_build_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    result.level.visibility_origin = VisibilityOrigin::kImported;
    level.imported_visibility = {};
  } else if (visibility.enabled) {
    if (progress) progress("computing visibility");
    PvsComputeResult computed = compute_grid_pvs(built.tree, level.bounds, visibility);
    if (!computed.set.empty()) {
      result.level.visibility = std::move(computed.set);
      result.level.visibility_origin = VisibilityOrigin::kComputed;
      result.level.visibility_cell_size = computed.cell_size;
      result.level.visibility_build_ms = computed.build_ms;
    }
  }
  result.level.level = std::move(level);
  result.level.tree = std::move(built.tree);
  result.level.bsp_stats = built.stats;
  result.level.navmesh = std::move(navmesh.data);
  result.level.navmesh_polygons = navmesh.polygons;
  result.level.navmesh_build_ms = navmesh.build_ms;
  return result;
}

LevelResult import_level_file(const std::string& path, const ObjImportOptions& obj_options) {
  const std::string ext = lowercase_extension(path);
  if (ext == ".bsp") return import_q3_bsp_file(path);
  if (ext == ".map") return import_map_file(path);
  if (ext == ".obj") return import_obj_file(path, obj_options);
  return level_failure(path, 0, false,
                       "unknown level source extension \"" + ext + "\" (expected .bsp, .map or .obj)");
}

LevelFileResult load_level_file(const std::string& path, const CompileProgress& progress) {
  LevelFileResult result;
  if (lowercase_extension(path) == ".level") {
    LevelLoadResult loaded = load_compiled_level_file(path);
    if (!loaded.ok()) {
      result.error = path + ": " + to_string(loaded.error) + ": " + loaded.message;
      return result;
    }
    result.level = std::move(loaded.level);
    return result;
  }
  LevelResult imported = import_level_file(path);
  if (!imported.ok()) {
    result.error = imported.error.describe();
    return result;
  }
  CompiledLevelResult compiled = compile_level(std::move(imported.level), {}, {}, progress);
  if (!compiled.ok()) {
    result.error = path + ": " + compiled.message;
    return result;
  }
  result.level = std::move(compiled.level);
  return result;
}

}  // namespace shiftcast
