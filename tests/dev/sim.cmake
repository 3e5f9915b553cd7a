# Development target for the lead's simulation package; folded into shiftcast_tests when it lands.
# Enabled once every module the simulation needs is in the world library.
if(EXISTS ${PROJECT_SOURCE_DIR}/tests/dev/sim.enabled)
  add_executable(dev_sim_tests ${PROJECT_SOURCE_DIR}/tests/world/simulation_test.cpp)
  target_link_libraries(dev_sim_tests PRIVATE shiftcast_world GTest::gtest_main)
  target_compile_definitions(dev_sim_tests PRIVATE SHIFTCAST_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
endif()
