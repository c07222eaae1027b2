// What the Cortex-M variants (kernels/<family>/*-dsp.cc, *-helium.cc) share
// beyond the lists' prototypes (microkernels.h): the build's DSP-only switch
// and the few building blocks one variant calls in another's file.
#ifndef EDGEATTN_KERNELS_ISA_CORTEX_M_CORTEXM_H_
#define EDGEATTN_KERNELS_ISA_CORTEX_M_CORTEXM_H_

#include <cstdint>

#include "edgeattn/kernels/layernorm_row.h"
#include "edgeattn/kernels/ref.h"
#include "edgeattn/kernels/requant.h"

// EA_CM_DSP_ONLY: the DSP extension without Helium (M4, M7, M33), where the
// cmsis-dsp path is the firmware's path. Only there does it get its own
// softmax, LayerNorm, activation table and linear, and the score row with
// the query unpacked once; on Helium builds (M55) the cmsis-dsp table is a
// fallback and keeps the reference softmax, the plain score row and the
// reference projection (kernels/lists/*.inc), for flash.
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP && !(defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1))
#define EA_CM_DSP_ONLY 1
#else
#define EA_CM_DSP_ONLY 0
#endif

namespace edgeattn {
namespace kernels {

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
// requant.h's prob_normalizer(sum), sum >= 1, with 32-bit divisions
// (prob_normalizer_cm.cc; the DSP and Helium softmax rows use it).
ProbNormalizer prob_normalizer_cm(uint32_t sum);
// One query row's additive scores (qs8_additive_score_row__ref's contract)
// with requant_cm.h's requantizations (qs8-additive-dsp.cc; the Helium row
// falls back to it for rows with coverage).
void qs8_additive_score_row__dsp(const QS8AdditiveArgs& a, const int8_t* qp, int limit, int32_t* scores);
#endif
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
// 4 features per vector, the tanh table read by a byte gather; rows with
// coverage take qs8_additive_score_row__dsp (qs8-additive-helium.cc).
void qs8_additive_score_row__helium(const QS8AdditiveArgs& a, const int8_t* qp, int limit, int32_t* scores);
// layernorm_row_scale(d, sum, sum_sq, eps_term) in 32-bit steps: the square
// root's top by Newton steps with UDIV, inv by long division in 16-bit
// digits (no libgcc 64-bit division; qs8-layernorm-helium.cc).
LayerNormRowScale layernorm_row_scale_helium(int d, int32_t sum, int32_t sum_sq, int64_t eps_term);
// Its last steps from x = D 4^k in [2^60, 2^62) (layernorm_row.h's
// LayerNormScaledVar): inv, and shift as given (52 - k - f for contract 4,
// 60 - k - p - f for 4b: qs16_layernorm__helium).
LayerNormRowScale layernorm_row_scale_helium_finish(uint64_t x, int shift);
#endif

}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_ISA_CORTEX_M_CORTEXM_H_
