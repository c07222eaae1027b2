# Runs edgeattn-greedy-decode --generate-model on the bundled transformer
# converted as one generating file (int8 + f32) over models/transformer/
# heldout.npz and checks what it prints: int8 reverses at least MIN_INT8 of
# the 1000 held-out sequences, f32 reverses TORCH_EXACT (PyTorch's count)
# and equals PyTorch's greedy tokens on all 1000, the typed --source is
# printed reversed, and each model's Generate latency line is there.
execute_process(COMMAND ${DECODE} --generate-model ${INT8} --float-generate-model ${F32} --data ${DATA}
                        --source 0123456789 --show 1
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
message(STATUS "${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "edgeattn-greedy-decode failed (${rc}):\n${err}")
endif()
if(NOT out MATCHES "int8  Generate: ([0-9]+) of 1000 reversed exactly")
  message(FATAL_ERROR "no int8 Generate accuracy line")
endif()
if(CMAKE_MATCH_1 LESS MIN_INT8)
  message(FATAL_ERROR "int8 Generate reverses ${CMAKE_MATCH_1} of 1000, fewer than ${MIN_INT8}")
endif()
if(NOT out MATCHES "f32   Generate: ${TORCH_EXACT} of 1000 reversed exactly \\([0-9.]+\\); = PyTorch greedy on 1000 of 1000")
  message(FATAL_ERROR "f32 Generate does not reverse ${TORCH_EXACT} with PyTorch's tokens on all 1000")
endif()
if(NOT out MATCHES "0 1 2 3 4 5 6 7 8 9 +-> 9 8 7 6 5 4 3 2 1 0 EOS +reversed")
  message(FATAL_ERROR "the typed source is not printed reversed")
endif()
foreach(label int8 f32)
  if(NOT out MATCHES "${label} +Generate latency: median [0-9.]+ us per source")
    message(FATAL_ERROR "no ${label} Generate latency line")
  endif()
endforeach()
