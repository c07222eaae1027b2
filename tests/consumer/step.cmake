# step(<name> <command...>): runs the command, stops the cmake -P script with
# its output when it fails, and leaves the output in step_output. Shared by
# the consumer drivers; STEP_LABEL names the driver in messages.
function(step name)
  message(STATUS "${STEP_LABEL}: ${name}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message("${out}")
    message(FATAL_ERROR "${STEP_LABEL}: '${name}' failed (${rc})")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()
