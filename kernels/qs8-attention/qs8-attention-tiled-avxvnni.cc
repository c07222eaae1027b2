// qs8_attention of the avxvnni path: the tiles (qs8_attention_tile_stages__avxvnni)
// where they apply, else qs8_attention__avxvnni.
#include "isa/x86/x86.h"
#include "microkernels.h"

namespace edgeattn {
namespace kernels {

void qs8_attention_tiled__avxvnni(const QS8AttentionArgs& a) {
  if (!qs8_attention_tiles_apply(a)) {
    qs8_attention__avxvnni(a);
    return;
  }
  qs8_attention_tiled_with(qs8_attention_tile_stages__avxvnni(), a);
}

}  // namespace kernels
}  // namespace edgeattn
