# ea_cm_add_firmware(NAME SOURCES src... [LIBS lib...] [DEFINES def...]
# [KINDS kind...]): a bare-metal ELF for
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

# KINDS kind...: link only these layer kinds (names of
# runtime/include/edgeattn/layer_kinds.def), as a runtime configured with
# EA_LAYER_KINDS would, without a build tree of its own: the runtime's kind
# table (runtime/src/layers/registry.cc) is compiled for these kinds into the
# firmware, which the linker reads before libedgeattn_runtime.a, so the
# archive's table of every kind is never pulled in, nor are the other kinds'
# modules and the kernel families only they call (dispatch.h). A model with
# another kind is refused at load (EA_UNSUPPORTED, naming the kind).
function(ea_cm_add_firmware name)
  cmake_parse_arguments(PARSE_ARGV 1 FW "" "" "SOURCES;LIBS;DEFINES;KINDS")
  add_executable(${name} ${FW_SOURCES})
  if(FW_KINDS)
    get_property(all_kinds GLOBAL PROPERTY EA_ALL_LAYER_KINDS)
    foreach(kind IN LISTS FW_KINDS)
      if(NOT kind IN_LIST all_kinds)
        message(FATAL_ERROR "${name}: KINDS: unknown layer kind '${kind}' (known: ${all_kinds})")
      endif()
    endforeach()
    string(REPLACE ";" "," kinds_built "${FW_KINDS}")
    add_library(${name}_kinds OBJECT ${EA_ROOT}/runtime/src/layers/registry.cc)
    target_link_libraries(${name}_kinds PRIVATE edgeattn_runtime)
    # The runtime's own definitions (EA_THREAD_POOL, ...), then the kinds.
    target_compile_definitions(${name}_kinds PRIVATE $<TARGET_PROPERTY:edgeattn_runtime,COMPILE_DEFINITIONS>
                               "EA_LAYER_KINDS_BUILT=\"${kinds_built}\"")
    target_sources(${name} PRIVATE $<TARGET_OBJECTS:${name}_kinds>)
  endif()
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
