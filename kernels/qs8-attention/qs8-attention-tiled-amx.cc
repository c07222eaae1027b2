// qs8_attention of the amx path: the tiles with AMX Q.K^T
// (qs8_attention_tile_stages__amx) where they apply, else the avx512vnni
// row kernel.
#include "isa/x86/x86.h"
#include "microkernels.h"

namespace edgeattn {
namespace kernels {

void qs8_attention_tiled__amx(const QS8AttentionArgs& a) {
  if (!qs8_attention_tiles_apply(a)) {
    qs8_attention__avx512vnni(a);
    return;
  }
  qs8_attention_tiled_with(qs8_attention_tile_stages__amx(), a);
}

}  // namespace kernels
}  // namespace edgeattn
