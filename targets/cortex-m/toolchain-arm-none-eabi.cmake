# Bare-metal Cortex-M with Debian's arm-none-eabi GCC + newlib (nano), no heap.
#
#   cmake -S targets/cortex-m -B build/cortex-m/m4 \
#         -DCMAKE_TOOLCHAIN_FILE=targets/cortex-m/toolchain-arm-none-eabi.cmake \
#         -DEA_CM_BOARD=mps2-an386            # or mps3-an547 (Cortex-M55 + Helium)
#
# The CPU flags follow EA_CM_BOARD (cached, read here because the toolchain file
# runs before the project). Linking forbids the heap: every malloc/free entry
# point is --wrap'ed and no __wrap_* exists, no libstdc++/libsupc++ is linked
# (so operator new/delete and the exception machinery are undefined references).
set(CMAKE_SYSTEM_NAME Generic)
set(EA_CM_BOARD "mps2-an386" CACHE STRING "qemu board: mps2-an386 (Cortex-M4F) or mps3-an547 (Cortex-M55)")
if(EA_CM_BOARD STREQUAL "mps2-an386")
  set(CMAKE_SYSTEM_PROCESSOR cortex-m4)
  set(_ea_cpu "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16")
elseif(EA_CM_BOARD STREQUAL "mps3-an547")
  set(CMAKE_SYSTEM_PROCESSOR cortex-m55)
  set(_ea_cpu "-mcpu=cortex-m55 -mthumb -mfloat-abi=hard")
else()
  message(FATAL_ERROR "EA_CM_BOARD must be mps2-an386 or mps3-an547, got '${EA_CM_BOARD}'")
endif()

set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
set(CMAKE_AR arm-none-eabi-ar)
set(CMAKE_RANLIB arm-none-eabi-ranlib)
set(CMAKE_SIZE arm-none-eabi-size)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(_ea_common "${_ea_cpu} -ffunction-sections -fdata-sections")
set(CMAKE_C_FLAGS_INIT "${_ea_common}")
set(CMAKE_CXX_FLAGS_INIT
    "${_ea_common} -fno-exceptions -fno-rtti -fno-threadsafe-statics -fno-use-cxa-atexit")
set(CMAKE_ASM_FLAGS_INIT "${_ea_cpu}")
# -Os for every configuration: the size figures in docs/footprint.md are for -Os.
set(CMAKE_C_FLAGS_RELEASE_INIT "-Os -DNDEBUG")
set(CMAKE_CXX_FLAGS_RELEASE_INIT "-Os -DNDEBUG")
set(CMAKE_C_FLAGS_MINSIZEREL_INIT "-Os -DNDEBUG")
set(CMAKE_CXX_FLAGS_MINSIZEREL_INIT "-Os -DNDEBUG")

set(_ea_wrap "malloc,--wrap=calloc,--wrap=realloc,--wrap=free,--wrap=_malloc_r,--wrap=_calloc_r,--wrap=_realloc_r,--wrap=_free_r")
set(CMAKE_EXE_LINKER_FLAGS_INIT
    "-nostartfiles -nodefaultlibs --specs=nano.specs -Wl,--gc-sections -Wl,--wrap=${_ea_wrap}")
set(CMAKE_C_STANDARD_LIBRARIES "-Wl,--start-group -lc -lm -lgcc -Wl,--end-group")
set(CMAKE_CXX_STANDARD_LIBRARIES "-Wl,--start-group -lc -lm -lgcc -Wl,--end-group")
set(CMAKE_EXECUTABLE_SUFFIX ".elf")

set(CMAKE_FIND_ROOT_PATH /usr/lib/arm-none-eabi)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# CTest appends the .elf path: tests take no arguments. -icount shift=0 makes
# SysTick deterministic (1 instruction = 1 ns of guest time).
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-system-arm -M ${EA_CM_BOARD} -display none -monitor none
    -serial null -semihosting-config enable=on,target=native -icount shift=0 -kernel)
