// Checker (checker.h): the checks too large to inline into every layer module.
#include "checker.h"

namespace edgeattn {

bool Checker::Tensor(const fb::Tensor* t, fb::DType dtype, uint32_t rows, uint32_t cols, const char* what,
                     fb::WeightLayout layout) {
  if (t == nullptr) {
    Msg() << "missing tensor " << what;
    return false;
  }
  const char* name = t->name() != nullptr ? t->name()->c_str() : what;
  if (t->dtype() != dtype) {
    Msg() << "tensor '" << name << "' is " << dtype_name(t->dtype()) << ", expected "
          << dtype_name(dtype);
    return false;
  }
  const auto* shape = t->shape();
  uint64_t elements = 1;
  if (shape == nullptr || shape->size() == 0 || shape->size() > 2) {
    Msg() << "tensor '" << name << "' must have 1 or 2 dimensions";
    return false;
  }
  for (uint32_t i = 0; i < shape->size(); ++i) elements *= shape->Get(i);
  const uint32_t last = shape->Get(shape->size() - 1);
  const uint32_t shape_rows = shape->size() == 2 ? shape->Get(0) : 1;
  // 1-D tensors of `cols` elements may also be written as [1, cols].
  if (elements != uint64_t{rows} * cols || last != cols || shape_rows != rows) {
    Msg() << "tensor '" << name << "' has shape that does not match " << rows << " x " << cols;
    return false;
  }
  if (t->layout() != layout) {
    Msg() << "tensor '" << name << "' has layout " << fb::EnumNameWeightLayout(t->layout())
          << ", expected " << fb::EnumNameWeightLayout(layout);
    return false;
  }
  uint64_t bytes = 0;
  if (layout == fb::WeightLayout::PackedK4N16) {
    // rows and cols are at most kMaxDim (checked by the layer), so these fit.
    const uint32_t kp = static_cast<uint32_t>(kernels::packed_k(static_cast<int>(cols)));
    if (t->row_stride() != kp) {
      Msg() << "tensor '" << name << "' row stride " << t->row_stride() << " != " << kp
            << " (packed K4N16 weights are round_up(in, 4) wide)";
      return false;
    }
    bytes = kernels::packed_weight_bytes(static_cast<int>(rows), static_cast<int>(cols));
  } else {
    if (t->row_stride() < cols || t->row_stride() > kMaxDim + 64) {
      Msg() << "tensor '" << name << "' row stride " << t->row_stride() << " < " << cols;
      return false;
    }
    bytes = uint64_t{rows} * t->row_stride() * dtype_size(dtype);
  }
  if (t->size() != bytes) {
    Msg() << "tensor '" << name << "' size " << t->size() << " != " << bytes;
    return false;
  }
  if (t->offset() % EA_ALIGNMENT != 0 || t->offset() > data_size ||
      data_size - t->offset() < bytes) {
    Msg() << "tensor '" << name << "' bytes [" << t->offset() << ", +" << t->size()
          << ") are misaligned or outside the weight data";
    return false;
  }
  if (dtype == fb::DType::S8 && rows > 0) {
    const auto* scale = t->scale();
    if (scale == nullptr || (scale->size() != rows && scale->size() != 1)) {
      Msg() << "tensor '" << name << "' needs one weight scale or one per output channel";
      return false;
    }
    for (uint32_t i = 0; i < scale->size(); ++i) {
      if (!Positive(scale->Get(i), "weight scale")) return false;
    }
  }
  return true;
}

}  // namespace edgeattn
