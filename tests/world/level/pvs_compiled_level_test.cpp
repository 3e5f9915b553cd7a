// The potentially visible set in the compiled level file: it round-trips bit for bit with its origin, a
// file without the table loads with no set, and a stored set that from_parts refuses (a child out of
// range, a cycle, short rows, a bad origin) is rejected as LevelLoadError::kBadVisibility with a reason.
#include <gtest/gtest.h>

#include <cstring>

#include "world/level/compiled_level.hpp"
#include "world/level/level_generated.h"
#include "world/level/pvs_grid.hpp"

namespace shiftcast {
namespace {

// A compiled level with an empty tree and a 3 x 2 x 1 grid set whose rows are distinguishable.
CompiledLevel level_with_grid_set() {
  CompiledLevel c;
  c.level.name = "grid";
  GridCuts grid{{{{0, 64, 128, 192}, {0, 64, 128}, {0, 64}}}};
  const std::vector<std::int32_t> cells{0, 1, kNoCluster, 2, 3, 4};
  std::vector<std::uint8_t> bits{0x01, 0x03, 0x07, 0x0f, 0x1f};
  PvsResult r = PotentiallyVisibleSet::from_parts(grid_cluster_tree(grid, cells), 5, 1, bits);
  EXPECT_TRUE(r.ok()) << r.detail;
  c.visibility = std::move(r.set);
  c.visibility_origin = VisibilityOrigin::kComputed;
  c.visibility_cell_size = 64;
  c.visibility_build_ms = 1.5;
  return c;
}

template <class T>
bool same_bytes(std::span<const T> a, std::span<const T> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size_bytes()) == 0;
}

TEST(PvsCompiledLevel, RoundTripsBitForBitWithItsOrigin) {
  const CompiledLevel c = level_with_grid_set();
  const LevelLoadResult loaded = load_compiled_level(serialize_compiled_level(c));
  ASSERT_TRUE(loaded.ok()) << loaded.message;
  const CompiledLevel& back = loaded.level;
  EXPECT_EQ(back.visibility_origin, VisibilityOrigin::kComputed);
  EXPECT_EQ(back.visibility_cell_size, 64);
  EXPECT_EQ(back.visibility_build_ms, 1.5);
  EXPECT_EQ(back.visibility.cluster_count(), 5);
  EXPECT_EQ(back.visibility.bytes_per_cluster(), 1);
  EXPECT_TRUE(same_bytes(c.visibility.nodes(), back.visibility.nodes()));
  EXPECT_TRUE(same_bytes(c.visibility.bits(), back.visibility.bits()));
}

TEST(PvsCompiledLevel, AFileWithoutASetLoadsWithNone) {
  CompiledLevel c;
  c.level.name = "none";
  const std::vector<std::uint8_t> bytes = serialize_compiled_level(c);
  EXPECT_EQ(fb::GetCompiledLevel(bytes.data())->visibility(), nullptr);
  const LevelLoadResult loaded = load_compiled_level(bytes);
  ASSERT_TRUE(loaded.ok()) << loaded.message;
  EXPECT_TRUE(loaded.level.visibility.empty());
  EXPECT_EQ(loaded.level.visibility_origin, VisibilityOrigin::kNone);
}

// Edits the serialized set in place (through the verified buffer's own offsets), reseals, loads.
template <class Edit>
LevelLoadResult load_edited(Edit edit) {
  std::vector<std::uint8_t> bytes = serialize_compiled_level(level_with_grid_set());
  const fb::Visibility* v = fb::GetCompiledLevel(bytes.data())->visibility();
  edit(bytes, *v);
  EXPECT_EQ(reseal_compiled_level(bytes), LevelLoadError::kNone);
  return load_compiled_level(bytes);
}

std::size_t offset_of(const std::vector<std::uint8_t>& bytes, const void* p) {
  return std::size_t(static_cast<const std::uint8_t*>(p) - bytes.data());
}

TEST(PvsCompiledLevel, ACorruptStoredSetIsRejectedWithTheReason) {
  struct Case {
    const char* name;
    std::int32_t child;  // written to nodes[node].front
    std::int32_t node;
    const char* reason;
  };
  for (const Case& k : {Case{"child out of range", 999, 0, "bad child"}, Case{"cycle", 0, 3, "cycle"},
                        Case{"cluster out of range", -9, 8, "bad child"}}) {
    SCOPED_TRACE(k.name);
    const LevelLoadResult r = load_edited([&](std::vector<std::uint8_t>& bytes, const fb::Visibility& v) {
      const std::size_t at = offset_of(bytes, v.nodes()->Get(flatbuffers::uoffset_t(k.node))) + 16;  // front
      std::memcpy(bytes.data() + at, &k.child, sizeof k.child);
    });
    EXPECT_EQ(r.error, LevelLoadError::kBadVisibility);
    EXPECT_NE(r.message.find(k.reason), std::string::npos) << r.message;
  }
  {
    const LevelLoadResult r = load_edited([](std::vector<std::uint8_t>& bytes, const fb::Visibility& v) {
      const float half = 0.5f;  // nodes[2].nx: not unit length
      std::memcpy(bytes.data() + offset_of(bytes, v.nodes()->Get(2)), &half, sizeof half);
    });
    EXPECT_EQ(r.error, LevelLoadError::kBadVisibility);
    EXPECT_NE(r.message.find("bad plane"), std::string::npos) << r.message;
  }
  {
    // Six clusters claimed for five rows.
    const LevelLoadResult r = load_edited([](std::vector<std::uint8_t>& bytes, const fb::Visibility& v) {
      const auto* table = reinterpret_cast<const flatbuffers::Table*>(&v);
      const std::int32_t six = 6;
      std::memcpy(bytes.data() + offset_of(bytes, table->GetAddressOf(fb::Visibility::VT_CLUSTER_COUNT)),
                  &six, sizeof six);
    });
    EXPECT_EQ(r.error, LevelLoadError::kBadVisibility);
    EXPECT_NE(r.message.find("bad bits length"), std::string::npos) << r.message;
  }
  {
    const LevelLoadResult r = load_edited([](std::vector<std::uint8_t>& bytes, const fb::Visibility& v) {
      const auto* table = reinterpret_cast<const flatbuffers::Table*>(&v);
      bytes[offset_of(bytes, table->GetAddressOf(fb::Visibility::VT_ORIGIN))] = 7;
    });
    EXPECT_EQ(r.error, LevelLoadError::kBadVisibility);
    EXPECT_NE(r.message.find("origin"), std::string::npos) << r.message;
  }
}

}  // namespace
}  // namespace shiftcast
