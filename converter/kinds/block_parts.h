// The steps a transformer block is made of on the converter's side, as kinds
// of their own (layernorm, ffn) and as parts of the block kinds: their spec
// fields, the weights they read, and their FlatBuffer tables. The numerics
// are model/block_float.h (float64), quantize/block_quant.h (int8 constants)
// and write/block_tables.h (their tables).
#ifndef EDGEATTN_CONVERTER_KINDS_BLOCK_PARTS_H_
#define EDGEATTN_CONVERTER_KINDS_BLOCK_PARTS_H_

#include "converter/write/block_tables.h"
#include "converter/kinds/kind.h"

namespace edgeattn {
namespace convert {

// The LayerNorm's gain and bias of `dim` from the named tensors.
FloatNorm read_norm(const SpecWeights& w, const std::string& gain, const std::string& bias, int dim, double eps);
// fc1 [hidden, dim] and fc2 [dim, hidden] (with biases when present); hidden
// 0 means: take it from fc1's shape.
FloatFfn read_ffn(const SpecFields& f, const SpecWeights& w, const std::string& fc1_w, const std::string& fc1_b,
                  const std::string& fc2_w, const std::string& fc2_b, int dim, int hidden, Activation act);
// y = ffn(x) over `rows` rows, recording its calibration points
// <prefix>hidden (fc1's output), <prefix>act (the activation's) and
// <prefix>output over rows [0, rec) when ranges is not null.
void ffn_forward_recorded(const FloatFfn& f, int rows, const double* x, double* y, RangeMap* ranges,
                          const std::string& prefix, int rec);
// The spec's "activation" (default `def`), an error naming the field otherwise.
Activation read_activation(const SpecFields& f, const char* def);

// Tables of the two parts; the FFN's quantization points are `points`'
// "hidden" (fc1's output) and "act" (the activation's output).
flatbuffers::Offset<fb::LayerNorm> norm_table_s8(ModelWriter& w, const FloatNorm& n, const ActQuantParams& in,
                                                 const ActQuantParams& out, const std::string& what);
// fc2's output is the point "output"; with a block's residual add, fc2
// computes the add in its epilogue (output at the add's output,
// quantize_linear's out_shift) instead.
flatbuffers::Offset<fb::FeedForward> ffn_table_s8(ModelWriter& w, const FloatFfn& f, const ActQuantParams& in,
                                                  const Calibrated& points, const std::string& what,
                                                  const QuantAdd* residual = nullptr);
flatbuffers::Offset<fb::FeedForward> ffn_table_f32(ModelWriter& w, const FloatFfn& f);

// inspect: a LayerNorm's and an FFN's tensors and quantization lines.
void add_norm_tensors(std::vector<TensorEntry>* out, const std::string& layer, const std::string& role,
                      const fb::LayerNorm* n);
void add_ffn_tensors(std::vector<TensorEntry>* out, const std::string& layer, const std::string& role,
                     const fb::FeedForward* f);
void print_norm(std::ostream& os, const char* role, const fb::LayerNorm* n);
void print_ffn(std::ostream& os, const char* role, const fb::FeedForward* f, bool output16 = false);
// A block's residual add, computed in the epilogue of `in` (out_proj, fc2);
// int16: on the 16-bit residual stream.
void print_add(std::ostream& os, const char* role, const char* in, const fb::ResidualAdd* a, bool int16 = false);

// y = x + r by requant.h's add contract (kind add, a block's branch adds):
// A, B and the largest shift <= 16 that keeps both below 2^21, from the
// three quantizations; an error naming `what` when none does. residual16:
// r and y int16 (zero point 0, their quantizations' scales), the add16
// contract, shift up to 30.
flatbuffers::Offset<fb::Add> add_table_s8(ModelWriter& w, int dim, const ActQuantParams& x, const ActQuantParams& r,
                                          const ActQuantParams& y, const std::string& what, bool residual16 = false);
void print_add_table(std::ostream& os, const char* role, const fb::Add* a);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_KINDS_BLOCK_PARTS_H_
