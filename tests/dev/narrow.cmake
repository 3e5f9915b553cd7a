# Development target for one work package; folded into shiftcast_tests when the package lands.
add_executable(dev_narrow_tests
  ${PROJECT_SOURCE_DIR}/tests/collision/narrow_phase_test.cpp
  ${PROJECT_SOURCE_DIR}/collision/narrow_phase.cpp
)
target_link_libraries(dev_narrow_tests PRIVATE shiftcast_collision GTest::gtest_main)
target_compile_definitions(dev_narrow_tests PRIVATE SHIFTCAST_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
