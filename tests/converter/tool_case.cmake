# One invocation of a command-line tool (edgeattn-bench, ...). Inputs (-D):
# TOOL, DIR, EXPECT_EXIT, ARGS (comma separated; '@' = DIR), and optionally
# STDOUT_REGEX, STDERR_REGEX (must match), STDOUT_EMPTY (ON: nothing on stdout),
# NOT_REGEX (must match neither stdout nor stderr).
string(REPLACE "," ";" args "${ARGS}")
string(REPLACE "@" "${DIR}" args "${args}")
execute_process(COMMAND "${TOOL}" ${args}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc STREQUAL "${EXPECT_EXIT}")
  message(FATAL_ERROR "exit ${rc}, expected ${EXPECT_EXIT}\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(STDOUT_REGEX AND NOT out MATCHES "${STDOUT_REGEX}")
  message(FATAL_ERROR "stdout does not match '${STDOUT_REGEX}':\n${out}")
endif()
if(STDERR_REGEX AND NOT err MATCHES "${STDERR_REGEX}")
  message(FATAL_ERROR "stderr does not match '${STDERR_REGEX}':\n${err}")
endif()
if(STDOUT_EMPTY AND NOT out STREQUAL "")
  message(FATAL_ERROR "expected nothing on stdout, got:\n${out}")
endif()
if(NOT_REGEX AND ("${out}" MATCHES "${NOT_REGEX}" OR "${err}" MATCHES "${NOT_REGEX}"))
  message(FATAL_ERROR "output matches '${NOT_REGEX}':\nstdout:\n${out}\nstderr:\n${err}")
endif()
message(STATUS "ok:\n${out}${err}")
