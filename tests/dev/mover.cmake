# Development target for one work package; folded into shiftcast_tests when the package lands.
add_executable(dev_mover_tests
  ${PROJECT_SOURCE_DIR}/tests/world/mover_path_test.cpp
  ${PROJECT_SOURCE_DIR}/world/mover_path.cpp
)
target_link_libraries(dev_mover_tests PRIVATE shiftcast_collision GTest::gtest_main)
target_compile_definitions(dev_mover_tests PRIVATE SHIFTCAST_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
