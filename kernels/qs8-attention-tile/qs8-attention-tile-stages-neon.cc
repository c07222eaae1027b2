// The tiled qs8_attention of the neon path and its stages
// (isa/neon/attention_tile_neon.h).
#include "isa/neon/attention_tile_neon.h"

namespace edgeattn {
namespace kernels {

using namespace neon_tile;  // NOLINT(build/namespaces)

const Qs8AttnTileStages& qs8_attention_tile_stages__neon() { return kNeonStages; }

bool qs8_attention_tiled__neon(const QS8AttentionArgs& a) {
  if (!qs8_attention_tiles_apply(a)) return false;
  qs8_attention_tiled_with(kNeonStages, a);
  return true;
}

}  // namespace kernels
}  // namespace edgeattn
