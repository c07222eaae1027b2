# Runs edgeattn-greedy-decode on the bundled transformer (int8 + f32 .eatn,
# models/transformer/heldout.npz) and checks what it prints:
#  - int8 reverses at least TORCH_EXACT - MAX_INT8_LOSS of the N held-out
#    sequences exactly, TORCH_EXACT being PyTorch's float greedy count on the
#    same sequences (train_report.json "heldout_npz_exact"), which the
#    program must also count from heldout.npz's torch_greedy;
#  - f32 reverses at least TORCH_EXACT - MAX_F32_LOSS and equals PyTorch's
#    greedy tokens on at least N - MAX_F32_LOSS sequences;
#  - for both models, decoding with KV-cached steps gives exactly the tokens
#    of re-running dec_self over the whole prefix, on every sequence;
#  - --show 3 prints 3 examples, and the source count is worded right
#    ("1001 sources", "1 source").
# With ENCODER_INT8 / ENCODER_F32 (models/transformer/encoder_block.spec.json
# converted) the whole encoder layer runs in the runtime as block kinds, and
# the program must say so. With DECODER_INT8 / DECODER_F32
# (models/transformer/decoder_block.spec.json converted) so does the whole
# decoder layer and the output head (decoder_block + layernorm + linear; the
# embedding and the argmax stay in host code), its KV-cached steps against
# re-runs of the block, and it must report how often the int8 logits tied.
set(encoder_args "")
if(ENCODER_INT8)
  set(encoder_args --encoder-model ${ENCODER_INT8} --float-encoder-model ${ENCODER_F32})
endif()
if(DECODER_INT8)
  list(APPEND encoder_args --decoder-model ${DECODER_INT8} --float-decoder-model ${DECODER_F32})
endif()
execute_process(COMMAND ${DECODE} --model ${INT8} --float-model ${F32} --weights ${WEIGHTS} --data ${DATA}
                        --show 3 --source 0123456789 ${encoder_args}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
message(STATUS "${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "edgeattn-greedy-decode failed (${rc}):\n${err}")
endif()

function(ea_count label re out_var)
  if(NOT out MATCHES "${re}")
    message(FATAL_ERROR "no ${label} line matching '${re}'")
  endif()
  set(${out_var} ${CMAKE_MATCH_1} PARENT_SCOPE)
  if(CMAKE_MATCH_COUNT GREATER 1)
    set(${out_var}_2 ${CMAKE_MATCH_2} PARENT_SCOPE)
    set(${out_var}_3 ${CMAKE_MATCH_3} PARENT_SCOPE)
  endif()
endfunction()

set(n_re "([0-9]+) of ([0-9]+)")
if(ENCODER_INT8 AND NOT out MATCHES "int8 encoder: encoder_block \\+ layernorm in the runtime[^\n]*\nf32 encoder: encoder_block \\+ layernorm in the runtime")
  message(FATAL_ERROR "the encoder did not run as block kinds in the runtime")
endif()
if(DECODER_INT8 AND NOT out MATCHES "int8 decoder: decoder_block \\+ layernorm \\+ linear head in the runtime[^\n]*\nf32 decoder: decoder_block \\+ layernorm \\+ linear head in the runtime")
  message(FATAL_ERROR "the decoder and its head did not run as layers of the runtime")
endif()
if(DECODER_INT8 AND NOT out MATCHES "\nint8  head: largest logit tied at [0-9]+ of [0-9]+ steps")
  message(FATAL_ERROR "no line on ties of the int8 head's logits")
endif()
ea_count("int8" "\nint8  [^\n]*: ([0-9]+) of ([0-9]+) reversed exactly[^\n]*full re-run tokens on ([0-9]+) of" i8)
ea_count("f32" "\nf32   [^\n]*: ([0-9]+) of ([0-9]+) reversed exactly[^\n]*full re-run tokens on ([0-9]+) of" f32)
ea_count("f32 vs PyTorch" "\nf32   [^\n]*= PyTorch greedy on ([0-9]+) of" f32_torch)
ea_count("PyTorch" "PyTorch float greedy [^\n]*: ([0-9]+) of ([0-9]+) reversed" torch)

set(n ${i8_2})
if(NOT torch EQUAL TORCH_EXACT OR NOT torch_2 EQUAL n)
  message(FATAL_ERROR "heldout.npz: PyTorch's greedy output reverses ${torch} of ${torch_2}, "
                      "train_report.json says ${TORCH_EXACT} of ${n}")
endif()
math(EXPR min_int8 "${TORCH_EXACT} - ${MAX_INT8_LOSS}")
math(EXPR min_f32 "${TORCH_EXACT} - ${MAX_F32_LOSS}")
math(EXPR min_f32_torch "${n} - ${MAX_F32_LOSS}")
if(i8 LESS min_int8)
  message(FATAL_ERROR "int8 reverses ${i8} of ${n}, fewer than ${min_int8} (PyTorch float: ${TORCH_EXACT})")
endif()
if(f32 LESS min_f32 OR f32_torch LESS min_f32_torch)
  message(FATAL_ERROR "f32 reverses ${f32} of ${n} (at least ${min_f32}) and equals PyTorch on "
                      "${f32_torch} (at least ${min_f32_torch})")
endif()
if(NOT i8_3 EQUAL n OR NOT f32_3 EQUAL n)
  message(FATAL_ERROR "cached-step decoding differs from full re-run decoding: int8 ${i8_3} of ${n}, "
                      "f32 ${f32_3} of ${n} equal")
endif()
if(NOT out MATCHES "0 1 2 3 4 5 6 7 8 9 +-> 9 8 7 6 5 4 3 2 1 0 EOS +reversed")
  message(FATAL_ERROR "--source 0123456789 was not reversed")
endif()

# --show N prints N examples (the --source first), and the counts read right.
string(REGEX MATCHALL "\n  [0-9 ]+ +-> [^\n]*(reversed|WRONG)" examples "${out}")
list(LENGTH examples n_examples)
if(NOT n_examples EQUAL 3)
  message(FATAL_ERROR "--show 3 printed ${n_examples} examples")
endif()
if(NOT out MATCHES "; 1001 sources \\(1 from the command line\\)\n")
  message(FATAL_ERROR "the header does not say '1001 sources (1 from the command line)'")
endif()
execute_process(COMMAND ${DECODE} --model ${INT8} --weights ${WEIGHTS} --source 31415 --show 3
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
message(STATUS "${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "edgeattn-greedy-decode --source 31415 failed (${rc}):\n${err}")
endif()
if(NOT out MATCHES "; 1 source \\(1 from the command line\\)\n")
  message(FATAL_ERROR "one source is not worded '1 source (1 from the command line)'")
endif()
