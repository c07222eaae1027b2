# ea_cm_add_firmware(NAME SOURCES src... [LIBS lib...]): a bare-metal ELF for
# EA_CM_BOARD with the startup code, platform layer, board linker script and a
# map file (NAME.map). Heap use fails the link (see the toolchain file).
set(EA_CM_DIR ${CMAKE_CURRENT_LIST_DIR}/..)
if(EA_CM_BOARD STREQUAL "mps2-an386")
  set(EA_CM_CPU_HZ 25000000)
else()
  set(EA_CM_CPU_HZ 32000000)
endif()

add_library(ea_cm_platform OBJECT ${EA_CM_DIR}/platform/startup.cc ${EA_CM_DIR}/platform/platform.cc)
target_include_directories(ea_cm_platform PUBLIC ${EA_CM_DIR}/platform)
target_compile_definitions(ea_cm_platform PRIVATE EA_CM_CPU_HZ=${EA_CM_CPU_HZ}u
                           EA_CM_BOARD_NAME="${EA_CM_BOARD}")
target_compile_options(ea_cm_platform PRIVATE -Wall -Wextra)

function(ea_cm_add_firmware name)
  cmake_parse_arguments(PARSE_ARGV 1 FW "" "" "SOURCES;LIBS;DEFINES")
  add_executable(${name} ${FW_SOURCES})
  # Platform objects linked directly: the vector table is only referenced by
  # the linker script / hardware.
  target_sources(${name} PRIVATE $<TARGET_OBJECTS:ea_cm_platform>)
  target_include_directories(${name} PRIVATE ${EA_CM_DIR}/platform)
  target_link_libraries(${name} PRIVATE ${FW_LIBS})
  target_compile_definitions(${name} PRIVATE ${FW_DEFINES})
  target_compile_options(${name} PRIVATE -Wall -Wextra)
  target_link_options(${name} PRIVATE -L${EA_CM_DIR}/ld -T${EA_CM_DIR}/ld/${EA_CM_BOARD}.ld
                      -Wl,-Map=$<TARGET_FILE_DIR:${name}>/${name}.map)
  set_target_properties(${name} PROPERTIES LINK_DEPENDS
                        "${EA_CM_DIR}/ld/${EA_CM_BOARD}.ld;${EA_CM_DIR}/ld/sections.ld")
endfunction()

# ea_cm_add_test(NAME TARGET): runs the firmware under qemu (CMAKE_CROSSCOMPILING_EMULATOR).
function(ea_cm_add_test name target)
  add_test(NAME ${name} COMMAND ${target})
  set_tests_properties(${name} PROPERTIES TIMEOUT 30
                       FAIL_REGULAR_EXPRESSION "FAULT|[1-9][0-9]* failed")
endfunction()
