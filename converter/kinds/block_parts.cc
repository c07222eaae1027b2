#include "converter/kinds/block_parts.h"

#include <algorithm>
#include <cmath>
#include <ostream>

#include "converter/write/file_contents.h"
#include "converter/write/writer.h"
#include "edgeattn/kernels/requant.h"

namespace edgeattn {
namespace convert {

FloatNorm read_norm(const SpecWeights& w, const std::string& gain, const std::string& bias, int dim, double eps) {
  FloatNorm n;
  n.dim = dim;
  n.eps = eps;
  n.gain_name = gain;
  n.bias_name = bias;
  n.gain = w.get(gain, 0, static_cast<size_t>(dim), "LayerNorm weight [dim]").data;
  if (w.has(bias)) {
    n.bias = w.get(bias, 0, static_cast<size_t>(dim), "LayerNorm bias [dim]").data;
  } else {
    n.bias.assign(static_cast<size_t>(dim), 0.0);  // nn.LayerNorm(bias=False)
    n.bias_name = gain + " (no bias)";
  }
  return n;
}

void ffn_forward_recorded(const FloatFfn& f, int rows, const double* x, double* y, RangeMap* ranges,
                          const std::string& prefix, int rec) {
  if (ranges == nullptr) {
    ffn_forward(f, rows, x, y, nullptr, nullptr);
    return;
  }
  std::vector<double> pre, post;
  ffn_forward(f, rows, x, y, &pre, &post);
  record(ranges, (prefix + "hidden").c_str(), pre.data(), rows, f.hidden, f.hidden, rec);
  record(ranges, (prefix + "act").c_str(), post.data(), rows, f.hidden, f.hidden, rec);
  record(ranges, (prefix + "output").c_str(), y, rows, f.dim, f.dim, rec);
}

Activation read_activation(const SpecFields& f, const char* def) {
  const std::string name = f.string("activation", def);
  Activation a;
  if (!parse_activation(name, &a)) {
    fail(f.where, ": unknown activation '", name, "' (expected relu, gelu, gelu_tanh or silu)");
  }
  return a;
}

FloatFfn read_ffn(const SpecFields& f, const SpecWeights& w, const std::string& fc1_w, const std::string& fc1_b,
                  const std::string& fc2_w, const std::string& fc2_b, int dim, int hidden, Activation act) {
  FloatFfn n;
  n.dim = dim;
  n.act = act;
  if (hidden == 0) {
    auto it = w.map.find(fc1_w);
    if (it == w.map.end()) w.missing(fc1_w);
    if (it->second.shape.size() != 2) {
      fail(w.where(), ": tensor '", fc1_w, "' has shape ", shape_string(it->second.shape),
           ", expected [ffn_dim, ", dim, "]");
    }
    hidden = static_cast<int>(it->second.shape[0]);
  }
  if (hidden < 1 || hidden > 16384) fail(f.where, ": ffn_dim ", hidden, " is outside 1..16384");
  n.hidden = hidden;
  n.fc1 = w.linear(fc1_w, fc1_b, hidden, dim, "fc1 [ffn_dim, dim]", false);
  n.fc2 = w.linear(fc2_w, fc2_b, dim, hidden, "fc2 [dim, ffn_dim] (the FFN's widths must agree)", false);
  return n;
}

flatbuffers::Offset<fb::LayerNorm> norm_table_s8(ModelWriter& w, const FloatNorm& n, const ActQuantParams& in,
                                                 const ActQuantParams& out, const std::string& what) {
  return write_layernorm_s8(w, n, quantize_layernorm(n, in, out, what));
}

flatbuffers::Offset<fb::FeedForward> ffn_table_s8(ModelWriter& w, const FloatFfn& f, const ActQuantParams& in,
                                                  const Calibrated& points, const std::string& what,
                                                  const QuantAdd* residual) {
  // fc1's output feeds only the activation table: its range below where the
  // activation is flat is cut (no code changes, a finer step above it).
  const ActQuantParams act = points("act");
  const ActQuantParams h = points.activation_input("hidden", f.act, act);
  const QuantLinear q1 = quantize_linear(f.fc1, in, h, what + ": " + f.fc1.w_name);
  const std::string w2 = what + ": " + f.fc2.w_name;
  const QuantLinear q2 = residual != nullptr ? quantize_linear(f.fc2, act, residual->output, w2, residual->shift)
                                             : quantize_linear(f.fc2, act, points("output"), w2);
  const std::vector<int8_t> table = activation_table(f.act, h, act);
  const auto l1 = w.LinearS8(q1, f.fc1), l2 = w.LinearS8(q2, f.fc2);
  const auto t = w.fbb().CreateVector(table);
  return fb::CreateFeedForward(w.fbb(), static_cast<uint32_t>(f.dim), static_cast<uint32_t>(f.hidden),
                               static_cast<fb::Activation>(f.act), l1, l2, t);
}

flatbuffers::Offset<fb::FeedForward> ffn_table_f32(ModelWriter& w, const FloatFfn& f) {
  const auto l1 = w.LinearF32(f.fc1), l2 = w.LinearF32(f.fc2);
  return fb::CreateFeedForward(w.fbb(), static_cast<uint32_t>(f.dim), static_cast<uint32_t>(f.hidden),
                               static_cast<fb::Activation>(f.act), l1, l2);
}

void add_norm_tensors(std::vector<TensorEntry>* out, const std::string& layer, const std::string& role,
                      const fb::LayerNorm* n) {
  add_tensor(out, layer, role + ".gain", n->gain());
  add_tensor(out, layer, role + ".bias", n->bias());
}

void add_ffn_tensors(std::vector<TensorEntry>* out, const std::string& layer, const std::string& role,
                     const fb::FeedForward* f) {
  add_linear(out, layer, role + "fc1", f->fc1());
  add_linear(out, layer, role + "fc2", f->fc2());
}

void print_norm(std::ostream& os, const char* role, const fb::LayerNorm* n) {
  os << "  " << role << ": LayerNorm eps " << n->eps() << ", E " << n->eps_term() << "\n";
  print_act(os, "    input", n->input(), n->input16());
  print_act(os, "    output", n->output());
  print_act(os, "    output16", n->output16(), true);
}

void print_ffn(std::ostream& os, const char* role, const fb::FeedForward* f, bool output16) {
  os << "  " << role << ": " << f->dim() << " -> " << f->hidden_dim() << " ("
     << fb::EnumNameActivation(f->activation()) << ") -> " << f->dim() << "\n";
  print_linear(os, "fc1", f->fc1());
  print_linear(os, "fc2", f->fc2(), output16);
}

void print_add(std::ostream& os, const char* role, const char* in, const fb::ResidualAdd* a, bool int16) {
  os << "  " << role << ": residual add in " << in << "'s epilogue, residual multiplier " << a->a_multiplier()
     << " >> " << a->shift() << "\n";
  print_act(os, "    residual", a->a(), int16);
  print_act(os, "    output", a->output(), int16);
}

flatbuffers::Offset<fb::Add> add_table_s8(ModelWriter& w, int dim, const ActQuantParams& x, const ActQuantParams& r,
                                          const ActQuantParams& y, const std::string& what, bool residual16) {
  for (int n = residual16 ? kernels::kAdd16MaxShift : kernels::kAddMaxShift; n >= 1; --n) {
    const double a = std::nearbyint(x.scale / y.scale * std::ldexp(1.0, n));
    const double b = std::nearbyint(r.scale / y.scale * std::ldexp(1.0, n));
    if (a > kernels::kAddMaxMultiplier || b > kernels::kAddMaxMultiplier) continue;
    const auto fr = residual16 ? w.Act16(r) : w.Act(r), fy = residual16 ? w.Act16(y) : w.Act(y);
    return fb::CreateAdd(w.fbb(), static_cast<uint32_t>(dim), w.Act(x), fr, fy, static_cast<int32_t>(a),
                         static_cast<int32_t>(b), n, residual16);
  }
  fail(what, ": an input's step is ", std::max(x.scale, r.scale) / y.scale,
       " output steps (at most 2^20: the output range is far narrower than the inputs'; check the calibration data)");
}

void print_add_table(std::ostream& os, const char* role, const fb::Add* a) {
  const double step = std::ldexp(1.0, a->shift());
  os << "  " << role << ": add, A " << a->input_multiplier() << ", B " << a->residual_multiplier() << ", shift "
     << a->shift() << " (input steps " << a->input_multiplier() / step << " and " << a->residual_multiplier() / step
     << " output steps)\n";
  print_act(os, "    input", a->input());
  print_act(os, "    residual", a->residual(), a->residual16());
  print_act(os, "    output", a->output(), a->residual16());
}

}  // namespace convert
}  // namespace edgeattn
