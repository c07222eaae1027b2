// qs8_linear_res16 (requant.h contract 5c) of the Armv8.2 dot-product path
// (AArch64): the NEON driver and int16 epilogue (isa/neon/linear_neon.cc)
// over the SDOT accumulation (qs8_linear_acc_init__neondot without init,
// isa/neondot/sdot.h). Compiled with the baseline flags; reached after
// cpu_supports(KernelPath::kNeonDot).
#include "isa/neon/neon.h"
#include "isa/neondot/sdot.h"
#include "microkernels.h"

namespace edgeattn {
namespace kernels {
namespace {

// The driver's accumulation (rows <= kLinearAccMaxRows, the SDOT tiles' 10).
void acc_sdot(int rows, int blocks, int in_features, const int8_t* x, int x_stride, const int8_t* w,
              int32_t* acc, int acc_stride) {
  qs8_linear_acc_init__neondot(rows, blocks, in_features, x, x_stride, w, nullptr, acc, acc_stride);
}

}  // namespace

void qs8_linear_res16__neondot(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                               const int8_t* w, const int32_t* bias, const int32_t* mult,
                               const int32_t* shift, int per_channel, const QS16Residual& res, int16_t* y,
                               int y_stride) {
  qs8_linear_res16_with__neon(acc_sdot, nullptr, rows, out_features, in_features, x, x_stride, w, bias, mult,
                              shift, per_channel, res, y, y_stride);
}

}  // namespace kernels
}  // namespace edgeattn
