// The Armv8.2 dot-product (SDOT / UDOT) building blocks, AArch64 only:
// declarations only (no inline code), so both the SDOT files and the
// baseline files calling them after cpu_supports(KernelPath::kNeonDot) may
// include it. qs8_qk_row__neondot, the one list entry compiled with these
// flags, is declared here too: its file may not include microkernels.h.
#ifndef EDGEATTN_KERNELS_ISA_NEONDOT_SDOT_H_
#define EDGEATTN_KERNELS_ISA_NEONDOT_SDOT_H_

#include <cstdint>

namespace edgeattn {
namespace kernels {

// kernels/qs8-qk-row/qs8-qk-row-neondot.cc (list entry).
void qs8_qk_row__neondot(int n, int dim, const int8_t* q, int32_t q_zp, const int8_t* k,
                         int k_stride, int32_t k_zp, int32_t* scores);

// Q.K^T tile's accumulation for head dims above 64 (qs8-attn-qk-tile-neondot.cc):
// acc[r * acc_stride + 16 b + c] = init[16 b + c] (0 if init is null) +
// sum_k w[16 b + c][k] * x_r[k] (the linear's accumulation, packed K4N16).
void qs8_linear_acc_init__neondot(int rows, int blocks, int in_features, const int8_t* x,
                                  int x_stride, const int8_t* w, const int32_t* init, int32_t* acc,
                                  int acc_stride);

// P.V tile of the tiled attention, requantized: out[r * out_stride + c] =
// requantize_s8(sum_{j < keys} (256 p_hi[r][j] + p_lo[r][j]) * vb(c, j) -
// corr[r], pv_mult, pv_shift, out_zp) for c < cnt (sums wrapping uint32),
// rows r < rows (1..8) with planes at p_hi / p_lo + r * stride, zero from
// keys up to the next multiple of 16; vb is one K4N16 block (16 channels) of
// unsigned bytes.
void qs8_attn_pv_tile__neondot(int rows, int keys, const uint8_t* p_hi, const uint8_t* p_lo, int stride,
                               const uint8_t* vb, const uint32_t* corr, int32_t pv_mult, int32_t pv_shift,
                               int32_t out_zp, int cnt, int8_t* out, int out_stride);
// Q.K^T of the tiled attention: the linear's accumulation with init
// (Qs8LinearAccInitFn) for rows <= 8, the query rows held in registers across
// the key blocks when head_dim <= 64.
void qs8_attn_qk_tile__neondot(int rows, int blocks, int head_dim, const int8_t* q, int q_stride,
                               const int8_t* keys, const int32_t* init, int32_t* scores, int stride);
// The int8 linear (qs8_linear contract) with the requantization fused into
// the SDOT register tiles.
void qs8_linear_rq__neondot(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                            const int8_t* w, const int32_t* bias, const int32_t* mult, const int32_t* shift,
                            int per_channel, int32_t y_zp, int8_t* y, int y_stride);
// The same register tiles with the residual epilogue (qs8_linear_res
// contract; QS8Residual's fields passed one by one, and C =
// residual_offset(term) formed by the caller: the SDOT files include no
// project header).
void qs8_linear_res_rq__neondot(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                                const int8_t* w, const int32_t* bias, const int32_t* mult, const int32_t* shift,
                                int per_channel, const int8_t* res, int res_stride, int32_t res_mult,
                                int32_t res_shift, int32_t res_a_zp, int32_t res_y_zp, int32_t res_offset,
                                int8_t* y, int y_stride);

}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_ISA_NEONDOT_SDOT_H_
