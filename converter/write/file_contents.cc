#include "converter/write/file_contents.h"

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


// With the real range the int8 values cover: what calibration chose.
void print_act(std::ostream& os, const char* what, const fb::ActQuant* q, bool int16) {
  if (q == nullptr) return;
  const double s = q->scale();
  if (int16) {
    os << "      " << std::left << std::setw(18) << what << "int16 scale " << std::setprecision(6) << s
       << "  zero_point 0  range [" << std::setprecision(4) << s * -32768 << ", " << s * 32767 << "]\n";
    return;
  }
  os << "      " << std::left << std::setw(18) << what << "scale " << std::setprecision(6) << s
     << "  zero_point " << q->zero_point() << "  range [" << std::setprecision(4) << s * (-128 - q->zero_point())
     << ", " << s * (127 - q->zero_point()) << "]\n";
}

void print_requant(std::ostream& os, const char* what, const fb::Requant* r) {
  if (r == nullptr || r->multiplier() == nullptr || r->shift() == nullptr) return;
  const uint32_t n = r->multiplier()->size();
  os << "      " << std::left << std::setw(18) << what << " " << n << (n == 1 ? " entry" : " channels") << ":";
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

void print_linear(std::ostream& os, const char* role, const fb::Linear* l, bool output16) {
  if (l == nullptr) return;
  os << "    " << role << ": " << l->out_features() << " x " << l->in_features() << "\n";
  print_act(os, "input", l->input());
  print_act(os, "output", l->output(), output16);
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
    case fb::DType::S16: return "int16";  // LayerNorm gains
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

}  // namespace convert
}  // namespace edgeattn
