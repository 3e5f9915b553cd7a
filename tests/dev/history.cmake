# Development target for one work package; folded into shiftcast_tests when the package lands.
add_executable(dev_history_tests
  ${PROJECT_SOURCE_DIR}/tests/world/tick_history_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/world/world_query_test.cpp
  ${PROJECT_SOURCE_DIR}/world/tick_history.cpp
  ${PROJECT_SOURCE_DIR}/world/world_query.cpp
  ${PROJECT_SOURCE_DIR}/world/entity.cpp
  ${PROJECT_SOURCE_DIR}/world/prop_model.cpp
  ${PROJECT_SOURCE_DIR}/collision/narrow_phase.cpp
  ${PROJECT_SOURCE_DIR}/collision/time_of_impact.cpp
  ${PROJECT_SOURCE_DIR}/collision/round_toi.cpp
)
target_link_libraries(dev_history_tests PRIVATE shiftcast_collision GTest::gtest_main)
target_compile_definitions(dev_history_tests PRIVATE SHIFTCAST_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
