// The prototypes of every microkernel variant, declared by the lists: each
// line EA_UKERNEL(path, function) of kernels/lists/<family>.inc declares
// the function with its family's signature (the function type behind the
// family's pointer type in dispatch.h), so a variant needs no header of its
// own. Included by microkernels.cc (the tables) and by variants that call
// another listed variant (e.g. qs8_attention__dsp runs qs8_qk_row__dsp).
//
// Not for files compiled with wider ISA flags that must include no project
// header with inline functions (the SDOT files, see kernels/isa/neondot/).
#ifndef EDGEATTN_KERNELS_MICROKERNELS_H_
#define EDGEATTN_KERNELS_MICROKERNELS_H_

#include <type_traits>

#include "edgeattn/kernels/attention_tile.h"
#include "edgeattn/kernels/dispatch.h"

// Which lines of the lists are in this build: set per architecture by
// kernels/<isa>/kernels.cmake (EA_KERNEL_DEFINITIONS); the Cortex-M paths
// follow the compiler's ACLE feature macros.
#ifndef EA_KERNELS_X86
#define EA_KERNELS_X86 0
#endif
#ifndef EA_KERNELS_NEON
#define EA_KERNELS_NEON 0
#endif
#ifndef EA_KERNELS_NEON_DOT
#define EA_KERNELS_NEON_DOT 0
#endif
#ifndef EA_KERNELS_CORTEX_M
#define EA_KERNELS_CORTEX_M 0
#endif
#ifndef EA_INT8_ONLY
#define EA_INT8_ONLY 0
#endif
#if EA_KERNELS_CORTEX_M && defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#define EA_KERNELS_CM_DSP 1
#else
#define EA_KERNELS_CM_DSP 0
#endif
#if EA_KERNELS_CORTEX_M && defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#define EA_KERNELS_CM_HELIUM 1
#else
#define EA_KERNELS_CM_HELIUM 0
#endif

namespace edgeattn {
namespace kernels {

// The function type a family's pointer type points to: `Sig f;` declares f.
template <class FnPointer>
using MicrokernelSignature = std::remove_pointer_t<FnPointer>;

#define EA_UKERNEL(path, fn) MicrokernelSignature<Qs8LinearFn> fn;
#include "lists/qs8_linear.inc"
#undef EA_UKERNEL
#define EA_UKERNEL(path, fn) MicrokernelSignature<Qs8LinearResFn> fn;
#include "lists/qs8_linear_res.inc"
#undef EA_UKERNEL
#define EA_UKERNEL(path, fn) MicrokernelSignature<F32LinearFn> fn;
#include "lists/f32_linear.inc"
#undef EA_UKERNEL
#define EA_UKERNEL(path, fn) MicrokernelSignature<Qs8AttentionFn> fn;
#include "lists/qs8_attention.inc"
#undef EA_UKERNEL
#define EA_UKERNEL(path, fn) MicrokernelSignature<F32AttentionFn> fn;
#include "lists/f32_attention.inc"
#undef EA_UKERNEL
#define EA_UKERNEL(path, fn) MicrokernelSignature<Qs8AdditiveFn> fn;
#include "lists/qs8_additive.inc"
#undef EA_UKERNEL
#define EA_UKERNEL(path, fn) MicrokernelSignature<F32AdditiveFn> fn;
#include "lists/f32_additive.inc"
#undef EA_UKERNEL
#define EA_UKERNEL(path, fn) MicrokernelSignature<Qs8QkRowFn> fn;
#include "lists/qs8_qk_row.inc"
#undef EA_UKERNEL
#define EA_UKERNEL(path, fn) MicrokernelSignature<Qs8SoftmaxRowFn> fn;
#include "lists/qs8_softmax_row.inc"
#undef EA_UKERNEL
#define EA_UKERNEL(path, fn) MicrokernelSignature<Qs8SoftmaxExpRowFn> fn;
#include "lists/qs8_softmax_exp_row.inc"
#undef EA_UKERNEL
#define EA_UKERNEL(path, fn) MicrokernelSignature<Qs8PvRowFn> fn;
#include "lists/qs8_pv_row.inc"
#undef EA_UKERNEL
#define EA_UKERNEL(path, fn) MicrokernelSignature<Qs8AttnTileStagesFn> fn;
#include "lists/qs8_attention_tile.inc"
#undef EA_UKERNEL
#define EA_UKERNEL(path, fn) MicrokernelSignature<Qs8LayerNormFn> fn;
#include "lists/qs8_layernorm.inc"
#undef EA_UKERNEL
#define EA_UKERNEL(path, fn) MicrokernelSignature<F32LayerNormFn> fn;
#include "lists/f32_layernorm.inc"
#undef EA_UKERNEL
#define EA_UKERNEL(path, fn) MicrokernelSignature<F32AddFn> fn;
#include "lists/f32_add.inc"
#undef EA_UKERNEL
#define EA_UKERNEL(path, fn) MicrokernelSignature<Qs8LutFn> fn;
#include "lists/qs8_lut.inc"
#undef EA_UKERNEL
#define EA_UKERNEL(path, fn) MicrokernelSignature<F32ActivationFn> fn;
#include "lists/f32_activation.inc"
#undef EA_UKERNEL
#define EA_UKERNEL(path, fn) MicrokernelSignature<Qs8LinearRes16Fn> fn;
#include "lists/qs8_linear_res16.inc"
#undef EA_UKERNEL
#define EA_UKERNEL(path, fn) MicrokernelSignature<Qs16LayerNormFn> fn;
#include "lists/qs16_layernorm.inc"
#undef EA_UKERNEL
#define EA_UKERNEL(path, fn) MicrokernelSignature<Qs16NarrowFn> fn;
#include "lists/qs16_narrow.inc"
#undef EA_UKERNEL
#define EA_UKERNEL(path, fn) MicrokernelSignature<Qs8AddFn> fn;
#include "lists/qs8_add.inc"
#undef EA_UKERNEL
#define EA_UKERNEL(path, fn) MicrokernelSignature<Qs8Add16Fn> fn;
#include "lists/qs8_add16.inc"
#undef EA_UKERNEL

// The paths in this build by slot, 0..(paths built - 1), the order of the
// per-family tables (microkernels.cc): a path's slot (-1: not built), a
// slot's path, and the slot in use (dispatch.cc: chosen on first call).
int path_slot(KernelPath path);
KernelPath slot_path(int slot);
int active_slot();

}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_MICROKERNELS_H_
