// Luong attention (dot, general, scaled_dot scores): the module
// (kinds::kind_luong) and its parameters.
#ifndef EDGEATTN_CONVERTER_KINDS_LUONG_H_
#define EDGEATTN_CONVERTER_KINDS_LUONG_H_

#include "converter/kinds/kind.h"

namespace edgeattn {
namespace convert {

enum class LuongScore { kDot, kGeneral, kScaledDot };

struct LuongParams : KindParamsOf<LuongParams> {
  LuongScore score = LuongScore::kDot;
  double scale = 1.0;  // softmax scale
  FloatLinear w;       // general: W^T as Linear(query_dim -> key_dim)
};


}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_KINDS_LUONG_H_
