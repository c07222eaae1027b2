// Validation of one layer's fields at load: the checks every layer kind's
// verify() (runtime/src/layers/) builds on. Each check fills the model's
// error message (naming the layer) and returns false on failure.
#ifndef EDGEATTN_RUNTIME_CHECKER_H_
#define EDGEATTN_RUNTIME_CHECKER_H_

#include <cmath>
#include <cstring>

#include "build_options.h"
#include "edgeattn/edgeattn.hpp"
#include "edgeattn/edgeattn_generated.h"
#include "edgeattn/kernels/packed_weights.h"
#include "edgeattn/kernels/requant.h"

namespace edgeattn {

// Dimensions and lengths are bounded so that every size computation fits in
// 32-bit arithmetic and the softmax sum (<= 32768 per key) fits in int32.
constexpr uint32_t kMaxDim = 16384;
constexpr uint32_t kMaxLength = 65535;

inline size_t dtype_size(fb::DType t) {
  switch (t) {
    case fb::DType::F32: return 4;
    case fb::DType::S8: return 1;
    case fb::DType::S32: return 4;
    case fb::DType::S16: return 2;
  }
  return 0;
}

inline const char* dtype_name(fb::DType t) { return fb::EnumNameDType(t); }

// Validation context: the layer being checked and the message to fill.
struct Checker {
  ErrorMessage& err;
  const char* layer;
  const uint8_t* data;
  size_t data_size;
  // Set by a check that fails because this build left a path out: the
  // layer is valid, the runtime cannot run it (EA_UNSUPPORTED, not
  // EA_INVALID_MODEL).
  bool unsupported = false;

  bool Fail() { return false; }
  ErrorMessage& Msg() {
    err.Clear();
    return err << "layer '" << layer << "': ";
  }

  bool Dim(uint32_t v, const char* what) {
    if (v == 0 || v > kMaxDim) {
      Msg() << what << " = " << v << " is outside 1.." << kMaxDim;
      return false;
    }
    return true;
  }

  bool Positive(float v, const char* what) {
    if (!std::isfinite(v) || !(v > 0.0f)) {
      Msg() << what << " must be finite and > 0";
      return false;
    }
    return true;
  }

  bool Quant(const fb::ActQuant* q, const char* what) {
    if (q == nullptr) {
      Msg() << "missing quantization of " << what;
      return false;
    }
    if (!Positive(q->scale(), what)) return false;
    if (q->zero_point() < -128 || q->zero_point() > 127) {
      Msg() << what << " zero point " << q->zero_point() << " is outside int8";
      return false;
    }
    return true;
  }

  // The layer uses the 16-bit residual stream: false (EA_UNSUPPORTED) in a
  // build without it. A constant there, so `c.Stream16() && verify...` drops
  // the stream's checks too.
  bool Stream16() {
    if (kWithInt16Stream) return true;
    Msg() << "uses the int16 residual stream; this runtime was built without it (EA_WITH_INT16_STREAM=OFF)";
    unsupported = true;
    return false;
  }

  // The block's norms sit on its sub-layers' outputs (branch_norm): false
  // (EA_UNSUPPORTED) in a build without that form.
  bool BranchNorm() {
    if (kWithBranchNorm) return true;
    Msg() << "has its norms on the sub-layers' outputs (branch_norm); this runtime was built without that block "
             "form (EA_WITH_BRANCH_NORM=OFF)";
    unsupported = true;
    return false;
  }

  // An int16 tensor of the 16-bit residual stream: symmetric, zero point 0.
  bool Quant16(const fb::ActQuant* q, const char* what) {
    if (q == nullptr) {
      Msg() << "missing quantization of " << what;
      return false;
    }
    if (!Positive(q->scale(), what)) return false;
    if (q->zero_point() != 0) {
      Msg() << what << " is int16 (the residual stream) with zero point " << q->zero_point() << ", must be 0";
      return false;
    }
    return true;
  }

  bool Multiplier(int32_t m, int32_t s, const char* what) {
    if (m < (int32_t{1} << 30) || s < kernels::kMinShift || s > kernels::kMaxShift) {
      Msg() << what << " requantization (" << m << ", " << s << ") is out of range";
      return false;
    }
    return true;
  }

  bool Requant(const fb::Requant* r, uint32_t channels, const char* what) {
    if (r == nullptr || r->multiplier() == nullptr || r->shift() == nullptr) {
      Msg() << "missing requantization of " << what;
      return false;
    }
    const uint32_t n = r->multiplier()->size();
    if ((n != 1 && n != channels) || r->shift()->size() != n) {
      Msg() << what << " has " << n << " requantization entries for " << channels << " channels";
      return false;
    }
    for (uint32_t i = 0; i < n; ++i) {
      if (!Multiplier(r->multiplier()->Get(i), r->shift()->Get(i), what)) return false;
    }
    return true;
  }

  // Every int32 of a tensor (already checked by Tensor()) within [-limit, limit].
  bool Int32sWithin(const fb::Tensor* t, int64_t limit, const char* what) {
    const uint8_t* p = data + t->offset();
    for (uint64_t i = 0; i < t->size() / 4; ++i) {
      int32_t v;
      std::memcpy(&v, p + 4 * i, 4);
      if (v > limit || v < -limit) {
        Msg() << what << "[" << i << "] = " << v << " is outside +-" << limit;
        return false;
      }
    }
    return true;
  }

  bool Softmax(const fb::SoftmaxQuant* s) {
    if (s == nullptr) {
      Msg() << "missing softmax quantization";
      return false;
    }
    return Multiplier(s->score_multiplier(), s->score_shift(), "softmax score") &&
           Multiplier(s->pv_multiplier(), s->pv_shift(), "softmax output");
  }

  // A constant tensor: dtype, logical rows x cols, bytes inside Model.data.
  // Out of line (checker.cc): inline, each layer module kept a copy of its own.
  bool Tensor(const fb::Tensor* t, fb::DType dtype, uint32_t rows, uint32_t cols, const char* what,
              fb::WeightLayout layout = fb::WeightLayout::RowMajor);

  // The int8 linear kernels accumulate bias[n] + sum_k w x in int32, and
  // |w x| <= 128 * 128, so every bias must leave in * 2^14 of headroom on
  // both sides (the converter's folded biases always do). A larger one would
  // overflow the accumulator: undefined in the reference kernel, and paths
  // would disagree (fuzz_paths finding F6, docs/security.md).
  bool BiasFits(const fb::Tensor* bias, uint32_t in, const char* what) {
    const int64_t headroom = int64_t{in} * 128 * 128;
    const uint8_t* p = data + bias->offset();
    for (uint32_t n = 0; n < bias->size() / 4; ++n) {
      int32_t b;
      std::memcpy(&b, p + 4 * static_cast<size_t>(n), 4);
      if (b > INT32_MAX - headroom || b < INT32_MIN + headroom) {
        Msg() << what << " bias[" << n << "] = " << b << " leaves no room for " << in
              << " int8 products in the int32 accumulator";
        return false;
      }
    }
    return true;
  }

  // own_layer: l is a `linear` layer's own table, the only place output16
  // (its int16 output, contract 5c-out) means something; on the projections
  // inside other kinds it is refused rather than ignored.
  bool Linear(const fb::Linear* l, bool s8, uint32_t in, uint32_t out, const char* what, bool own_layer = false) {
    if (l == nullptr) {
      Msg() << "missing projection " << what;
      return false;
    }
    if (l->output16() && !own_layer) {
      Msg() << what << " has output16 (an int16 output): only a linear layer's projection writes int16";
      return false;
    }
    if (l->output16() && !s8) {
      Msg() << what << " has output16 (an int16 output) in a float (F32) layer: it is for int8 (S8) models only";
      return false;
    }
    if (l->in_features() != in || l->out_features() != out) {
      Msg() << what << " is " << l->out_features() << " x " << l->in_features() << ", expected "
            << out << " x " << in;
      return false;
    }
    if (!Tensor(l->weight(), s8 ? fb::DType::S8 : fb::DType::F32, out, in, what,
                s8 ? fb::WeightLayout::PackedK4N16 : fb::WeightLayout::RowMajor)) {
      return false;
    }
    if (s8) {
      return Tensor(l->bias(), fb::DType::S32, 1, out, what) && BiasFits(l->bias(), in, what) &&
             Quant(l->input(), what) &&
             (l->output16() ? Stream16() && Quant16(l->output(), "output16's output") : Quant(l->output(), what)) &&
             Requant(l->requant(), out, what);
    }
    return l->bias() == nullptr || Tensor(l->bias(), fb::DType::F32, 1, out, what);
  }
};

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_CHECKER_H_
