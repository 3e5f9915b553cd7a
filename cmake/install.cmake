# install() rules and the exported CMake package: a game links the collision core and the protocol alone.
#
#   cmake --install build --prefix P
#   # the game's CMakeLists.txt, with CMAKE_PREFIX_PATH=P:
#   find_package(shiftcast 0.1 REQUIRED)
#   target_link_libraries(game PRIVATE shiftcast::collision shiftcast::protocol)
#
# Headers keep their in-tree spelling ("collision/vec3.hpp", "protocol/packet.hpp"); the header flatc
# generates from protocol/shiftcast.fbs is installed beside them as "protocol/shiftcast_generated.h", the
# spelling the protocol headers include it by (in the build it lives under build/generated/protocol/). The PackageConsumer
# test (tests/package/) installs into the build tree, builds a consumer against it and runs it.

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(SHIFTCAST_PACKAGE_TARGETS shiftcast_collision shiftcast_protocol)
set_target_properties(shiftcast_collision PROPERTIES EXPORT_NAME collision)
set_target_properties(shiftcast_protocol PROPERTIES EXPORT_NAME protocol)
foreach(target ${SHIFTCAST_PACKAGE_TARGETS})
  target_include_directories(${target} INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
endforeach()
# Static libraries name their private link dependencies in the export, so the flags target travels too
# (empty once installed: its flags are BUILD_INTERFACE only, cmake/build_flags.cmake).
set_target_properties(shiftcast_build_flags PROPERTIES EXPORT_NAME build_flags)

install(TARGETS ${SHIFTCAST_PACKAGE_TARGETS} shiftcast_build_flags
        EXPORT shiftcastTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/collision/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/collision
        FILES_MATCHING PATTERN "*.hpp")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/protocol/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/protocol
        FILES_MATCHING PATTERN "*.hpp")
install(FILES ${PROJECT_BINARY_DIR}/generated/protocol/protocol/shiftcast_generated.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/protocol)

set(SHIFTCAST_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/shiftcast)
install(EXPORT shiftcastTargets NAMESPACE shiftcast:: DESTINATION ${SHIFTCAST_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/shiftcastConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/shiftcastConfig.cmake INSTALL_DESTINATION ${SHIFTCAST_CMAKE_DIR})
# 0.x: a minor version may change the API, so a consumer asking for 0.1 takes 0.1.* only.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/shiftcastConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/shiftcastConfig.cmake ${PROJECT_BINARY_DIR}/shiftcastConfigVersion.cmake
        DESTINATION ${SHIFTCAST_CMAKE_DIR})

# PackageConsumer: install into the build tree, then configure, build and run tests/package/ against it
# with the same compiler (and, in the sanitizer build, the same sanitizer runtime the libraries need).
set(SHIFTCAST_CONSUMER_FLAGS "")
if(SHIFTCAST_SANITIZE)
  set(SHIFTCAST_CONSUMER_FLAGS "-fsanitize=address,undefined")
endif()
add_test(NAME PackageConsumer
         COMMAND ${CMAKE_COMMAND} -DSHIFTCAST_BINARY_DIR=${PROJECT_BINARY_DIR}
                 -DCONSUMER_SOURCE_DIR=${PROJECT_SOURCE_DIR}/tests/package
                 -DCXX_COMPILER=${CMAKE_CXX_COMPILER} -DCXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER}
                 -DCONSUMER_FLAGS=${SHIFTCAST_CONSUMER_FLAGS} -P ${PROJECT_SOURCE_DIR}/tests/package/run_consumer.cmake)
set_tests_properties(PackageConsumer PROPERTIES TIMEOUT 120)
