# SPDX-License-Identifier: MIT
# Runs the flopcast CLI twice (each must exit 0 and print one JSON document) and requires the
# listed keys to be printed identically by both, e.g. the same ttft_ms to the last digit; a dotted
# key (ttft_ms.mean) is a path into nested objects.
#   cmake -DCMD=<flopcast> -DARGS_A=<a|b|c> -DARGS_B=<a|b|c> [-DSTDIN_FILE_B=<file>]
#         -DKEYS=<key|key> -P compare_json.cmake
cmake_minimum_required(VERSION 3.24)

function(run_json label args_text stdin_file out_var)
  string(REPLACE "|" ";" args "${args_text}")
  set(input_option "")
  if(NOT stdin_file STREQUAL "")
    set(input_option INPUT_FILE "${stdin_file}")
  endif()
  execute_process(COMMAND "${CMD}" ${args} ${input_option}
                  RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT code STREQUAL "0")
    message(FATAL_ERROR "${label}: flopcast ${args_text} exited ${code}\n${out}\n${err}")
  endif()
  string(JSON ok ERROR_VARIABLE json_error TYPE "${out}")
  if(NOT json_error STREQUAL "NOTFOUND" OR NOT ok STREQUAL "OBJECT")
    message(FATAL_ERROR "${label}: stdout is not a JSON object (type ${ok}; ${json_error})\n${out}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

if(NOT DEFINED STDIN_FILE_B)
  set(STDIN_FILE_B "")
endif()
run_json(A "${ARGS_A}" "" json_a)
run_json(B "${ARGS_B}" "${STDIN_FILE_B}" json_b)
string(REPLACE "|" ";" keys "${KEYS}")
foreach(key IN LISTS keys)
  string(REPLACE "." ";" path "${key}")
  string(JSON a ERROR_VARIABLE err_a GET "${json_a}" ${path})
  string(JSON b ERROR_VARIABLE err_b GET "${json_b}" ${path})
  if(NOT err_a STREQUAL "NOTFOUND" OR NOT err_b STREQUAL "NOTFOUND")
    message(FATAL_ERROR "key ${key} missing: ${err_a} / ${err_b}")
  endif()
  if(NOT a MATCHES "^-?[0-9]")
    message(FATAL_ERROR "key ${key} is not a number: ${a}")
  endif()
  if(NOT a STREQUAL b)
    message(FATAL_ERROR "key ${key} differs: ${a} vs ${b}")
  endif()
  message(STATUS "${key}: ${a} == ${b}")
endforeach()
