// A standalone projection y = W x + b (nn.Linear, e.g. a model's output
// head): the module (kinds::kind_linear) and its parameters.
#ifndef EDGEATTN_CONVERTER_KINDS_LINEAR_H_
#define EDGEATTN_CONVERTER_KINDS_LINEAR_H_

#include "converter/kinds/kind.h"

namespace edgeattn {
namespace convert {

struct LinearParams : KindParamsOf<LinearParams> {
  FloatLinear linear;
};


}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_KINDS_LINEAR_H_
