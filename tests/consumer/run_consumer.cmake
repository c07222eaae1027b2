# cmake -P driver of the consumer test (see CMakeLists.txt beside this file):
#   1. cmake --install <build> --prefix <work>/prefix
#   2. check the installed headers, libraries and package files
#   3. extract the README's C and C++ examples
#   4. configure + build tests/consumer/app with CMAKE_PREFIX_PATH=<prefix>
#   5. run the app and the examples on the pooling models
cmake_minimum_required(VERSION 3.25)

foreach(var EA_BUILD_DIR EA_WORK_DIR EA_APP_DIR EA_C_APP_DIR EA_README EA_MODEL_INT8 EA_MODEL_F32 EA_GENERATOR)
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

# 2b. Nothing in the installed libraries needs the C++ runtime (libstdc++,
# libsupc++: guards of function-local statics, operator new, exceptions,
# RTTI), so a C program links them with the C compiler driver alone.
if(EA_NM)
  foreach(lib ${libdir}/libedgeattn_runtime.a ${libdir}/libedgeattn_kernels.a)
    execute_process(COMMAND ${EA_NM} -u ${prefix}/${lib} RESULT_VARIABLE rc OUTPUT_VARIABLE undefined ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "consumer: ${EA_NM} -u ${lib} failed (${rc}): ${err}")
    endif()
    # Object names (lines ending in ':') are left out; symbols: __cxa_*, __gxx_*,
    # operator new/delete (_Znw*, _Zna*, _Zdl*, _Zda*), std:: (_ZSt*, _ZNSt*,
    # _ZNKSt*), typeinfo/vtables of the ABI (_ZTI*, _ZTV*, ...cxxabiv1).
    string(REGEX MATCHALL "[ \t]U (__cxa_[A-Za-z_]+|__gxx_[A-Za-z0-9_]+|_Z(nw|na|dl|da)[A-Za-z0-9_]*|_ZN?K?St[A-Za-z0-9_]*|_ZT[IVS][A-Za-z0-9_]*)"
           cxx_runtime "${undefined}")
    if(cxx_runtime)
      string(REGEX REPLACE "[ \t]U " "" cxx_runtime "${cxx_runtime}")
      list(REMOVE_DUPLICATES cxx_runtime)
      message(FATAL_ERROR "consumer: ${lib} needs the C++ runtime (a C program linking it with cc fails): ${cxx_runtime}")
    endif()
  endforeach()
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
# The same install from a C-only project (project(... LANGUAGES C), as C
# firmware projects are): the C compiler driver links it.
set(c_app_build ${EA_WORK_DIR}/c-app-build)
set(c_compiler)
if(EA_C_COMPILER)
  set(c_compiler -DCMAKE_C_COMPILER=${EA_C_COMPILER})
endif()
step("configure tests/consumer/c_app (C only)"
  ${CMAKE_COMMAND} -S ${EA_C_APP_DIR} -B ${c_app_build} -G ${EA_GENERATOR} ${c_compiler}
    -DCMAKE_BUILD_TYPE=${EA_CONFIG}
    -DCMAKE_PREFIX_PATH=${prefix}
    -DEA_README_EXAMPLES_DIR=${examples})
step("build tests/consumer/c_app (C only)" ${CMAKE_COMMAND} --build ${c_app_build} --config ${EA_CONFIG})

# 5. run (the C++-enabled project's programs, then the C-only project's)
function(run_app dir exe)
  set(path ${dir}/${exe})
  if(NOT EXISTS ${path})
    set(path ${dir}/${EA_CONFIG}/${exe})
  endif()
  step("run ${exe} ${ARGN}" ${path} ${ARGN})
  message("${step_output}")
  set(step_output "${step_output}" PARENT_SCOPE)
endfunction()

foreach(dir ${app_build} ${c_app_build})
  run_app(${dir} list_layers ${EA_MODEL_INT8})
  if(NOT step_output MATCHES "layer 0: pool ")
    message(FATAL_ERROR "consumer: ${dir}/list_layers did not print the layer 'pool'")
  endif()
  run_app(${dir} list_layers ${EA_MODEL_F32})
endforeach()
# The examples pass kv_valid_len = 16 of 20 steps: step 19 must get weight 0.
foreach(example ${app_build}:readme_example_c:${EA_MODEL_INT8} ${app_build}:readme_example_cpp:${EA_MODEL_F32}
                ${c_app_build}:readme_example_c:${EA_MODEL_INT8})
  string(REPLACE ":" ";" example "${example}")
  list(GET example 0 dir)
  list(GET example 1 exe)
  list(GET example 2 model)
  run_app(${dir} ${exe} ${model})
  if(NOT step_output MATCHES "of step 19 = 0\\.0000")
    message(FATAL_ERROR "consumer: ${dir}/${exe} did not mask the padded steps")
  endif()
endforeach()
# Each example checks the layer's dtype: given the other model it refuses it
# (instead of returning all-zero output with a success status) and says why.
foreach(example readme_example_c:${EA_MODEL_F32}:int8 readme_example_cpp:${EA_MODEL_INT8}:f32)
  string(REPLACE ":" ";" example "${example}")
  list(GET example 0 exe)
  list(GET example 1 model)
  list(GET example 2 wanted)
  set(path ${app_build}/${exe})
  if(NOT EXISTS ${path})
    set(path ${app_build}/${EA_CONFIG}/${exe})
  endif()
  execute_process(COMMAND ${path} ${model} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(rc EQUAL 0)
    message(FATAL_ERROR "consumer: ${exe} accepted ${model} (wrong dtype) with status 0:\n${out}")
  endif()
  if(NOT out MATCHES "layer 'pool': [^\n]*--dtype ${wanted}")
    message(FATAL_ERROR "consumer: ${exe} refuses ${model} (exit ${rc}) without saying why "
                        "(expected \"layer 'pool': ... --dtype ${wanted}\"):\n${out}")
  endif()
  message(STATUS "consumer: ${exe} refuses ${model} (exit ${rc}): ${out}")
endforeach()
message(STATUS "consumer: OK (${n_examples} README examples built and run; "
               "C-only project linked with the C compiler driver)")
