# Cortex-M kernels, chosen at compile time from the target's ACLE feature
# macros (no run-time detection on bare metal):
#   __ARM_FEATURE_MVE (Cortex-M55/M85, Helium)  -> path "helium"
#   __ARM_FEATURE_DSP (Cortex-M4/M7/M33/M55)    -> path "cmsis-dsp"
# Sources compile to nothing where their feature is absent. qs8_linear (and
# qs8_linear_res, the same kernel with the residual in its epilogue), the
# score row (Q.K^T), the integer softmax and the weighted sum (P.V) of
# qs8_attention, and the score row and weighted sum of qs8_additive have ISA
# versions (the DSP additive score row is the reference loop with 32-bit
# requantization, Helium's a vector loop), with requant_cm.h's 32-bit
# requantization; the transformer blocks' LayerNorm and activation table
# have ISA versions in block_cm.cc; the additive layers'
# softmax (the reference driver's) and every f32 entry are the reference
# functions. Included by
# kernels/CMakeLists.txt (paths relative to kernels/).
set(_ea_cm_dir ${CMAKE_CURRENT_LIST_DIR})
list(APPEND EA_KERNEL_SOURCES ${_ea_cm_dir}/linear_dsp.cc ${_ea_cm_dir}/linear_helium.cc
     ${_ea_cm_dir}/attention_cm.cc ${_ea_cm_dir}/softmax_cm.cc ${_ea_cm_dir}/block_cm.cc)
set(EA_CPU_FEATURES_SOURCE ${_ea_cm_dir}/cpu_features_cortexm.cc)
list(APPEND EA_KERNEL_DEFINITIONS EA_KERNELS_CORTEX_M=1)
