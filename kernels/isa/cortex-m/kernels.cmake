# Cortex-M kernels, chosen at compile time from the target's ACLE feature
# macros (no run-time detection on bare metal):
#   __ARM_FEATURE_MVE (Cortex-M55/M85, Helium)  -> path "helium"
#   __ARM_FEATURE_DSP (Cortex-M4/M7/M33/M55)    -> path "cmsis-dsp"
# Each variant file compiles to nothing where its feature is absent (the DSP
# softmax, LayerNorm, activation table and linear also on Helium builds,
# where the cmsis-dsp table is a fallback: EA_CM_DSP_ONLY in cortexm.h).
# qs8_linear (and qs8_linear_res, the same kernel with the residual in its
# epilogue), the score row (Q.K^T), the integer softmax and the weighted sum
# (P.V) of qs8_attention, the score row and weighted sum of qs8_additive,
# and the transformer blocks' LayerNorm and activation table have Cortex-M
# variants, with requant_cm.h's 32-bit requantization; the additive layers'
# softmax (the reference driver's) and every f32 entry are the reference
# functions. Included by kernels/CMakeLists.txt; no per-file flags (the
# firmware's -mcpu is the whole build's).
set(_ea_k ${CMAKE_CURRENT_SOURCE_DIR})
list(APPEND EA_KERNEL_SOURCES
  ${_ea_k}/isa/cortex-m/prob_normalizer_cm.cc
  ${_ea_k}/isa/cortex-m/linear_dsp_tile.cc
  ${_ea_k}/isa/cortex-m/linear_helium_tile.cc
  ${_ea_k}/qs8-linear/qs8-linear-dsp.cc
  ${_ea_k}/qs8-linear/qs8-linear-helium.cc
  ${_ea_k}/qs8-linear-res/qs8-linear-res-dsp.cc
  ${_ea_k}/qs8-linear-res/qs8-linear-res-helium.cc
  ${_ea_k}/qs8-linear-res16/qs8-linear-res16-dsp.cc
  ${_ea_k}/qs8-linear-res16/qs8-linear-res16-helium.cc
  ${_ea_k}/qs16-layernorm/qs16-layernorm-dsp.cc
  ${_ea_k}/qs16-layernorm/qs16-layernorm-helium.cc
  ${_ea_k}/qs8-qk-row/qs8-qk-row-dsp.cc
  ${_ea_k}/qs8-qk-row/qs8-qk-row-helium.cc
  ${_ea_k}/qs8-softmax-exp-row/qs8-softmax-exp-row-dsp.cc
  ${_ea_k}/qs8-softmax-exp-row/qs8-softmax-exp-row-helium.cc
  ${_ea_k}/qs8-softmax-row/qs8-softmax-row-dsp.cc
  ${_ea_k}/qs8-softmax-row/qs8-softmax-row-helium.cc
  ${_ea_k}/qs8-pv-row/qs8-pv-row-dsp.cc
  ${_ea_k}/qs8-pv-row/qs8-pv-row-helium.cc
  ${_ea_k}/qs8-attention/qs8-attention-dsp.cc
  ${_ea_k}/qs8-attention/qs8-attention-helium.cc
  ${_ea_k}/qs8-additive/qs8-additive-dsp.cc
  ${_ea_k}/qs8-additive/qs8-additive-helium.cc
  ${_ea_k}/qs8-layernorm/qs8-layernorm-dsp.cc
  ${_ea_k}/qs8-layernorm/qs8-layernorm-helium.cc
  ${_ea_k}/qs8-lut/qs8-lut-dsp.cc
  ${_ea_k}/qs8-lut/qs8-lut-helium.cc
  ${_ea_k}/qs16-narrow/qs16-narrow-dsp.cc
  ${_ea_k}/qs16-narrow/qs16-narrow-helium.cc
  ${_ea_k}/qs8-add/qs8-add-helium.cc
  ${_ea_k}/qs8-add16/qs8-add16-dsp.cc
  ${_ea_k}/qs8-add16/qs8-add16-helium.cc)
set(EA_CPU_FEATURES_SOURCE ${_ea_k}/cpu_features_cortexm.cc)
# The M4 projections' stack buffer of sign-extended weights (linear_dsp.h):
# up to this many bytes, 32 per input of the widest layer that uses it;
# lower it to trade instructions for stack, 0 to turn it off.
set(EA_CM_DSP_WIDE_BYTES 8192 CACHE STRING "Cortex-M DSP: stack bytes for widened projection weights (0: off)")
list(APPEND EA_KERNEL_DEFINITIONS EA_CM_DSP_WIDE_BYTES=${EA_CM_DSP_WIDE_BYTES})
list(APPEND EA_KERNEL_DEFINITIONS EA_KERNELS_CORTEX_M=1)
