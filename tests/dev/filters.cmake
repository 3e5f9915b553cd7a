# Development target for one work package; folded into shiftcast_tests when the package lands.
add_executable(dev_filters_tests
  ${PROJECT_SOURCE_DIR}/tests/world/filters_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/world/prop_model_test.cpp
  ${PROJECT_SOURCE_DIR}/world/filters.cpp
  ${PROJECT_SOURCE_DIR}/world/prop_model.cpp
  ${PROJECT_SOURCE_DIR}/world/entity.cpp
  ${PROJECT_SOURCE_DIR}/collision/narrow_phase.cpp
)
target_link_libraries(dev_filters_tests PRIVATE shiftcast_collision GTest::gtest_main)
target_compile_definitions(dev_filters_tests PRIVATE SHIFTCAST_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
