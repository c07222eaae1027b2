// Attention pooling (a learned query over one sequence): the module
// (kinds::kind_pooling) and its parameters.
#ifndef EDGEATTN_CONVERTER_KINDS_POOLING_H_
#define EDGEATTN_CONVERTER_KINDS_POOLING_H_

#include "converter/kinds/kind.h"

namespace edgeattn {
namespace convert {

struct PoolingParams : KindParamsOf<PoolingParams> {
  std::vector<double> query;  // the learned query [dim]
  std::string query_name;
};


}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_KINDS_POOLING_H_
