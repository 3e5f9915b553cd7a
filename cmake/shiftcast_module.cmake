# The module map, held by the build (DESIGN.md section 2). Every module is one library whose include root
# holds its own folder alone: build/include-roots/<root>/<root> is a symlink to the source folder (for
# example include-roots/world_level/world/level -> <src>/world/level), so `#include "world/level/level.hpp"`
# keeps its repository-relative spelling, and it resolves only in a target that links the module. No
# target exports the repository root: a wrong include (collision reaching into world/, world/level into
# world/match) is a missing header, a compile error. tests/module_map shows it.
#
#   shiftcast_add_module(NAME shiftcast_world_level ROOT world/level
#                        SOURCES level.cpp navmesh.cpp ...        # explicit lists, never a glob
#                        DEPS shiftcast_collision recast_detour   # PUBLIC: what DESIGN.md's "may use" allows
#                        PRIVATE_DEPS tomlplusplus::tomlplusplus  # used by the sources, not the headers
#                        GENERATED_ROOT <dir>                     # exported too: generated headers
#                        HEADERS player_input.hpp)                # INTERFACE: only these files in the root
#   shiftcast_add_program(NAME shiftcast-level SOURCES level_tool.cpp DEPS shiftcast_world_tools)
#
# Both link shiftcast_build_flags (warnings, -ffp-contract=off, defined in the root CMakeLists.txt)
# PRIVATE, so every target is compiled the same way.
include_guard(GLOBAL)

# The include root of a repository-relative folder (or of some of its files), created at configure time.
# Returns the directory to put on the include path. Roots are named after the folder, not the target, so
# two targets of one folder (tests/support) share one root and a header is never reached by two paths; a
# root of some files only (HEADERS) is named after its target.
function(shiftcast_include_root root root_name out_var)
  set(base ${CMAKE_BINARY_DIR}/include-roots/${root_name})
  get_filename_component(parent ${base}/${root} DIRECTORY)
  file(MAKE_DIRECTORY ${parent})
  set(headers ${ARGN})
  if(headers)
    file(MAKE_DIRECTORY ${base}/${root})
    foreach(header ${headers})
      file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${root}/${header} ${base}/${root}/${header} SYMBOLIC)
    endforeach()
  else()
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${root} ${base}/${root} SYMBOLIC)
  endif()
  set(${out_var} ${base} PARENT_SCOPE)
endfunction()

function(shiftcast_add_module)
  cmake_parse_arguments(PARSE_ARGV 0 M "" "NAME;ROOT;GENERATED_ROOT" "SOURCES;DEPS;PRIVATE_DEPS;HEADERS")
  if(M_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "shiftcast_add_module(${M_NAME}): unknown arguments ${M_UNPARSED_ARGUMENTS}")
  endif()
  string(REPLACE "/" "_" root_name "${M_ROOT}")
  if(M_HEADERS)
    set(root_name ${M_NAME})
  endif()
  shiftcast_include_root(${M_ROOT} ${root_name} root_dir ${M_HEADERS})
  if(M_SOURCES)
    add_library(${M_NAME} STATIC ${M_SOURCES})
    set(scope PUBLIC)
    target_link_libraries(${M_NAME} PRIVATE shiftcast_build_flags ${M_PRIVATE_DEPS})
  else()
    add_library(${M_NAME} INTERFACE)
    set(scope INTERFACE)
  endif()
  target_include_directories(${M_NAME} ${scope} $<BUILD_INTERFACE:${root_dir}>)
  if(M_GENERATED_ROOT)
    target_include_directories(${M_NAME} ${scope} $<BUILD_INTERFACE:${M_GENERATED_ROOT}>)
  endif()
  target_link_libraries(${M_NAME} ${scope} ${M_DEPS})
endfunction()

# Executables (tools, tests, benchmarks, fuzzers): the same flags; what they may include comes from DEPS.
function(shiftcast_add_program)
  cmake_parse_arguments(PARSE_ARGV 0 P "" "NAME" "SOURCES;DEPS")
  if(P_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "shiftcast_add_program(${P_NAME}): unknown arguments ${P_UNPARSED_ARGUMENTS}")
  endif()
  add_executable(${P_NAME} ${P_SOURCES})
  target_link_libraries(${P_NAME} PRIVATE shiftcast_build_flags ${P_DEPS})
endfunction()
