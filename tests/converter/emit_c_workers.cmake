# The --emit-c header of a model converted with --workers 4: _WORKERS is 4,
# _WORKER_BYTES is not 0 (the model has int8 attention), and
# _POOL_ARENA_BYTES = _ARENA_BYTES + 3 x _WORKER_BYTES (the arena for 4 workers).
file(READ ${FILE} h)
foreach(what ARENA_BYTES WORKER_BYTES WORKERS POOL_ARENA_BYTES)
  if(NOT h MATCHES "#define [A-Z0-9_]+_${what} ([0-9]+)u?\n")
    message(FATAL_ERROR "no _${what} in ${FILE}:\n${h}")
  endif()
  set(${what} ${CMAKE_MATCH_1})
endforeach()
math(EXPR want "${ARENA_BYTES} + 3 * ${WORKER_BYTES}")
if(NOT WORKERS EQUAL 4 OR WORKER_BYTES EQUAL 0 OR NOT POOL_ARENA_BYTES EQUAL want)
  message(FATAL_ERROR "workers ${WORKERS}, arena ${ARENA_BYTES}, per worker ${WORKER_BYTES}, "
                      "pool arena ${POOL_ARENA_BYTES} (want ${want})")
endif()
message(STATUS "4 workers: ${POOL_ARENA_BYTES} = ${ARENA_BYTES} + 3 x ${WORKER_BYTES}")
