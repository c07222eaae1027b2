// The FlatBuffer tables of LayerNorm and residual adds (int8 constants from
// quantize/block_quant.h, or float32).
#ifndef EDGEATTN_CONVERTER_WRITE_BLOCK_TABLES_H_
#define EDGEATTN_CONVERTER_WRITE_BLOCK_TABLES_H_

#include "converter/quantize/block_quant.h"
#include "converter/write/writer.h"

namespace edgeattn {
namespace convert {

flatbuffers::Offset<fb::LayerNorm> write_layernorm_s8(ModelWriter& w, const FloatNorm& f, const QuantNorm& q);
flatbuffers::Offset<fb::LayerNorm> write_layernorm_f32(ModelWriter& w, const FloatNorm& f);
flatbuffers::Offset<fb::ResidualAdd> write_add_s8(ModelWriter& w, const QuantAdd& q);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_WRITE_BLOCK_TABLES_H_
