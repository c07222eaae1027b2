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
  kCount
};

using Qs8LinearFn = void (*)(int rows, int out_features, int in_features, const int8_t* x,
                             int x_stride, const int8_t* w_packed, const int32_t* bias,
                             const int32_t* mult, const int32_t* shift, int per_channel,
                             int32_t y_zp, int8_t* y, int y_stride);
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

// The int8 attention row primitives (contracts of the __ref ones in ref.h).
// Each path lists the ones its composite kernels are built from, so the
// bit-exact tests (tests/kernels/simd_test.cc) and the per-stage benchmarks
// (bench/kernels_bench.cc, attn_stage_qs8) reach every variant through the
// table that dispatch uses.
using Qs8QkRowFn = void (*)(int n, int dim, const int8_t* q, int32_t q_zp, const int8_t* k,
                            int k_stride, int32_t k_zp, int32_t* scores);
using Qs8SoftmaxRowFn = void (*)(int n, const int32_t* scores, int32_t mult, int32_t shift,
                                 uint16_t* probs);
using Qs8SoftmaxExpRowFn = uint32_t (*)(int n, const int32_t* scores, int32_t mult, int32_t shift,
                                        uint16_t* e);
using Qs8PvRowFn = void (*)(int n, int v_dim, const uint16_t* probs, const int8_t* v,
                            int v_stride, int32_t v_zp, int32_t pv_mult, int32_t pv_shift,
                            int32_t out_zp, int8_t* out);

struct KernelTable {
  KernelPath path;
  const char* name;
  Qs8LinearFn qs8_linear;
  F32LinearFn f32_linear;
  void (*qs8_attention)(const QS8AttentionArgs&);
  void (*f32_attention)(const F32AttentionArgs&);
  void (*qs8_additive)(const QS8AdditiveArgs&);
  void (*f32_additive)(const F32AdditiveArgs&);
  Qs8QkRowFn qs8_qk_row;
  Qs8SoftmaxRowFn qs8_softmax_row;
  Qs8SoftmaxExpRowFn qs8_softmax_exp_row;  // steps 1-4 of qs8_softmax_row
  Qs8PvRowFn qs8_pv_row;
};

// The table in use (selected on first call).
const KernelTable& kernels();
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
