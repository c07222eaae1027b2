// Kernel dispatch: one table of function pointers per instruction-set path,
// chosen once at run time (x86 cpuid, Arm HWCAP) or at compile time (bare
// metal). Every path computes the same int8 results as the reference.
//
// Override for tests and benchmarks: set_kernel_path(), or the environment
// variable EA_KERNEL_PATH=<name> (read once, at the first kernels() call, on
// hosted targets). An unsupported request falls back to the best path.
#ifndef EDGEATTN_KERNELS_DISPATCH_H_
#define EDGEATTN_KERNELS_DISPATCH_H_

#include <cstdint>

#include "edgeattn/kernels/ref.h"

namespace edgeattn {
namespace kernels {

enum class KernelPath : uint8_t {
  kRef = 0,     // portable scalar reference
  kAvx2,        // x86-64 AVX2 + FMA
  kAvxVnni,     // x86-64 AVX-VNNI (VEX VPDPBUSD) int8 dot products
  kAvx512Vnni,  // x86-64 AVX512-VNNI + VL (EVEX VPDPBUSD ymm) int8 dot products
  kNeon,        // Armv7-A / AArch64 Advanced SIMD
  kNeonDot,     // Armv8.2-A dot product (SDOT)
  kCortexMDsp,  // Cortex-M DSP extension (dual 16-bit MAC)
  kHelium,      // Cortex-M55 MVE
  kAmx,         // x86-64 AMX-INT8 tiles (TDPBSSD) for the int8 GEMMs, on top of kAvx512Vnni
  kCount
};

using Qs8LinearFn = void (*)(int rows, int out_features, int in_features, const int8_t* x,
                             int x_stride, const int8_t* w_packed, const int32_t* bias,
                             const int32_t* mult, const int32_t* shift, int per_channel,
                             int32_t y_zp, int8_t* y, int y_stride);
// qs8_linear with the residual in its epilogue (contract 5b, ref.h).
using Qs8LinearResFn = void (*)(int rows, int out_features, int in_features, const int8_t* x,
                                int x_stride, const int8_t* w_packed, const int32_t* bias,
                                const int32_t* mult, const int32_t* shift, int per_channel,
                                const QS8Residual& res, int8_t* y, int y_stride);
// qs8_linear with an int16 residual and int16 output (contract 5c, ref.h).
using Qs8LinearRes16Fn = void (*)(int rows, int out_features, int in_features, const int8_t* x,
                                  int x_stride, const int8_t* w_packed, const int32_t* bias,
                                  const int32_t* mult, const int32_t* shift, int per_channel,
                                  const QS16Residual& res, int16_t* y, int y_stride);
using F32LinearFn = void (*)(int rows, int out_features, int in_features, const float* x,
                             int x_stride, const float* w, int w_stride, const float* bias,
                             float* y, int y_stride);

// An int8-only build (CMake option EA_INT8_ONLY) leaves the float entries
// empty, so no float kernel (nor libm's expf/tanhf) is linked into firmware;
// the runtime then refuses float layers with EA_UNSUPPORTED at load.
#if defined(EA_INT8_ONLY) && EA_INT8_ONLY
#define EA_F32_KERNEL(fn) nullptr
#else
#define EA_F32_KERNEL(fn) fn
#endif

using Qs8AttentionFn = void (*)(const QS8AttentionArgs&);
using F32AttentionFn = void (*)(const F32AttentionArgs&);
using Qs8AdditiveFn = void (*)(const QS8AdditiveArgs&);
using F32AdditiveFn = void (*)(const F32AdditiveArgs&);

// The int8 attention row primitives (contracts of the __ref ones in ref.h):
// the steps the composite kernels are built from, listed too so the
// bit-exact tests and the per-stage benchmarks reach every variant.
using Qs8QkRowFn = void (*)(int n, int dim, const int8_t* q, int32_t q_zp, const int8_t* k,
                            int k_stride, int32_t k_zp, int32_t* scores);
using Qs8SoftmaxRowFn = void (*)(int n, const int32_t* scores, int32_t mult, int32_t shift,
                                 uint16_t* probs);
using Qs8SoftmaxExpRowFn = uint32_t (*)(int n, const int32_t* scores, int32_t mult, int32_t shift,
                                        uint16_t* e);
using Qs8PvRowFn = void (*)(int n, int v_dim, const uint16_t* probs, const int8_t* v,
                            int v_stride, int32_t v_zp, int32_t pv_mult, int32_t pv_shift,
                            int32_t out_zp, int8_t* out);

// The transformer-block primitives (contracts 4 and 6 of requant.h, ref.h).
using Qs8LayerNormFn = void (*)(const QS8LayerNormArgs&);
using Qs16LayerNormFn = void (*)(const QS16LayerNormArgs&);  // contract 4b
using F32LayerNormFn = void (*)(int rows, int dim, const float* x, int x_stride, float eps,
                                const float* gain, const float* bias, float* y, int y_stride);
using F32AddFn = void (*)(int rows, int n, const float* a, int a_stride, const float* b,
                          int b_stride, float* y, int y_stride);
using Qs8LutFn = void (*)(int rows, int n, const int8_t* x, int x_stride, const int8_t* table,
                          int8_t* y, int y_stride);
using F32ActivationFn = void (*)(int rows, int n, float* x, int x_stride, int32_t activation);
// The 16-bit stream's narrowing and the adds of branch-norm blocks and kind
// add (ref.h, requant.h add / add16), over n contiguous elements.
using Qs16NarrowFn = void (*)(size_t n, const int16_t* x, int32_t mult, int32_t shift, int32_t zp, int8_t* y);
using Qs8AddFn = void (*)(size_t n, const int8_t* x, const int8_t* r, const QS8AddParams& p, int8_t* y);
using Qs8Add16Fn = void (*)(size_t n, const int8_t* x, const int16_t* r, const QS8AddParams& p, int16_t* y);

// The stages of a tiling path's qs8_attention (attention_tile.h). Not in the
// KernelTable: the path's tiled qs8_attention runs them; the list exists so
// that each stage is tested and timed on its own.
struct Qs8AttnTileStages;
using Qs8AttnTileStagesFn = const Qs8AttnTileStages& (*)();

// One path's kernels, one per family: built from the microkernel lists
// below (kernels/microkernels.cc), never written by hand.
struct KernelTable {
  KernelPath path;
  const char* name;
  Qs8LinearFn qs8_linear;
  Qs8LinearResFn qs8_linear_res;
  F32LinearFn f32_linear;
  Qs8AttentionFn qs8_attention;
  F32AttentionFn f32_attention;
  Qs8AdditiveFn qs8_additive;
  F32AdditiveFn f32_additive;
  Qs8QkRowFn qs8_qk_row;
  Qs8SoftmaxRowFn qs8_softmax_row;
  Qs8SoftmaxExpRowFn qs8_softmax_exp_row;  // steps 1-4 of qs8_softmax_row
  Qs8PvRowFn qs8_pv_row;
  Qs8LayerNormFn qs8_layernorm;
  F32LayerNormFn f32_layernorm;
  F32AddFn f32_add;
  Qs8LutFn qs8_lut;
  F32ActivationFn f32_activation;
  Qs8LinearRes16Fn qs8_linear_res16;  // the 16-bit residual stream (issue 37)
  Qs16LayerNormFn qs16_layernorm;
  Qs16NarrowFn qs16_narrow;
  Qs8AddFn qs8_add;
  Qs8Add16Fn qs8_add16;
};

// One variant of a microkernel family: the path whose CPU check it needs and
// its function's name (e.g. "qs8_qk_row__avx512vnni").
template <class Fn>
struct Microkernel {
  KernelPath path;
  const char* name;
  Fn fn;
};

// Every variant of each family in this build, one list per family
// (kernels/lists/<family>.inc), the reference first, ending with an entry
// whose fn is null. A path's table takes the last variant of its own path
// or of a path it extends (avx2 under the VNNI paths, neon under neondot).
struct MicrokernelLists {
  const Microkernel<Qs8LinearFn>* qs8_linear;
  const Microkernel<Qs8LinearResFn>* qs8_linear_res;
  const Microkernel<F32LinearFn>* f32_linear;  // only the end entry when EA_INT8_ONLY
  const Microkernel<Qs8AttentionFn>* qs8_attention;
  const Microkernel<F32AttentionFn>* f32_attention;
  const Microkernel<Qs8AdditiveFn>* qs8_additive;
  const Microkernel<F32AdditiveFn>* f32_additive;
  const Microkernel<Qs8QkRowFn>* qs8_qk_row;
  const Microkernel<Qs8SoftmaxRowFn>* qs8_softmax_row;
  const Microkernel<Qs8SoftmaxExpRowFn>* qs8_softmax_exp_row;
  const Microkernel<Qs8PvRowFn>* qs8_pv_row;
  const Microkernel<Qs8AttnTileStagesFn>* qs8_attention_tile;  // tiling paths only, no reference
  const Microkernel<Qs8LayerNormFn>* qs8_layernorm;
  const Microkernel<F32LayerNormFn>* f32_layernorm;  // the f32 lists: only the end entry when EA_INT8_ONLY
  const Microkernel<F32AddFn>* f32_add;
  const Microkernel<Qs8LutFn>* qs8_lut;
  const Microkernel<F32ActivationFn>* f32_activation;
  const Microkernel<Qs8LinearRes16Fn>* qs8_linear_res16;
  const Microkernel<Qs16LayerNormFn>* qs16_layernorm;
  const Microkernel<Qs16NarrowFn>* qs16_narrow;
  const Microkernel<Qs8AddFn>* qs8_add;
  const Microkernel<Qs8Add16Fn>* qs8_add16;
};
const MicrokernelLists& microkernel_lists();

// The table in use (selected on first call; any thread may call it).
const KernelTable& kernels();

// One family's kernel on the path in use, e.g. qs8_linear_kernel(): what the
// runtime calls. Each family has a function and a table of its own (one
// entry per path in the build), so the linker keeps only the families that
// linked code calls, with their variants, and drops the rest
// (--gc-sections): firmware built with only some layer kinds (CMake
// EA_LAYER_KINDS) links only the kernels of those kinds. kernels() keeps
// every family (tests, benchmarks). Same path, same function as kernels().
#define EA_KERNEL_FAMILY(family) decltype(KernelTable::family) family##_kernel();
EA_KERNEL_FAMILY(qs8_linear)
EA_KERNEL_FAMILY(qs8_linear_res)
EA_KERNEL_FAMILY(f32_linear)
EA_KERNEL_FAMILY(qs8_attention)
EA_KERNEL_FAMILY(f32_attention)
EA_KERNEL_FAMILY(qs8_additive)
EA_KERNEL_FAMILY(f32_additive)
EA_KERNEL_FAMILY(qs8_qk_row)
EA_KERNEL_FAMILY(qs8_softmax_row)
EA_KERNEL_FAMILY(qs8_softmax_exp_row)
EA_KERNEL_FAMILY(qs8_pv_row)
EA_KERNEL_FAMILY(qs8_layernorm)
EA_KERNEL_FAMILY(f32_layernorm)
EA_KERNEL_FAMILY(f32_add)
EA_KERNEL_FAMILY(qs8_lut)
EA_KERNEL_FAMILY(f32_activation)
EA_KERNEL_FAMILY(qs8_linear_res16)
EA_KERNEL_FAMILY(qs16_layernorm)
EA_KERNEL_FAMILY(qs16_narrow)
EA_KERNEL_FAMILY(qs8_add)
EA_KERNEL_FAMILY(qs8_add16)
#undef EA_KERNEL_FAMILY
// The path in use (the path of kernels()), without keeping any table.
KernelPath active_kernel_path();
// Forces a path; returns false (and changes nothing) if this build or CPU lacks it.
bool set_kernel_path(KernelPath path);
bool kernel_path_supported(KernelPath path);
KernelPath best_kernel_path();
const char* kernel_path_name(KernelPath path);
// Parses a name as printed by kernel_path_name ("ref", "avx2", "neon", ...).
bool parse_kernel_path(const char* name, KernelPath* path);
// The table of one path (null if not built in).
const KernelTable* kernel_table(KernelPath path);

}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_DISPATCH_H_
