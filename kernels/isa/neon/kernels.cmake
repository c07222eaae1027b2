# NEON kernels for Armv7-A (hard float, -mfpu=neon) and AArch64, plus the
# Armv8.2-A dot-product (SDOT) files on AArch64. Included by
# kernels/CMakeLists.txt. ISA flags go on these files only.
set(_ea_k ${CMAKE_CURRENT_SOURCE_DIR})
set(_ea_neon_sources
  ${_ea_k}/isa/neon/linear_neon.cc
  ${_ea_k}/qs8-linear/qs8-linear-neon.cc
  ${_ea_k}/qs8-linear-res/qs8-linear-res-neon.cc
  ${_ea_k}/qs8-linear-res16/qs8-linear-res16-neon.cc
  ${_ea_k}/f32-linear/f32-linear-neon.cc
  ${_ea_k}/qs8-qk-row/qs8-qk-row-neon.cc
  ${_ea_k}/qs8-softmax-exp-row/qs8-softmax-exp-row-neon.cc
  ${_ea_k}/qs8-softmax-row/qs8-softmax-row-neon.cc
  ${_ea_k}/qs8-pv-row/qs8-pv-row-neon.cc
  ${_ea_k}/qs8-attention-tile/qs8-pv-rows-neon.cc
  ${_ea_k}/qs8-attention-tile/qs8-attention-tile-stages-neon.cc
  ${_ea_k}/qs8-attention/qs8-attention-neon.cc
  ${_ea_k}/f32-attention/f32-attention-neon.cc
  ${_ea_k}/qs8-additive/qs8-additive-neon.cc
  ${_ea_k}/f32-additive/f32-additive-neon.cc
  ${_ea_k}/qs8-layernorm/qs8-layernorm-neon.cc
  ${_ea_k}/qs16-layernorm/qs16-layernorm-neon.cc
  ${_ea_k}/qs8-lut/qs8-lut-neon.cc
  ${_ea_k}/qs16-narrow/qs16-narrow-neon.cc
  ${_ea_k}/qs8-add/qs8-add-neon.cc
  ${_ea_k}/qs8-add16/qs8-add16-neon.cc)
list(APPEND EA_KERNEL_DEFINITIONS EA_KERNELS_NEON=1)
if(EA_KERNEL_ARCH STREQUAL "aarch64")
  list(APPEND EA_KERNEL_DEFINITIONS EA_KERNELS_NEON_DOT=1)
  # The neondot table entries: baseline flags (they call the SDOT files
  # through isa/neondot/sdot.h after the HWCAP check).
  list(APPEND _ea_neon_sources
    ${_ea_k}/qs8-linear/qs8-linear-neondot.cc
    ${_ea_k}/qs8-linear-res/qs8-linear-res-neondot.cc
    ${_ea_k}/qs8-linear-res16/qs8-linear-res16-neondot.cc
    ${_ea_k}/qs8-attention/qs8-attention-neondot.cc
    ${_ea_k}/qs8-attention-tile/qs8-attention-tile-stages-neondot.cc)
  # Only these files may contain SDOT/UDOT; they are reached after an HWCAP
  # check and include no project header with inline functions.
  set(_ea_sdot_sources
    ${_ea_k}/qs8-linear/qs8-linear-rq-neondot.cc
    ${_ea_k}/qs8-linear-res/qs8-linear-res-rq-neondot.cc
    ${_ea_k}/qs8-qk-row/qs8-qk-row-neondot.cc
    ${_ea_k}/qs8-attention-tile/qs8-attn-qk-tile-neondot.cc
    ${_ea_k}/qs8-attention-tile/qs8-attn-pv-tile-neondot.cc)
  set_source_files_properties(${_ea_sdot_sources} PROPERTIES COMPILE_OPTIONS "-march=armv8.2-a+dotprod")
  list(APPEND _ea_neon_sources ${_ea_sdot_sources})
else()
  # Armv7-A: the toolchain normally passes -mfpu=neon already; make sure the
  # NEON files get it (Armv7 NEON is not probed at run time).
  set_source_files_properties(${_ea_neon_sources} PROPERTIES COMPILE_OPTIONS "-mfpu=neon")
endif()
list(APPEND EA_KERNEL_SOURCES ${_ea_neon_sources})
set(EA_CPU_FEATURES_SOURCE ${_ea_k}/cpu_features_arm.cc)
