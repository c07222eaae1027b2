# edgeattn-convert classify must report at least MIN_CORRECT correct sequences.
execute_process(COMMAND ${CONVERT} classify ${MODEL} --data ${DATA} --weights ${WEIGHTS}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "classify failed (${rc}):\n${out}${err}")
endif()
if(NOT out MATCHES "\\(([0-9]+) of ([0-9]+) held-out")
  message(FATAL_ERROR "no accuracy line in:\n${out}")
endif()
set(correct ${CMAKE_MATCH_1})
message(STATUS "${out}")
if(correct LESS MIN_CORRECT)
  message(FATAL_ERROR "${correct} correct, fewer than ${MIN_CORRECT}")
endif()
