# scripts/kernels_bench_workers.sh as ../shared/peers/ort-grid.sh --compare
# calls it (docs/performance.md): asked for one case, it must time that case's
# /workers:2 variant and write it under the plain name, so that the peers'
# compare.py pairs it with ONNX Runtime's row.
#   cmake -DSCRIPT=... -DBENCH=<kernels_bench> -DOUT=<json> -P kernels_bench_workers.cmake
set(name "mha_qs8/L:16/d:64/heads:4/ref")
file(REMOVE ${OUT})
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env EA_KERNELS_BENCH=${BENCH}
          bash ${SCRIPT} "--benchmark_filter=^${name}$" --benchmark_min_time=0.001
          --benchmark_out=${OUT} --benchmark_out_format=json
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "kernels_bench_workers.sh failed (${rc}):\n${out}\n${err}")
endif()
file(READ ${OUT} json)
string(JSON n LENGTH "${json}" benchmarks)
if(n EQUAL 0)
  message(FATAL_ERROR "no benchmark ran:\n${json}")
endif()
math(EXPR last "${n} - 1")
foreach(i RANGE ${last})
  string(JSON got GET "${json}" benchmarks ${i} name)
  if(NOT got STREQUAL name)
    message(FATAL_ERROR "benchmark ${i} is named '${got}', expected '${name}' (the /workers:2 run, renamed)")
  endif()
endforeach()
# The run must have been the two-worker variant: kernels_bench labels it.
if(NOT out MATCHES "${name}/workers:2")
  message(FATAL_ERROR "the script did not run ${name}/workers:2:\n${out}")
endif()
