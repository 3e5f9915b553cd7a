# The compile flags every shiftcast target gets through the INTERFACE target shiftcast_build_flags
# (linked PRIVATE, so they never leak into a consumer of the installed package):
# - warnings, per target rather than global, so third-party code built here is not judged by them;
# - -Werror when SHIFTCAST_WERROR is ON (CI: scripts/test.sh, both builds);
# - the floating-point rules the pinned determinism hash needs (docs/world.md, "Determinism"): no fused
#   multiply-add contraction and no fast-math, so gcc and clang, at any -march, round every operation
#   the same way as IEEE 754 double on SSE2.
# The sanitizer flags stay global (root CMakeLists.txt): they must reach every object and the link.

set(SHIFTCAST_WARNING_FLAGS
    -Wall
    -Wextra
    -Wpedantic
    -Wno-missing-field-initializers
    -Wnon-virtual-dtor
    -Woverloaded-virtual)

set(SHIFTCAST_FLOAT_FLAGS -ffp-contract=off -fno-fast-math)

# BUILD_INTERFACE: the installed copy of this target (cmake/install.cmake exports it because static
# libraries name their private link dependencies) carries no flags.
target_compile_options(
  shiftcast_build_flags
  INTERFACE $<BUILD_INTERFACE:${SHIFTCAST_WARNING_FLAGS}> $<BUILD_INTERFACE:${SHIFTCAST_FLOAT_FLAGS}>
            $<BUILD_INTERFACE:$<$<BOOL:${SHIFTCAST_WERROR}>:-Werror>>)

# The hash assumes IEEE double arithmetic in SSE registers: on 32-bit x86 (x87, 80-bit intermediates) it
# would differ, so say so rather than fail a test far away.
if(CMAKE_SIZEOF_VOID_P EQUAL 4 AND CMAKE_SYSTEM_PROCESSOR MATCHES "^(i.86|x86)$")
  target_compile_options(shiftcast_build_flags INTERFACE $<BUILD_INTERFACE:-msse2 -mfpmath=sse>)
endif()
