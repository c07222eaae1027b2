#include "converter/write/block_tables.h"


namespace edgeattn {
namespace convert {

flatbuffers::Offset<fb::LayerNorm> write_layernorm_s8(ModelWriter& w, const FloatNorm& f, const QuantNorm& q) {
  const auto gain = w.TensorS16(f.gain_name, q.gain);
  const auto bias = w.TensorS32(f.bias_name, q.bias);
  const auto in = q.input16 ? w.Act16(q.input) : w.Act(q.input);
  const auto out = q.has_output8 ? w.Act(q.output) : flatbuffers::Offset<fb::ActQuant>();
  const auto rq = q.has_output8 ? w.Requants({q.requant}) : flatbuffers::Offset<fb::Requant>();
  const auto out16 = q.has_output16 ? w.Act16(q.output16) : flatbuffers::Offset<fb::ActQuant>();
  const auto rq16 = q.has_output16 ? w.Requants({q.requant16}) : flatbuffers::Offset<fb::Requant>();
  return fb::CreateLayerNorm(w.fbb(), static_cast<uint32_t>(f.dim), static_cast<float>(f.eps), gain, bias, in, out,
                             q.eps_term, rq, q.input16, out16, rq16);
}

flatbuffers::Offset<fb::LayerNorm> write_layernorm_f32(ModelWriter& w, const FloatNorm& f) {
  const auto gain = w.TensorF32(f.gain_name, 0, f.dim, f.gain.data());
  const auto bias = w.TensorF32(f.bias_name, 0, f.dim, f.bias.data());
  return fb::CreateLayerNorm(w.fbb(), static_cast<uint32_t>(f.dim), static_cast<float>(f.eps), gain, bias);
}

flatbuffers::Offset<fb::ResidualAdd> write_add_s8(ModelWriter& w, const QuantAdd& q) {
  const auto a = q.stream16 ? w.Act16(q.a) : w.Act(q.a);
  const auto out = q.stream16 ? w.Act16(q.output) : w.Act(q.output);
  return fb::CreateResidualAdd(w.fbb(), a, out, q.a_multiplier, q.shift);
}

}  // namespace convert
}  // namespace edgeattn
