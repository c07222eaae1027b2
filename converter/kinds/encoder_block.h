// A transformer encoder layer: the module (kinds::kind_encoder_block) and its parameters.
#ifndef EDGEATTN_CONVERTER_KINDS_ENCODER_BLOCK_H_
#define EDGEATTN_CONVERTER_KINDS_ENCODER_BLOCK_H_

#include "converter/kinds/block_parts.h"
#include "converter/kinds/mha.h"

namespace edgeattn {
namespace convert {

struct BlockParams : KindParamsOf<BlockParams> {
  bool norm_first = false;
  // The norms on the sub-layers' outputs, inside the residual branch
  // (Torch-KWT's PostNorm): h = x + norm1(attn(x)); y = h + norm2(ffn(h)).
  bool branch_norm = false;
  FloatNorm norm1, norm2;
  FloatLayer attn;  // kind mha: self-attention over dim
  FloatFfn ffn;
};


}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_KINDS_ENCODER_BLOCK_H_
