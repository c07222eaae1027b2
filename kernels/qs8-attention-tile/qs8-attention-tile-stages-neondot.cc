// The tiled qs8_attention of the neondot path (AArch64) and its stages
// (isa/neon/attention_tile_neon.h). Compiled with the baseline flags: the
// SDOT tiles are reached through isa/neondot/sdot.h after cpu_supports(kNeonDot).
#include "isa/neon/attention_tile_neon.h"

#if defined(__aarch64__)
namespace edgeattn {
namespace kernels {

using namespace neon_tile;  // NOLINT(build/namespaces)

const Qs8AttnTileStages& qs8_attention_tile_stages__neondot() { return kNeonDotStages; }

bool qs8_attention_tiled__neondot(const QS8AttentionArgs& a) {
  if (!qs8_attention_tiles_apply(a)) return false;
  qs8_attention_tiled_with(kNeonDotStages, a);
  return true;
}

}  // namespace kernels
}  // namespace edgeattn
#endif
