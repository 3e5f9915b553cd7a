# Development target for one work package; folded into shiftcast_tests when the package lands.
add_executable(dev_grid_tests
  ${PROJECT_SOURCE_DIR}/tests/world/grid_test.cpp
  ${PROJECT_SOURCE_DIR}/world/grid.cpp
  ${PROJECT_SOURCE_DIR}/world/entity.cpp
)
target_link_libraries(dev_grid_tests PRIVATE shiftcast_collision GTest::gtest_main)
target_compile_definitions(dev_grid_tests PRIVATE SHIFTCAST_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
