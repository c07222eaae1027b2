// Table entries of the Armv8.2 dot-product path (AArch64). Compiled with the
// baseline flags: the linear driver, requantization, softmax and P.V are the
// NEON ones; only the int8 dot-product loops come from dotprod.cc.
#include "neon_kernels.h"

namespace edgeattn {
namespace kernels {

void qs8_linear__neondot(int rows, int out_features, int in_features, const int8_t* x,
                         int x_stride, const int8_t* w, const int32_t* bias, const int32_t* mult,
                         const int32_t* shift, int per_channel, int32_t y_zp, int8_t* y,
                         int y_stride) {
  qs8_linear_rq__neondot(rows, out_features, in_features, x, x_stride, w, bias, mult, shift, per_channel, y_zp,
                         y, y_stride);
}

void qs8_linear_res__neondot(int rows, int out_features, int in_features, const int8_t* x,
                             int x_stride, const int8_t* w, const int32_t* bias, const int32_t* mult,
                             const int32_t* shift, int per_channel, const QS8Residual& res, int8_t* y,
                             int y_stride) {
  qs8_linear_res_rq__neondot(rows, out_features, in_features, x, x_stride, w, bias, mult, shift, per_channel,
                             res.res, res.res_stride, res.term.mult, res.term.shift, res.term.a_zp, res.term.y_zp,
                             residual_offset(res.term), y, y_stride);
}

void qs8_attention__neondot(const QS8AttentionArgs& a) {
  if (!qs8_attention_tiled__neondot(a)) {
    qs8_attention_rows({qs8_qk_row__neondot, qs8_softmax_row__neon, qs8_pv_row__neon}, a);
  }
}

}  // namespace kernels
}  // namespace edgeattn
