# SPDX-License-Identifier: MIT
# Runs the flopcast CLI once and checks its exit code and outputs.
#   cmake -DCMD=<flopcast> -DARGS=<arguments separated by |> -DEXPECT_EXIT=<n>
#         [-DEXPECT_STDOUT=<regex>] [-DEXPECT_STDERR=<regex>] [-DREJECT_STDOUT=<regex>]
#         [-DREJECT_STDERR=<regex>] [-DSTDIN_FILE=<file>] -P run_cli.cmake
# Arguments travel with | separators because ; separates list items on the cmake command line.
cmake_minimum_required(VERSION 3.24)

if(NOT DEFINED CMD OR NOT DEFINED EXPECT_EXIT)
  message(FATAL_ERROR "run_cli.cmake: CMD and EXPECT_EXIT are required")
endif()
set(args "")
if(DEFINED ARGS AND NOT ARGS STREQUAL "")
  string(REPLACE "|" ";" args "${ARGS}")
endif()

set(input_option "")
if(DEFINED STDIN_FILE AND NOT STDIN_FILE STREQUAL "")
  if(NOT EXISTS "${STDIN_FILE}")
    message(FATAL_ERROR "run_cli.cmake: STDIN_FILE ${STDIN_FILE} does not exist")
  endif()
  set(input_option INPUT_FILE "${STDIN_FILE}")
endif()

execute_process(
  COMMAND "${CMD}" ${args}
  ${input_option}
  RESULT_VARIABLE exit_code
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err)

set(problems "")
if(NOT exit_code STREQUAL "${EXPECT_EXIT}")
  string(APPEND problems "  exit code ${exit_code}, expected ${EXPECT_EXIT}\n")
endif()
if(DEFINED EXPECT_STDOUT AND NOT EXPECT_STDOUT STREQUAL "" AND NOT out MATCHES "${EXPECT_STDOUT}")
  string(APPEND problems "  stdout does not match /${EXPECT_STDOUT}/\n")
endif()
if(DEFINED EXPECT_STDERR AND NOT EXPECT_STDERR STREQUAL "" AND NOT err MATCHES "${EXPECT_STDERR}")
  string(APPEND problems "  stderr does not match /${EXPECT_STDERR}/\n")
endif()
if(DEFINED REJECT_STDOUT AND NOT REJECT_STDOUT STREQUAL "" AND out MATCHES "${REJECT_STDOUT}")
  string(APPEND problems "  stdout matches /${REJECT_STDOUT}/ but must not\n")
endif()
if(DEFINED REJECT_STDERR AND NOT REJECT_STDERR STREQUAL "" AND err MATCHES "${REJECT_STDERR}")
  string(APPEND problems "  stderr matches /${REJECT_STDERR}/ but must not\n")
endif()

if(NOT problems STREQUAL "")
  string(REPLACE ";" " " shown "${args}")
  message(FATAL_ERROR "flopcast ${shown}\n${problems}"
                      "---- stdout ----\n${out}\n---- stderr ----\n${err}")
endif()
