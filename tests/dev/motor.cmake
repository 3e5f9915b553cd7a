# Development target for one work package; folded into shiftcast_tests when the package lands.
add_executable(dev_motor_tests
  ${PROJECT_SOURCE_DIR}/tests/world/character_motor_test.cpp
  ${PROJECT_SOURCE_DIR}/world/character_motor.cpp
)
target_link_libraries(dev_motor_tests PRIVATE shiftcast_world shiftcast_test_support GTest::gtest_main)
target_compile_definitions(dev_motor_tests PRIVATE SHIFTCAST_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
