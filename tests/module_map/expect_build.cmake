# Builds one module-map probe and judges the outcome (run by ctest with cmake -P):
#   -DBUILD_DIR=<build> -DTARGET=<probe> -DMISSING=<header>   the build must fail on exactly that header
#   -DBUILD_DIR=<build> -DTARGET=<probe>                      the build must succeed
# Matching the compiler's own "not found" message (gcc and clang spell it differently) means a forbidden
# probe cannot pass because of some other error.
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${TARGET}
                RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
if(NOT DEFINED MISSING)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${TARGET} should build, but:\n${output}")
  endif()
  message(STATUS "${TARGET} builds, as it should")
  return()
endif()
if(status EQUAL 0)
  message(FATAL_ERROR "${TARGET} built, but it includes ${MISSING}, which its module may not use")
endif()
string(REPLACE "." "\\." missing_pattern "${MISSING}")
if(NOT output MATCHES "fatal error: '?${missing_pattern}'?(: No such file or directory| file not found)")
  message(FATAL_ERROR "${TARGET} failed for another reason than the missing ${MISSING}:\n${output}")
endif()
message(STATUS "${TARGET} cannot include ${MISSING}, as it should not")
