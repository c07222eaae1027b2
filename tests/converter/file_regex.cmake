# cmake -DFILE=<path> -DREGEX=<regex> -P file_regex.cmake: fails unless the
# file exists and its text matches REGEX.
if(NOT EXISTS "${FILE}")
  message(FATAL_ERROR "${FILE} does not exist")
endif()
file(READ "${FILE}" text)
if(NOT text MATCHES "${REGEX}")
  message(FATAL_ERROR "${FILE} does not match '${REGEX}':\n${text}")
endif()
