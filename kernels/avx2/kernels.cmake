# AVX2+FMA kernels and the AVX-VNNI int8 dot-product file for x86-64.
# Included by kernels/CMakeLists.txt; ISA flags go on these files only (never
# globally, never -march=native): the rest of the library stays baseline
# x86-64, and cpu_features_x86.cc picks a table after cpuid/xgetbv checks.
set(_ea_avx2_dir ${CMAKE_CURRENT_LIST_DIR})
set(_ea_avx2_sources
  ${_ea_avx2_dir}/linear.cc
  ${_ea_avx2_dir}/attention.cc
  ${_ea_avx2_dir}/additive.cc
  ${_ea_avx2_dir}/block.cc)
set_source_files_properties(${_ea_avx2_sources} PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma")
# Only this file may contain VPDPBUSD (VEX); reached after the AVX-VNNI check.
set_source_files_properties(${_ea_avx2_dir}/avxvnni.cc PROPERTIES
  COMPILE_OPTIONS "-mavx2;-mfma;-mavxvnni")
# The ymm tiled attention with VEX VPDPBUSD; reached after the AVX-VNNI check.
set_source_files_properties(${_ea_avx2_dir}/attention_tile_avxvnni.cc PROPERTIES
  COMPILE_OPTIONS "-mavx2;-mfma;-mavxvnni")
# The zmm GEMM microkernel of the int8 linear; reached after the AVX512-VNNI
# (F, BW, VL, VNNI) check.
set_source_files_properties(${_ea_avx2_dir}/linear_avx512vnni.cc PROPERTIES
  COMPILE_OPTIONS "-mavx2;-mfma;-mavx512f;-mavx512bw;-mavx512vl;-mavx512vnni")
# The zmm attention row primitives; reached after the same check. No DQ:
# nothing there needs it, and the cpuid check does not include it.
set_source_files_properties(${_ea_avx2_dir}/attention_avx512vnni.cc PROPERTIES
  COMPILE_OPTIONS "-mavx2;-mfma;-mavx512f;-mavx512bw;-mavx512vl;-mavx512vnni")
# The tiled attention (zmm Q.K and P.V tiles); same check.
set_source_files_properties(${_ea_avx2_dir}/attention_tile_avx512vnni.cc PROPERTIES
  COMPILE_OPTIONS "-mavx2;-mfma;-mavx512f;-mavx512bw;-mavx512vl;-mavx512vnni")
# The transformer-block kernels on zmm (LayerNorm, activation table); same
# check (they need F, BW and VL only).
set_source_files_properties(${_ea_avx2_dir}/block_avx512.cc PROPERTIES
  COMPILE_OPTIONS "-mavx2;-mfma;-mavx512f;-mavx512bw;-mavx512vl;-mavx512vnni")
# The activation table with VPERMI2B: reached from the AVX512-VNNI path only
# after its own cpuid check for AVX512_VBMI (cpu_has_avx512vbmi()).
set_source_files_properties(${_ea_avx2_dir}/lut_avx512vbmi.cc PROPERTIES
  COMPILE_OPTIONS "-mavx2;-mfma;-mavx512f;-mavx512bw;-mavx512vl;-mavx512vnni;-mavx512vbmi")
list(APPEND EA_KERNEL_SOURCES ${_ea_avx2_sources} ${_ea_avx2_dir}/avxvnni.cc
     ${_ea_avx2_dir}/attention_tile_avxvnni.cc
     ${_ea_avx2_dir}/linear_avx512vnni.cc
     ${_ea_avx2_dir}/attention_avx512vnni.cc
     ${_ea_avx2_dir}/attention_tile_avx512vnni.cc
     ${_ea_avx2_dir}/block_avx512.cc
     ${_ea_avx2_dir}/lut_avx512vbmi.cc)
set(EA_CPU_FEATURES_SOURCE ${CMAKE_CURRENT_SOURCE_DIR}/cpu_features_x86.cc)
list(APPEND EA_KERNEL_DEFINITIONS EA_KERNELS_X86=1)
