# Development targets for the "simulate" work package (bots, match scenes, `shiftcast-level simulate`, the
# match benchmark); folded into shiftcast_tests and the benchmarks when the package lands. They need the
# Simulation in shiftcast_world, so they appear only once world/CMakeLists.txt builds it; the package's own
# sources are compiled here for as long as world/CMakeLists.txt does not build them.
file(READ ${PROJECT_SOURCE_DIR}/world/CMakeLists.txt shiftcast_simulate_world_lists)
if(shiftcast_simulate_world_lists MATCHES "simulation\\.cpp")
  set(shiftcast_simulate_sources)
  if(NOT shiftcast_simulate_world_lists MATCHES "match_scene\\.cpp")
    set(shiftcast_simulate_sources ${PROJECT_SOURCE_DIR}/world/bot_driver.cpp
                                   ${PROJECT_SOURCE_DIR}/world/match_scene.cpp)
  endif()
  # The end-to-end tests run shiftcast-level once it has the simulate command, else a copy that has it.
  set(shiftcast_simulate_tool shiftcast-level)
  if(NOT shiftcast_simulate_world_lists MATCHES "simulate_command\\.cpp")
    set(shiftcast_simulate_tool dev_simulate_level_tool)
    add_executable(dev_simulate_level_tool ${PROJECT_SOURCE_DIR}/world/level_tool.cpp
                                           ${PROJECT_SOURCE_DIR}/world/simulate_command.cpp ${shiftcast_simulate_sources})
    target_link_libraries(dev_simulate_level_tool PRIVATE shiftcast_world)
  endif()

  add_executable(dev_simulate_tests
    ${PROJECT_SOURCE_DIR}/tests/world/simulate_command_test.cpp
    ${shiftcast_simulate_sources}
  )
  target_link_libraries(dev_simulate_tests PRIVATE shiftcast_world shiftcast_test_support GTest::gtest_main)
  target_compile_definitions(dev_simulate_tests PRIVATE
    SHIFTCAST_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    SHIFTCAST_LEVEL_TOOL="$<TARGET_FILE:${shiftcast_simulate_tool}>")
  add_dependencies(dev_simulate_tests ${shiftcast_simulate_tool})

  add_executable(dev_match_bench ${PROJECT_SOURCE_DIR}/bench/match_bench.cpp ${shiftcast_simulate_sources})
  target_link_libraries(dev_match_bench PRIVATE shiftcast_world benchmark::benchmark)
  target_compile_definitions(dev_match_bench PRIVATE SHIFTCAST_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
endif()
