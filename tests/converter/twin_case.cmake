# The same state dict in two files (-DA, -DB: e.g. safetensors and a
# torch.save checkpoint), each copied to its own directory under one name
# (the model records the weights file's base name), converted with -DSPEC and
# -DCALIB by -DCONVERT into -DDIR: the two .eatn files must be identical.
foreach(side A B)
  set(d "${DIR}/twin_${side}")
  file(REMOVE_RECURSE "${d}")
  file(MAKE_DIRECTORY "${d}")
  file(COPY_FILE "${${side}}" "${d}/weights")
  execute_process(COMMAND "${CONVERT}" convert --weights "${d}/weights" --spec "${SPEC}" --calib "${CALIB}"
                          --dtype int8 -o "${d}/model.eatn" --quiet
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "converting ${${side}} failed (${rc}): ${err}")
  endif()
endforeach()
execute_process(COMMAND "${CMAKE_COMMAND}" -E compare_files "${DIR}/twin_A/model.eatn" "${DIR}/twin_B/model.eatn"
                RESULT_VARIABLE differ)
if(NOT differ EQUAL 0)
  message(FATAL_ERROR "${A} and ${B} converted to different models")
endif()
message(STATUS "${A} and ${B}: identical models")
