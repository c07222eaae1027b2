# cmake -P driver of the pkg-config consumer test (see CMakeLists.txt beside
# this file): installs the build into a scratch prefix, builds
# tests/consumer/make/Makefile against <prefix>/lib/pkgconfig/edgeattn.pc with
# make + pkg-config only, and runs the programs on the pooling models.
cmake_minimum_required(VERSION 3.25)

foreach(var EA_BUILD_DIR EA_WORK_DIR EA_SRC_DIR EA_README EA_MODEL_INT8 EA_MODEL_F32 EA_MAKE EA_PKG_CONFIG)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_make_consumer.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT EA_CONFIG)
  set(EA_CONFIG Release)
endif()

set(prefix ${EA_WORK_DIR}/prefix)
set(build ${EA_WORK_DIR}/make-build)
set(examples ${EA_WORK_DIR}/readme-examples)
file(REMOVE_RECURSE ${EA_WORK_DIR})
file(MAKE_DIRECTORY ${EA_WORK_DIR} ${build} ${examples})

set(STEP_LABEL "make consumer")
include(${CMAKE_CURRENT_LIST_DIR}/step.cmake)

step("cmake --install" ${CMAKE_COMMAND} --install ${EA_BUILD_DIR} --prefix ${prefix} --config ${EA_CONFIG})
file(GLOB pc_files ${prefix}/lib*/pkgconfig/edgeattn.pc ${prefix}/lib/*/pkgconfig/edgeattn.pc)
if(NOT pc_files)
  message(FATAL_ERROR "make consumer: no lib/pkgconfig/edgeattn.pc installed under ${prefix}")
endif()
list(GET pc_files 0 pc_file)
get_filename_component(pc_dir ${pc_file} DIRECTORY)
file(READ ${pc_file} pc_text)
message(STATUS "make consumer: ${pc_file}:\n${pc_text}")
# XNNPACK built in <=> stated in the .pc file.
if(EA_HAVE_XNNPACK AND NOT pc_text MATCHES "Libs: [^\n]*-lXNNPACK")
  message(FATAL_ERROR "make consumer: the build has the XNNPACK backend but edgeattn.pc does not link it")
endif()
if(NOT EA_HAVE_XNNPACK AND pc_text MATCHES "Libs: [^\n]*-lXNNPACK")
  message(FATAL_ERROR "make consumer: edgeattn.pc links XNNPACK, which this build does not use")
endif()

include(${CMAKE_CURRENT_LIST_DIR}/readme_examples.cmake)
ea_extract_readme_examples(${EA_README} ${examples})

set(make_vars PKG_CONFIG=${EA_PKG_CONFIG} PKG_CONFIG_PATH=${pc_dir}
    APP_DIR=${EA_SRC_DIR}/app EXAMPLES_DIR=${examples})
if(EA_C_COMPILER)
  list(APPEND make_vars CC=${EA_C_COMPILER})
endif()
if(EA_CXX_COMPILER)
  list(APPEND make_vars CXX=${EA_CXX_COMPILER})
endif()
# Nothing from this build's environment: the .pc file alone must suffice.
step("make" ${CMAKE_COMMAND} -E env --unset=PKG_CONFIG_PATH --unset=PKG_CONFIG_LIBDIR
     ${EA_MAKE} -C ${build} -f ${EA_SRC_DIR}/make/Makefile ${make_vars})

step("run list_layers" ${build}/list_layers ${EA_MODEL_INT8})
if(NOT step_output MATCHES "layer 0: pool ")
  message(FATAL_ERROR "make consumer: list_layers did not print the layer 'pool'")
endif()
# The examples load the model and run it (kv_valid_len = 16 of 20 steps:
# step 19 must get weight 0).
foreach(example readme_example_c:${EA_MODEL_INT8} readme_example_cpp:${EA_MODEL_F32})
  string(REPLACE ":" ";" example "${example}")
  list(GET example 0 exe)
  list(GET example 1 model)
  step("run ${exe}" ${build}/${exe} ${model})
  if(NOT step_output MATCHES "of step 19 = 0\\.0000")
    message(FATAL_ERROR "make consumer: ${exe} did not run the model (or did not mask the padded steps)")
  endif()
endforeach()
message(STATUS "make consumer: OK (built with make + pkg-config, linked by the C and C++ drivers, models run)")
