# The x86-64 variants: AVX2+FMA, AVX-VNNI and AVX-512 VNNI (kernels/<family>/
# *-avx2.cc, *-avxvnni.cc, *-avx512*.cc) and their building blocks here in
# isa/x86/. Included by kernels/CMakeLists.txt; ISA flags go on these files
# only (never globally, never -march=native): the rest of the library stays
# baseline x86-64, and cpu_features_x86.cc picks a table after cpuid/xgetbv
# checks.
set(_ea_k ${CMAKE_CURRENT_SOURCE_DIR})
set(_ea_avx2_sources
  ${_ea_k}/isa/x86/linear_avx2.cc
  ${_ea_k}/isa/x86/attention_avx2.cc
  ${_ea_k}/qs8-linear/qs8-linear-avx2.cc
  ${_ea_k}/qs8-linear-res/qs8-linear-res-avx2.cc
  ${_ea_k}/qs8-linear-res16/qs8-linear-res16-avx2.cc
  ${_ea_k}/f32-linear/f32-linear-avx2.cc
  ${_ea_k}/qs8-qk-row/qs8-qk-row-avx2.cc
  ${_ea_k}/qs8-softmax-exp-row/qs8-softmax-exp-row-avx2.cc
  ${_ea_k}/qs8-softmax-row/qs8-softmax-row-avx2.cc
  ${_ea_k}/qs8-pv-row/qs8-pv-row-avx2.cc
  ${_ea_k}/qs8-attention/qs8-attention-avx2.cc
  ${_ea_k}/f32-attention/f32-attention-avx2.cc
  ${_ea_k}/qs8-additive/qs8-additive-avx2.cc
  ${_ea_k}/f32-additive/f32-additive-avx2.cc
  ${_ea_k}/qs8-layernorm/qs8-layernorm-avx2.cc
  ${_ea_k}/qs16-layernorm/qs16-layernorm-avx2.cc
  ${_ea_k}/qs8-lut/qs8-lut-avx2.cc
  ${_ea_k}/qs16-narrow/qs16-narrow-avx2.cc
  ${_ea_k}/qs8-add/qs8-add-avx2.cc
  ${_ea_k}/qs8-add16/qs8-add16-avx2.cc)
set_source_files_properties(${_ea_avx2_sources} PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma")
# Only these files may contain VPDPBUSD (VEX); reached after the AVX-VNNI
# check. (The table entries among them hold no VNNI instruction themselves.)
set(_ea_avxvnni_sources
  ${_ea_k}/isa/x86/linear_avxvnni.cc
  ${_ea_k}/qs8-linear/qs8-linear-avxvnni.cc
  ${_ea_k}/qs8-linear-res/qs8-linear-res-avxvnni.cc
  ${_ea_k}/qs8-linear-res16/qs8-linear-res16-avxvnni.cc
  ${_ea_k}/qs8-attention/qs8-attention-avxvnni.cc
  ${_ea_k}/qs8-attention/qs8-attention-tiled-avxvnni.cc
  ${_ea_k}/qs8-attention-tile/qs8-attention-tile-stages-avxvnni.cc)
set_source_files_properties(${_ea_avxvnni_sources} PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma;-mavxvnni")
# The zmm kernels; reached after the AVX512-VNNI (F, BW, VL, VNNI) check. No
# DQ: nothing here needs it, and the cpuid check does not include it.
set(_ea_avx512_sources
  ${_ea_k}/qs8-linear/qs8-linear-avx512vnni.cc
  ${_ea_k}/qs8-linear-res/qs8-linear-res-avx512vnni.cc
  ${_ea_k}/qs8-linear-res16/qs8-linear-res16-avx512vnni.cc
  ${_ea_k}/qs8-qk-row/qs8-qk-row-avx512vnni.cc
  ${_ea_k}/qs8-softmax-exp-row/qs8-softmax-exp-row-avx512vnni.cc
  ${_ea_k}/qs8-softmax-row/qs8-softmax-row-avx512vnni.cc
  ${_ea_k}/qs8-attention/qs8-attention-avx512vnni.cc
  ${_ea_k}/qs8-attention/qs8-attention-tiled-avx512vnni.cc
  ${_ea_k}/qs8-attention-tile/qs8-attention-tile-stages-avx512vnni.cc
  ${_ea_k}/qs8-layernorm/qs8-layernorm-avx512vnni.cc
  ${_ea_k}/qs16-layernorm/qs16-layernorm-avx512vnni.cc
  ${_ea_k}/qs8-lut/qs8-lut-avx512bw.cc
  ${_ea_k}/qs8-lut/qs8-lut-avx512vnni.cc
  ${_ea_k}/qs16-narrow/qs16-narrow-avx512bw.cc
  ${_ea_k}/qs8-add/qs8-add-avx512bw.cc
  ${_ea_k}/qs8-add16/qs8-add16-avx512bw.cc)
# GCC 12 warns inside its own AVX-512 headers, where the mask and set
# intrinsics pass _mm512_undefined_*() as a don't-care operand (GCC bug
# 105593, fixed in GCC 13): a false positive in every zmm file, so it is
# silenced for these files only, and only for GCC.
set(_ea_zmm_quiet "$<$<CXX_COMPILER_ID:GNU>:-Wno-maybe-uninitialized;-Wno-uninitialized>")
set_source_files_properties(${_ea_avx512_sources} PROPERTIES
  COMPILE_OPTIONS "-mavx2;-mfma;-mavx512f;-mavx512bw;-mavx512vl;-mavx512vnni;${_ea_zmm_quiet}")
# The activation table with VPERMI2B: reached from the AVX512-VNNI path only
# after its own cpuid check for AVX512_VBMI (cpu_has_avx512vbmi()).
set_source_files_properties(${_ea_k}/qs8-lut/qs8-lut-avx512vbmi.cc PROPERTIES
  COMPILE_OPTIONS "-mavx2;-mfma;-mavx512f;-mavx512bw;-mavx512vl;-mavx512vnni;-mavx512vbmi;${_ea_zmm_quiet}")
# The AMX-INT8 GEMMs: reached after cpu_supports(kAmx) (cpuid, XCR0 and
# Linux's permission for the tile data state).
set(_ea_amx_sources
  ${_ea_k}/qs8-linear/qs8-linear-amx.cc
  ${_ea_k}/qs8-linear-res/qs8-linear-res-amx.cc
  ${_ea_k}/qs8-linear-res16/qs8-linear-res16-amx.cc)
set_source_files_properties(${_ea_amx_sources} PROPERTIES
  COMPILE_OPTIONS "-mavx2;-mfma;-mavx512f;-mavx512bw;-mavx512vl;-mavx512vnni;-mamx-tile;-mamx-int8;${_ea_zmm_quiet}")
list(APPEND EA_KERNEL_SOURCES ${_ea_avx2_sources} ${_ea_avxvnni_sources} ${_ea_avx512_sources}
     ${_ea_k}/qs8-lut/qs8-lut-avx512vbmi.cc ${_ea_amx_sources})
set(EA_CPU_FEATURES_SOURCE ${_ea_k}/cpu_features_x86.cc)
list(APPEND EA_KERNEL_DEFINITIONS EA_KERNELS_X86=1)
