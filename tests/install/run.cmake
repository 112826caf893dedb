# SPDX-License-Identifier: MIT
# Installs the build tree (cmake --install) into a scratch prefix, builds tests/install/consumer
# against the installed package with find_package(flopcast), and requires the consumer's TTFT to
# equal the installed CLI's for the same request, digit for digit.
#   cmake -DBUILD_DIR=<build> -DSOURCE_DIR=<tests/install> -DWORK_DIR=<scratch> -P run.cmake
cmake_minimum_required(VERSION 3.24)
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT code STREQUAL "0")
    message(FATAL_ERROR "${ARGN} exited ${code}\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()
run("${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}")
foreach(f bin/flopcast include/flopcast/io/api.hpp include/flopcast/inference.hpp
        lib/cmake/flopcast/flopcastConfig.cmake lib/cmake/flopcast/flopcastConfigVersion.cmake)
  if(NOT EXISTS "${prefix}/${f}")
    file(GLOB_RECURSE got RELATIVE "${prefix}" "${prefix}/*")
    message(FATAL_ERROR "not installed: ${f}\ninstalled: ${got}")
  endif()
endforeach()
run("${CMAKE_COMMAND}" -S "${SOURCE_DIR}/consumer" -B "${WORK_DIR}/consumer"
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
run("${CMAKE_COMMAND}" --build "${WORK_DIR}/consumer")
run("${WORK_DIR}/consumer/consumer")
set(consumer "${out}")
run("${prefix}/bin/flopcast" estimate --model llama-2-7b --hardware a100-sxm-80g
    --prompt-tokens 128 --output-tokens 128 --format json)
# The number as the CLI wrote it: string(JSON GET) would reprint it with 17 digits
# (12.0765 -> 12.076499999999999) where the consumer prints nlohmann's shortest form.
if(NOT out MATCHES "\n  \"ttft_ms\": ([^,\n]+)")
  message(FATAL_ERROR "the CLI printed no top-level ttft_ms:\n${out}")
endif()
set(cli_ttft "${CMAKE_MATCH_1}")
if(NOT consumer MATCHES "ttft_ms ([^\n]+)\n")
  message(FATAL_ERROR "consumer printed no ttft_ms:\n${consumer}")
endif()
set(consumer_ttft "${CMAKE_MATCH_1}")
if(NOT consumer_ttft STREQUAL cli_ttft)
  message(FATAL_ERROR "consumer TTFT ${consumer_ttft} differs from the CLI's ${cli_ttft}")
endif()
if(NOT consumer MATCHES "\"path\":\"model\"" OR NOT consumer MATCHES "\"ok\":false")
  message(FATAL_ERROR "the bad request's envelope is not an error naming model:\n${consumer}")
endif()
message(STATUS "installed package: consumer TTFT ${consumer_ttft} ms == CLI ${cli_ttft} ms")
file(REMOVE_RECURSE "${WORK_DIR}")
