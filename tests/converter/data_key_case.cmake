# --data-key: the stack fixture's calibration samples stored as the converter
# names them (block0.query, block0.kv_valid_len) and as a user's own file
# names them (x, x_len, read with --data-key) must convert to identical files.
set(common convert --weights "${DIR}/stack.safetensors" --spec "${DIR}/stack_spec.json" --dtype int8 --quiet)
execute_process(COMMAND "${CONVERT}" ${common} --calib "${DIR}/stack_calib.npz" -o "${DIR}/data_key_a.eatn"
                RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "converting with the converter's keys failed (${rc}): ${err}")
endif()
execute_process(COMMAND "${CONVERT}" ${common} --calib "${DIR}/user_keys/stack_calib.npz"
                        --data-key x=block0.query --data-key x_len=block0.kv_valid_len -o "${DIR}/data_key_b.eatn"
                RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "converting with --data-key failed (${rc}): ${err}")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" -E compare_files "${DIR}/data_key_a.eatn" "${DIR}/data_key_b.eatn"
                RESULT_VARIABLE differ)
if(NOT differ EQUAL 0)
  message(FATAL_ERROR "--data-key x=block0.query,x_len=block0.kv_valid_len converted to a different model")
endif()
