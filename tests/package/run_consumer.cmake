# The PackageConsumer test (registered in cmake/install.cmake): installs the build into a fresh prefix,
# configures and builds tests/package/ against it with find_package(shiftcast), and runs the consumer.
# A fresh prefix and build each time, so a header or target missing from the install rules fails here.
#   cmake -DSHIFTCAST_BINARY_DIR=... -DCONSUMER_SOURCE_DIR=... -DCXX_COMPILER=... [-DCXX_COMPILER_LAUNCHER=...]
#         [-DCONSUMER_FLAGS=...] -P run_consumer.cmake
set(prefix ${SHIFTCAST_BINARY_DIR}/package-prefix)
set(consumer_build ${SHIFTCAST_BINARY_DIR}/package-consumer)
file(REMOVE_RECURSE ${prefix} ${consumer_build})

execute_process(COMMAND ${CMAKE_COMMAND} --install ${SHIFTCAST_BINARY_DIR} --prefix ${prefix}
                OUTPUT_QUIET COMMAND_ERROR_IS_FATAL ANY)

set(configure_args -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
if(CXX_COMPILER_LAUNCHER)
  list(APPEND configure_args -DCMAKE_CXX_COMPILER_LAUNCHER=${CXX_COMPILER_LAUNCHER})
endif()
if(CONSUMER_FLAGS)
  list(APPEND configure_args "-DCMAKE_CXX_FLAGS=${CONSUMER_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${CONSUMER_FLAGS}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${consumer_build} ${configure_args}
                COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${CMAKE_COMMAND} --build ${consumer_build} COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${consumer_build}/package_consumer COMMAND_ERROR_IS_FATAL ANY)
