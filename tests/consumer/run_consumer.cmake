# cmake -P driver of the consumer test (see CMakeLists.txt beside this file):
#   1. cmake --install <build> --prefix <work>/prefix
#   2. check the installed headers, libraries and package files
#   3. extract the README's C and C++ examples
#   4. configure + build tests/consumer/app with CMAKE_PREFIX_PATH=<prefix>
#   5. run the app and the examples on the pooling models
cmake_minimum_required(VERSION 3.25)

foreach(var EA_BUILD_DIR EA_WORK_DIR EA_APP_DIR EA_README EA_MODEL_INT8 EA_MODEL_F32 EA_GENERATOR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_consumer.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT EA_CONFIG)
  set(EA_CONFIG Release)
endif()

set(prefix ${EA_WORK_DIR}/prefix)
set(app_build ${EA_WORK_DIR}/app-build)
set(examples ${EA_WORK_DIR}/readme-examples)
file(REMOVE_RECURSE ${EA_WORK_DIR})
file(MAKE_DIRECTORY ${EA_WORK_DIR} ${examples})

set(STEP_LABEL "consumer")
include(${CMAKE_CURRENT_LIST_DIR}/step.cmake)

# 1. install
step("cmake --install" ${CMAKE_COMMAND} --install ${EA_BUILD_DIR} --prefix ${prefix} --config ${EA_CONFIG})

# 2. what a downstream project needs from the install
set(libdir lib)
if(EXISTS ${prefix}/lib64 AND NOT EXISTS ${prefix}/lib/cmake/edgeattn)
  set(libdir lib64)
endif()
set(missing)
foreach(f
    include/edgeattn/edgeattn.h
    include/edgeattn/edgeattn.hpp
    include/edgeattn/plan.h
    include/edgeattn/edgeattn_generated.h
    ${libdir}/libedgeattn_runtime.a
    ${libdir}/libedgeattn_kernels.a
    ${libdir}/cmake/edgeattn/edgeattnConfig.cmake
    ${libdir}/cmake/edgeattn/edgeattnConfigVersion.cmake
    ${libdir}/cmake/edgeattn/edgeattnTargets.cmake)
  if(NOT EXISTS ${prefix}/${f})
    list(APPEND missing ${f})
  endif()
endforeach()
if(missing)
  file(GLOB_RECURSE installed RELATIVE ${prefix} ${prefix}/*)
  string(REPLACE ";" "\n  " installed "${installed}")
  message(FATAL_ERROR "consumer: not installed: ${missing}\ninstalled:\n  ${installed}")
endif()

# 3. README examples: a code block preceded by <!-- consumer: NAME --> is written to NAME
include(${CMAKE_CURRENT_LIST_DIR}/readme_examples.cmake)
ea_extract_readme_examples(${EA_README} ${examples})

# 4. configure and build the separate project against the install
set(compilers)
if(EA_C_COMPILER)
  list(APPEND compilers -DCMAKE_C_COMPILER=${EA_C_COMPILER})
endif()
if(EA_CXX_COMPILER)
  list(APPEND compilers -DCMAKE_CXX_COMPILER=${EA_CXX_COMPILER})
endif()
step("configure tests/consumer/app"
  ${CMAKE_COMMAND} -S ${EA_APP_DIR} -B ${app_build} -G ${EA_GENERATOR} ${compilers}
    -DCMAKE_BUILD_TYPE=${EA_CONFIG}
    -DCMAKE_PREFIX_PATH=${prefix}
    -DEA_README_EXAMPLES_DIR=${examples})
step("build tests/consumer/app" ${CMAKE_COMMAND} --build ${app_build} --config ${EA_CONFIG})

# 5. run
function(run_app exe)
  set(path ${app_build}/${exe})
  if(NOT EXISTS ${path})
    set(path ${app_build}/${EA_CONFIG}/${exe})
  endif()
  step("run ${exe} ${ARGN}" ${path} ${ARGN})
  message("${step_output}")
  set(step_output "${step_output}" PARENT_SCOPE)
endfunction()

run_app(list_layers ${EA_MODEL_INT8})
if(NOT step_output MATCHES "layer 0: pool ")
  message(FATAL_ERROR "consumer: list_layers did not print the layer 'pool'")
endif()
run_app(list_layers ${EA_MODEL_F32})
# The examples pass kv_valid_len = 16 of 20 steps: step 19 must get weight 0.
foreach(example readme_example_c:${EA_MODEL_INT8} readme_example_cpp:${EA_MODEL_F32})
  string(REPLACE ":" ";" example "${example}")
  list(GET example 0 exe)
  list(GET example 1 model)
  run_app(${exe} ${model})
  if(NOT step_output MATCHES "of step 19 = 0\\.0000")
    message(FATAL_ERROR "consumer: ${exe} did not mask the padded steps")
  endif()
endforeach()
# Each example checks the layer's dtype: given the other model it refuses it
# (instead of returning all-zero output with a success status).
foreach(example readme_example_c:${EA_MODEL_F32} readme_example_cpp:${EA_MODEL_INT8})
  string(REPLACE ":" ";" example "${example}")
  list(GET example 0 exe)
  list(GET example 1 model)
  set(path ${app_build}/${exe})
  if(NOT EXISTS ${path})
    set(path ${app_build}/${EA_CONFIG}/${exe})
  endif()
  execute_process(COMMAND ${path} ${model} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(rc EQUAL 0)
    message(FATAL_ERROR "consumer: ${exe} accepted ${model} (wrong dtype) with status 0:\n${out}")
  endif()
  message(STATUS "consumer: ${exe} refuses ${model} (exit ${rc}): ${out}")
endforeach()
message(STATUS "consumer: OK (${n_examples} README examples built and run)")
