# Runs edgeattn-bench on MODEL with the reference path and with every other
# kernel path; each path either is unavailable here (exit 1 with "not
# available") or prints exactly the reference's output hashes. Then
# --threads 3 on the runtime's own path prints its one-thread hashes (int8
# and f32 alike) and the pool's hand-over.
function(run_bench path out_var rc_var)
  set(args ${MODEL} --warmup 0 --iters 2 --json ${ARGN})
  if(path)
    list(APPEND args --path ${path})
  endif()
  execute_process(COMMAND ${EMULATOR} ${BENCH} ${args}
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  set(${out_var} "${out}${err}" PARENT_SCOPE)
  set(${rc_var} ${rc} PARENT_SCOPE)
endfunction()

function(hashes text out_var)
  string(REGEX MATCHALL "\"output_hash\": \"[0-9a-f]+\"" found "${text}")
  set(${out_var} "${found}" PARENT_SCOPE)
endfunction()

run_bench(ref ref_out ref_rc)
if(NOT ref_rc EQUAL 0)
  message(FATAL_ERROR "edgeattn-bench --path ref failed (${ref_rc}):\n${ref_out}")
endif()
hashes("${ref_out}" ref_hashes)
list(LENGTH ref_hashes n)
if(n EQUAL 0)
  message(FATAL_ERROR "no output hashes in:\n${ref_out}")
endif()
message(STATUS "ref: ${ref_hashes}")

# Not under qemu-user (EMULATOR): a dynamically linked guest hangs in its
# first pthread_create there (threads_test, linked statically, covers it).
if(NOT EMULATOR)
  run_bench("" one_out one_rc)
  run_bench("" three_out three_rc --threads 3)
  if(NOT one_rc EQUAL 0 OR NOT three_rc EQUAL 0 OR NOT three_out MATCHES "\"threads\": 3")
    message(FATAL_ERROR "edgeattn-bench --threads 1 / 3 failed:\n${one_out}\n${three_out}")
  endif()
  hashes("${one_out}" one_hashes)
  hashes("${three_out}" three_hashes)
  if(NOT one_hashes STREQUAL three_hashes)
    message(FATAL_ERROR "--threads 3 outputs differ from one thread:\n  1: ${one_hashes}\n  3: ${three_hashes}")
  endif()
  message(STATUS "--threads 3: the one-thread hashes")
  # The pool's hand-over before and after the layers, with more than one worker only.
  if(NOT three_out MATCHES "\"pool_handover_us\": \\[[0-9]+\\.[0-9]+, [0-9]+\\.[0-9]+\\]"
     OR one_out MATCHES "pool_handover_us")
    message(FATAL_ERROR "--threads 3 should print pool_handover_us [before, after], one thread none:\n${one_out}\n${three_out}")
  endif()
endif()

if(NOT EXACT)
  return()
endif()
set(compared 0)
foreach(path "" avx2 avxvnni avx512vnni amx neon neondot)
  run_bench("${path}" out rc)
  if(NOT rc EQUAL 0)
    if(path AND out MATCHES "not available")
      continue()
    endif()
    message(FATAL_ERROR "edgeattn-bench --path '${path}' failed (${rc}):\n${out}")
  endif()
  hashes("${out}" h)
  if(NOT h STREQUAL ref_hashes)
    message(FATAL_ERROR "path '${path}' outputs differ from ref:\n  ref: ${ref_hashes}\n  got: ${h}")
  endif()
  math(EXPR compared "${compared} + 1")
endforeach()
message(STATUS "${compared} run(s) matched the reference path bit for bit")
