# scripts/kernels_bench_variant.sh as ../shared/peers/ort-grid.sh --compare
# calls it (docs/performance.md, docs/quantization.md): asked for one case, it
# must time that case's variant (EA_BENCH_VARIANT: /workers:2 by default,
# stream:int16) and write it under the plain name, so that the peers'
# compare.py pairs it with ONNX Runtime's row; an unknown variant is refused.
#   cmake -DSCRIPT=... -DBENCH=<kernels_bench> -DOUT=<json> -P kernels_bench_variant.cmake
function(check_variant variant name ran)
  file(REMOVE ${OUT})
  set(env EA_KERNELS_BENCH=${BENCH})
  if(variant)
    list(APPEND env EA_BENCH_VARIANT=${variant})
  endif()
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env ${env}
            bash ${SCRIPT} "--benchmark_filter=^${name}$" --benchmark_min_time=0.001
            --benchmark_out=${OUT} --benchmark_out_format=json
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "kernels_bench_variant.sh (${variant}) failed (${rc}):\n${out}\n${err}")
  endif()
  file(READ ${OUT} json)
  string(JSON n LENGTH "${json}" benchmarks)
  if(n EQUAL 0)
    message(FATAL_ERROR "no benchmark ran (${variant}):\n${json}")
  endif()
  math(EXPR last "${n} - 1")
  foreach(i RANGE ${last})
    string(JSON got GET "${json}" benchmarks ${i} name)
    if(NOT got STREQUAL name)
      message(FATAL_ERROR "benchmark ${i} is named '${got}', expected '${name}' (the ${ran} run, renamed)")
    endif()
  endforeach()
  # The run must have been the variant: kernels_bench prints its own name.
  if(NOT out MATCHES "${ran}")
    message(FATAL_ERROR "the script did not run ${ran}:\n${out}")
  endif()
endfunction()

check_variant("" "mha_qs8/L:16/d:64/heads:4/ref" "mha_qs8/L:16/d:64/heads:4/ref/workers:2")
check_variant("stream:int16" "encoder_block_qs8/L:16/d:64/heads:4/ref"
              "encoder_block_qs8/L:16/d:64/heads:4/stream:int16/ref")

execute_process(
  COMMAND ${CMAKE_COMMAND} -E env EA_KERNELS_BENCH=${BENCH} EA_BENCH_VARIANT=stream:int8
          bash ${SCRIPT} "--benchmark_filter=^mha_qs8/L:16/d:64/heads:4/ref$" --benchmark_out=${OUT}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT err MATCHES "EA_BENCH_VARIANT must be workers:N or stream:int16, not 'stream:int8'")
  message(FATAL_ERROR "an unknown variant was not refused (${rc}):\n${out}\n${err}")
endif()
