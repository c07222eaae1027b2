// Argmax / top-k over each row, a model's last layer: the module
// (kinds::kind_argmax) and its parameters.
#ifndef EDGEATTN_CONVERTER_KINDS_ARGMAX_H_
#define EDGEATTN_CONVERTER_KINDS_ARGMAX_H_

#include "converter/kinds/kind.h"

namespace edgeattn {
namespace convert {

struct ArgmaxParams : KindParamsOf<ArgmaxParams> {
  int k = 1;  // indices per row, largest value first
};

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_KINDS_ARGMAX_H_
