# ea_cm_add_firmware(NAME SOURCES src... [LIBS lib...] [DEFINES def...]
# [KINDS kind...] [RUNTIME_DEFINES def...]): a bare-metal ELF for
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
#
# RUNTIME_DEFINES def...: the firmware links a runtime of its own, built from
# the same sources with these build options in place of the tree's (e.g.
# EA_WITH_INT16_STREAM=0), instead of edgeattn_runtime: one firmware can
# leave a path out while the others in the tree keep it.
function(ea_cm_add_firmware name)
  cmake_parse_arguments(PARSE_ARGV 1 FW "" "" "SOURCES;LIBS;DEFINES;KINDS;RUNTIME_DEFINES")
  add_executable(${name} ${FW_SOURCES})
  set(runtime edgeattn_runtime)
  if(FW_RUNTIME_DEFINES)
    set(runtime edgeattn_runtime_${name})
    get_target_property(sources edgeattn_runtime SOURCES)
    list(TRANSFORM sources PREPEND ${EA_ROOT}/runtime/ REGEX "^[^/]")  # target_sources() made the kind modules absolute
    add_library(${runtime} STATIC EXCLUDE_FROM_ALL ${sources})
    target_include_directories(${runtime} PUBLIC ${EA_ROOT}/runtime/include)
    target_link_libraries(${runtime} PUBLIC edgeattn_kernels edgeattn_schema)
    target_compile_options(${runtime} PRIVATE $<TARGET_PROPERTY:edgeattn_runtime,COMPILE_OPTIONS>)
    # The runtime's definitions, but those named here.
    set(names)
    foreach(def IN LISTS FW_RUNTIME_DEFINES)
      string(REGEX REPLACE "=.*" "" def_name "${def}")
      list(APPEND names ${def_name})
    endforeach()
    list(JOIN names "|" names)
    target_compile_definitions(${runtime} PRIVATE ${FW_RUNTIME_DEFINES}
      "$<FILTER:$<TARGET_PROPERTY:edgeattn_runtime,COMPILE_DEFINITIONS>,EXCLUDE,^(${names})(=|$)>")
    list(TRANSFORM FW_LIBS REPLACE "^edgeattn_runtime$" ${runtime})
  endif()
  if(FW_KINDS)
    get_property(all_kinds GLOBAL PROPERTY EA_ALL_LAYER_KINDS)
    foreach(kind IN LISTS FW_KINDS)
      if(NOT kind IN_LIST all_kinds)
        message(FATAL_ERROR "${name}: KINDS: unknown layer kind '${kind}' (known: ${all_kinds})")
      endif()
    endforeach()
    string(REPLACE ";" "," kinds_built "${FW_KINDS}")
    add_library(${name}_kinds OBJECT ${EA_ROOT}/runtime/src/layers/registry.cc)
    target_link_libraries(${name}_kinds PRIVATE ${runtime})
    # The runtime's own definitions (EA_THREAD_POOL, ...), then the kinds.
    target_compile_definitions(${name}_kinds PRIVATE $<TARGET_PROPERTY:${runtime},COMPILE_DEFINITIONS>
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
