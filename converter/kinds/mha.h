// Multi-head attention (nn.MultiheadAttention and separate q/k/v/out
// projections; self or cross, causal or key padding, grouped-query heads, KV
// cache): the module (kinds::kind_mha) and the pieces a composite kind reuses for
// an MHA sub-layer (a FloatLayer of kind kMha with MhaParams).
#ifndef EDGEATTN_CONVERTER_KINDS_MHA_H_
#define EDGEATTN_CONVERTER_KINDS_MHA_H_

#include "converter/write/block_tables.h"
#include "converter/kinds/kind.h"

namespace edgeattn {
namespace convert {

struct MhaParams : KindParamsOf<MhaParams> {
  bool cross = false;     // separate key/value sequence
  bool kv_cache = false;  // causal self-attention that decodes with a KV cache
  double scale = 1.0;     // softmax scale
  int num_heads = 1, head_dim = 0;
  int num_kv_heads = 1;   // K/V heads (grouped-query attention when < num_heads)
  FloatLinear q_proj, k_proj, v_proj, out_proj;
};

// The MultiHeadAttention table of L (kinds::kind_mha.write_s8 / write_f32 return
// it as the layer's options; a composite may store it as a field of its own).
// With a block's residual add, out_proj computes it in its epilogue
// (quantize_linear's out_shift) instead of writing the attention's own output.
flatbuffers::Offset<fb::MultiHeadAttention> mha_table_s8(ModelWriter& w, const FloatLayer& L, const Calibrated& c,
                                                         const QuantAdd* residual = nullptr);
flatbuffers::Offset<fb::MultiHeadAttention> mha_table_f32(ModelWriter& w, const FloatLayer& L);


}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_KINDS_MHA_H_
