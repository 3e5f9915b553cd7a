// The levels the bot driver and match setup tests run on: the arena (configs/levels/arena.map) and a
// cramped procedural level where placement has to refuse spots, each compiled once with its navmesh.
//
//   TEST_F(ArenaTest, X) { BotDriver bot(*navmesh_, ...); ... level_->tree ... procedural_->compiled ... }
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>

#include "world/level/compiled_level.hpp"
#include "world/level/navmesh.hpp"
#include "world/level/procedural_level.hpp"

namespace shiftcast {

inline const std::string kArena = std::string(SHIFTCAST_SOURCE_DIR) + "/configs/levels/arena.map";

struct TestLevel {
  CompiledLevel compiled;
  std::unique_ptr<NavMesh> navmesh;
};

inline TestLevel* compile_test_level(Level level) {
  CompiledLevelResult compiled = compile_level(std::move(level), {}, {});
  EXPECT_TRUE(compiled.ok()) << compiled.message;
  auto out = std::make_unique<TestLevel>();
  out->compiled = std::move(compiled.level);
  std::string error;
  out->navmesh = NavMesh::from_data(out->compiled.navmesh, &error);
  EXPECT_NE(out->navmesh, nullptr) << error;
  return out->navmesh ? out.release() : nullptr;
}

// The arena, and a cramped procedural level (thin walls at any yaw, ramps, wedges, pillars on a quarter
// of the default area) where placement has to refuse spots, compiled once for the in-process tests.
class ArenaTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    LevelResult imported = import_level_file(kArena);
    ASSERT_TRUE(imported.ok()) << imported.error.describe();
    arena_ = compile_test_level(std::move(imported.level));
    ProceduralLevel p = make_procedural_level({.seed = 7, .target_brushes = 240, .half_extent = 1024});
    Level level;
    level.name = "procedural";
    level.brushes = std::move(p.brushes);
    level.brush_contents.assign(level.brushes.size(), kContentsSolid);
    level.brush_surface_flags.assign(level.brushes.size(), 0);
    compute_level_bounds(level);
    procedural_ = compile_test_level(std::move(level));
  }
  static void TearDownTestSuite() {
    delete arena_;
    delete procedural_;
  }
  void SetUp() override {
    ASSERT_NE(arena_, nullptr);
    ASSERT_NE(procedural_, nullptr);
    level_ = &arena_->compiled;
    navmesh_ = arena_->navmesh.get();
  }
  static inline TestLevel* arena_ = nullptr;
  static inline TestLevel* procedural_ = nullptr;
  const CompiledLevel* level_ = nullptr;
  const NavMesh* navmesh_ = nullptr;
};

// The tick rate the tests' matches run at, and the run speed their bots are judged against.
constexpr int kTickRate = 64;
constexpr float kRunSpeed = 320;

}  // namespace shiftcast
