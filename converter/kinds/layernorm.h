// LayerNorm over each row (nn.LayerNorm): the module (kinds::kind_layernorm) and its parameters.
#ifndef EDGEATTN_CONVERTER_KINDS_LAYERNORM_H_
#define EDGEATTN_CONVERTER_KINDS_LAYERNORM_H_

#include "converter/kinds/block_parts.h"

namespace edgeattn {
namespace convert {

struct NormParams : KindParamsOf<NormParams> {
  FloatNorm norm;
};


}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_KINDS_LAYERNORM_H_
