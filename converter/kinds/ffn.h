// A feed-forward network fc2(act(fc1(x))): the module (kinds::kind_ffn) and its parameters.
#ifndef EDGEATTN_CONVERTER_KINDS_FFN_H_
#define EDGEATTN_CONVERTER_KINDS_FFN_H_

#include "converter/kinds/block_parts.h"

namespace edgeattn {
namespace convert {

struct FfnParams : KindParamsOf<FfnParams> {
  FloatFfn ffn;
};


}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_KINDS_FFN_H_
