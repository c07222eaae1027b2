// Token embedding (nn.Embedding), a model's first layer: the module
// (kinds::kind_embedding) and its parameters.
#ifndef EDGEATTN_CONVERTER_KINDS_EMBEDDING_H_
#define EDGEATTN_CONVERTER_KINDS_EMBEDDING_H_

#include <string>
#include <vector>

#include "converter/kinds/kind.h"

namespace edgeattn {
namespace convert {

struct EmbeddingParams : KindParamsOf<EmbeddingParams> {
  int vocab = 0, dim = 0;
  std::vector<double> table;  // [vocab][dim], the spec's "scale" folded in
  std::string name;           // the weight's name, for the file and messages
  double lo = 0.0, hi = 0.0;  // the table's min and max
};

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_KINDS_EMBEDDING_H_
