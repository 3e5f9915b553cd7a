// A test level: a 2048-unit square floor, four 256-unit walls and the blocks of the test's choosing, so a
// bot's trajectory runs into something and slides along walls. Shared by the movement-check tests.
//
//   const BspTree tree = walled_room({brush_from_box({200, -100, 0}, {300, 100, 96})});
#pragma once

#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "collision/brush.hpp"
#include "collision/bsp_build.hpp"

namespace shiftcast {

inline BspTree walled_room(const std::vector<Brush>& blocks) {
  std::vector<Brush> brushes = {
      brush_from_box({-1024, -1024, -64}, {1024, 1024, 0}),
      brush_from_box({-1088, -1024, 0}, {-1024, 1024, 256}),
      brush_from_box({1024, -1024, 0}, {1088, 1024, 256}),
      brush_from_box({-1024, -1088, 0}, {1024, -1024, 256}),
      brush_from_box({-1024, 1024, 0}, {1024, 1088, 256}),
  };
  brushes.insert(brushes.end(), blocks.begin(), blocks.end());
  BspBuildResult built = build_bsp(brushes, {});
  EXPECT_EQ(built.error, BspBuildError::kNone);
  return std::move(built.tree);
}

}  // namespace shiftcast
