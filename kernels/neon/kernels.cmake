# NEON kernels for Armv7-A (hard float, -mfpu=neon) and AArch64, plus the
# Armv8.2-A dot-product file on AArch64. Included by kernels/CMakeLists.txt;
# paths are relative to kernels/. ISA flags go on these files only.
set(_ea_neon_dir ${CMAKE_CURRENT_LIST_DIR})
set(_ea_neon_sources
  ${_ea_neon_dir}/linear.cc
  ${_ea_neon_dir}/attention.cc
  ${_ea_neon_dir}/attention_tile.cc
  ${_ea_neon_dir}/additive.cc
  ${_ea_neon_dir}/block.cc)
list(APPEND EA_KERNEL_DEFINITIONS EA_KERNELS_NEON=1)
if(EA_KERNEL_ARCH STREQUAL "aarch64")
  list(APPEND EA_KERNEL_DEFINITIONS EA_KERNELS_NEON_DOT=1)
  list(APPEND _ea_neon_sources ${_ea_neon_dir}/neondot.cc ${_ea_neon_dir}/dotprod.cc)
  # Only this file may contain SDOT; it is reached after an HWCAP check.
  set_source_files_properties(${_ea_neon_dir}/dotprod.cc PROPERTIES
    COMPILE_OPTIONS "-march=armv8.2-a+dotprod")
else()
  # Armv7-A: the toolchain normally passes -mfpu=neon already; make sure the
  # NEON files get it (Armv7 NEON is not probed at run time).
  set_source_files_properties(${_ea_neon_sources} PROPERTIES COMPILE_OPTIONS "-mfpu=neon")
endif()
list(APPEND EA_KERNEL_SOURCES ${_ea_neon_sources})
set(EA_CPU_FEATURES_SOURCE ${CMAKE_CURRENT_SOURCE_DIR}/cpu_features_arm.cc)
