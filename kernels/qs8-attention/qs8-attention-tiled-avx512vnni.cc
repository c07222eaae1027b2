// qs8_attention of the avx512vnni path: the tiles
// (qs8_attention_tile_stages__avx512vnni) where they apply, else
// qs8_attention__avx512vnni.
#include "isa/x86/x86.h"
#include "microkernels.h"

namespace edgeattn {
namespace kernels {

void qs8_attention_tiled__avx512vnni(const QS8AttentionArgs& a) {
  if (!qs8_attention_tiles_apply(a)) {
    qs8_attention__avx512vnni(a);
    return;
  }
  qs8_attention_tiled_with(qs8_attention_tile_stages__avx512vnni(), a);
}

}  // namespace kernels
}  // namespace edgeattn
