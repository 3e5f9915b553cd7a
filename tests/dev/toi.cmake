# Development target for one work package; folded into shiftcast_tests when the package lands.
add_executable(dev_toi_tests
  ${PROJECT_SOURCE_DIR}/tests/collision/time_of_impact_test.cpp
  ${PROJECT_SOURCE_DIR}/collision/time_of_impact.cpp
  ${PROJECT_SOURCE_DIR}/collision/narrow_phase.cpp
)
target_link_libraries(dev_toi_tests PRIVATE shiftcast_collision GTest::gtest_main)
target_compile_definitions(dev_toi_tests PRIVATE SHIFTCAST_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
