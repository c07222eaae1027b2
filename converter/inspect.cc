#include "converter/inspect.h"

#include <algorithm>
#include <iomanip>

#include "converter/kinds/kind.h"
#include "edgeattn/kernels/quantize_multiplier.h"

namespace edgeattn {
namespace convert {

void add_tensor(std::vector<TensorEntry>* out, const std::string& layer, const std::string& role,
         const fb::Tensor* t) {
  if (t == nullptr) return;
  TensorEntry e;
  e.layer = layer;
  e.role = role;
  e.name = t->name() != nullptr ? t->name()->str() : "";
  e.dtype = dtype_name(t->dtype());
  if (t->shape() != nullptr) e.shape.assign(t->shape()->begin(), t->shape()->end());
  e.row_stride = t->row_stride();
  e.packed = t->layout() == fb::WeightLayout::PackedK4N16;
  e.offset = t->offset();
  e.size = t->size();
  if (t->scale() != nullptr) e.scales.assign(t->scale()->begin(), t->scale()->end());
  out->push_back(std::move(e));
}

void add_linear(std::vector<TensorEntry>* out, const std::string& layer, const std::string& role,
                const fb::Linear* l) {
  if (l == nullptr) return;
  add_tensor(out, layer, role + ".weight", l->weight());
  add_tensor(out, layer, role + ".bias", l->bias());
}

namespace {

std::string shape_str(const std::vector<uint32_t>& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

}  // namespace

// With the real range the int8 values cover: what calibration chose.
void print_act(std::ostream& os, const char* what, const fb::ActQuant* q) {
  if (q == nullptr) return;
  const double s = q->scale();
  os << "      " << std::left << std::setw(18) << what << "scale " << std::setprecision(6) << s
     << "  zero_point " << q->zero_point() << "  range [" << std::setprecision(4) << s * (-128 - q->zero_point())
     << ", " << s * (127 - q->zero_point()) << "]\n";
}

void print_requant(std::ostream& os, const char* what, const fb::Requant* r) {
  if (r == nullptr || r->multiplier() == nullptr || r->shift() == nullptr) return;
  const uint32_t n = r->multiplier()->size();
  os << "      " << std::left << std::setw(18) << what << n << (n == 1 ? " entry" : " channels") << ":";
  double lo = 1e300, hi = 0;
  for (uint32_t i = 0; i < n && i < r->shift()->size(); ++i) {
    const double real = kernels::dequantize_multiplier(r->multiplier()->Get(i), r->shift()->Get(i));
    lo = std::min(lo, real);
    hi = std::max(hi, real);
    if (i < 3) os << " (" << r->multiplier()->Get(i) << ", " << r->shift()->Get(i) << ")";
  }
  if (n > 3) os << " ...";
  os << "  real " << std::setprecision(6) << lo;
  if (n > 1) os << " .. " << hi;
  os << "\n";
}

void print_linear(std::ostream& os, const char* role, const fb::Linear* l) {
  if (l == nullptr) return;
  os << "    " << role << ": " << l->out_features() << " x " << l->in_features() << "\n";
  print_act(os, "input", l->input());
  print_act(os, "output", l->output());
  print_requant(os, "requant", l->requant());
}

void print_softmax(std::ostream& os, const fb::SoftmaxQuant* s) {
  if (s == nullptr) return;
  os << "    softmax: score (" << s->score_multiplier() << ", " << s->score_shift() << ") real "
     << std::setprecision(6) << kernels::dequantize_multiplier(s->score_multiplier(), s->score_shift())
     << ", pv (" << s->pv_multiplier() << ", " << s->pv_shift() << ") real "
     << kernels::dequantize_multiplier(s->pv_multiplier(), s->pv_shift()) << "\n";
}

const char* dtype_name(fb::DType t) {
  switch (t) {
    case fb::DType::F32: return "f32";
    case fb::DType::S8: return "int8";
    case fb::DType::S32: return "int32";
  }
  return "?";
}

std::string mask_name(bool causal) {
  return causal ? "causal (+ key padding at run time)" : "key padding at run time (kv_valid_len)";
}

std::vector<TensorEntry> list_tensors(const fb::Model& model) {
  std::vector<TensorEntry> out;
  if (model.layers() == nullptr) return out;
  for (const fb::Layer* l : *model.layers()) {
    const KindModule* kind = find_kind(l->options_type());
    if (kind != nullptr) kind->tensors(*l, l->name() != nullptr ? l->name()->str() : "", &out);
  }
  return out;
}

void print_inspect(const LoadedModel& lm, const std::string& path, std::ostream& os) {
  const fb::Model& m = *lm.model().flatbuffer();
  os << "file: " << path << " (" << lm.size() << " bytes)\n";
  os << "format_version: " << m.format_version() << "\n";
  if (const auto* p = m.producer()) {
    os << "producer: " << (p->name() ? p->name()->str() : "") << " " << (p->version() ? p->version()->str() : "")
       << " (source: " << (p->source() ? p->source()->str() : "") << ")\n";
  }
  const size_t data_offset = m.data() != nullptr ? static_cast<size_t>(m.data()->data() - lm.data()) : 0;
  // Since format 3: the last 4 bytes are the CRC-32 of the rest (Load checked it).
  const uint8_t* tail = lm.data() + lm.size() - 4;
  const uint32_t file_crc = static_cast<uint32_t>(tail[0]) | static_cast<uint32_t>(tail[1]) << 8 |
                            static_cast<uint32_t>(tail[2]) << 16 | static_cast<uint32_t>(tail[3]) << 24;
  os << "weight data: " << (m.data() ? m.data()->size() : 0) << " bytes at file offset " << data_offset << "\n";
  os << "file checksum: CRC-32 0x" << std::hex << std::setw(8) << std::setfill('0') << file_crc << std::dec
     << std::setfill(' ') << " of bytes 0.." << lm.size() - 4 << "\n";
  os << "model arena: " << m.arena_bytes() << " bytes, " << m.worker_bytes()
     << " more per extra pool worker (ea_model_arena_bytes_for_workers)\n";
  const std::vector<TensorEntry> tensors = list_tensors(m);
  for (int i = 0; i < lm.model().num_layers(); ++i) {
    const fb::Layer* l = lm.model().layer(i);
    LayerInfo info;
    lm.model().GetLayerInfo(i, &info);
    const FloatLayer shell = layer_shell(lm.model(), i);
    const LayerIo io = shell.io();
    os << "\nlayer " << i << ": " << info.name << "  kind " << shell.kind->name << "  dtype "
       << dtype_name(l->dtype()) << "\n";
    os << "  dims: query " << info.query_dim << ", key " << info.key_dim << ", value " << info.value_dim
       << ", output " << info.output_dim << "; heads " << info.num_heads << "; "
       << (shell.learned_query() ? "learned query" : io.keys ? "cross" : "self") << "; mask "
       << mask_name(info.causal != 0) << "\n";
    os << "  max_q_len " << l->max_q_len() << ", max_kv_len " << l->max_kv_len() << ", arena "
       << l->arena_bytes() << " bytes\n";
    if (shell.kind->inspect != nullptr) shell.kind->inspect(*l, info, os);
    os << "  tensors:\n";
    for (const TensorEntry& t : tensors) {
      if (t.layer != info.name) continue;
      os << "    " << std::left << std::setw(16) << t.role << std::setw(40) << t.name << " "
         << std::setw(6) << t.dtype << std::setw(12) << shape_str(t.shape)
         << (t.packed ? " K4N16  " : " stride ") << std::setw(4) << t.row_stride << " " << std::right << std::setw(7) << t.size << " B @ "
         << t.offset << std::left;
      if (!t.scales.empty()) {
        const auto [lo, hi] = std::minmax_element(t.scales.begin(), t.scales.end());
        os << "  scale " << std::setprecision(5) << *lo;
        if (t.scales.size() > 1) os << " .. " << *hi << " (" << t.scales.size() << " channels)";
      }
      os << "\n";
    }
    if (l->dtype() != fb::DType::S8) continue;
    os << "  quantization:\n";
    if (shell.kind->inspect_quant != nullptr) shell.kind->inspect_quant(*l, os);
  }
  uint64_t total = 0;
  for (const TensorEntry& t : tensors) total += t.size;
  os << "\ntotal: " << tensors.size() << " tensors, " << total << " weight bytes ("
     << (m.data() ? m.data()->size() : 0) << " with alignment padding)\n";
}

}  // namespace convert
}  // namespace edgeattn
