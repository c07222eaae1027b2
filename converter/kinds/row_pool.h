// A sequence to one row (the class row, or the mean of the valid rows): the
// module (kinds::kind_row_pool) and its parameters.
#ifndef EDGEATTN_CONVERTER_KINDS_ROW_POOL_H_
#define EDGEATTN_CONVERTER_KINDS_ROW_POOL_H_

#include "converter/kinds/kind.h"

namespace edgeattn {
namespace convert {

struct RowPoolParams : KindParamsOf<RowPoolParams> {
  bool mean = false;  // false: the first row
};

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_KINDS_ROW_POOL_H_
