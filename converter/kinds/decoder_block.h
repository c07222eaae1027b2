// A transformer decoder layer: the module (kinds::kind_decoder_block) and its parameters.
#ifndef EDGEATTN_CONVERTER_KINDS_DECODER_BLOCK_H_
#define EDGEATTN_CONVERTER_KINDS_DECODER_BLOCK_H_

#include "converter/kinds/block_parts.h"
#include "converter/kinds/mha.h"

namespace edgeattn {
namespace convert {

struct DecoderParams : KindParamsOf<DecoderParams> {
  bool norm_first = false;
  FloatNorm norm1, norm2, norm3;
  FloatLayer self_attn;   // kind mha: causal self-attention with kv_cache over dim
  FloatLayer cross_attn;  // kind mha: cross-attention over the memory [kv][dim]
  FloatFfn ffn;
};


}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_KINDS_DECODER_BLOCK_H_
