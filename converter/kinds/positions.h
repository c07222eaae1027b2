// Token preparation (class tokens prepended, positional embedding added):
// the module (kinds::kind_positions) and its parameters.
#ifndef EDGEATTN_CONVERTER_KINDS_POSITIONS_H_
#define EDGEATTN_CONVERTER_KINDS_POSITIONS_H_

#include "converter/kinds/kind.h"

namespace edgeattn {
namespace convert {

struct PositionsParams : KindParamsOf<PositionsParams> {
  int num_cls = 0;
  std::vector<double> cls;  // [num_cls][dim] (timm cls_token)
  bool sinusoidal = false;
  // Learned: the table [table_rows][dim] over output rows, class rows
  // first (timm pos_embed). Sinusoidal: empty, computed for any row.
  std::vector<double> table;
  int table_rows = 0;
  std::string cls_name, table_name;

  // pos[r][k] of output row r.
  double pos(int r, int k, int dim) const;
};

// The classic sinusoidal table (Vaswani et al.): position p, column k of
// dim: sin(p / 10000^(2i / dim)) for k = 2i, cos of the same angle for
// k = 2i + 1.
double sinusoidal_position(int p, int k, int dim);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_KINDS_POSITIONS_H_
