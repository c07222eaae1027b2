// Float64 forward pass of every layer kind, written directly from the model
// definitions (PyTorch semantics). Used to calibrate activation ranges and as
// the reference of the accuracy report.
#ifndef EDGEATTN_CONVERTER_FLOAT_REFERENCE_H_
#define EDGEATTN_CONVERTER_FLOAT_REFERENCE_H_

#include <cstddef>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace edgeattn {
namespace convert {

enum class LayerKind { kMha, kAdditive, kLuong, kPooling };
enum class MaskKind { kNone, kKeyPadding, kCausal };
enum class LuongKind { kDot, kGeneral, kScaledDot };

const char* kind_name(LayerKind k);

// y = W x + b, W row-major [out][in].
struct FloatLinear {
  int in = 0, out = 0;
  std::vector<double> w;
  std::vector<double> b;  // empty: no bias
  std::string w_name, b_name;
  // w transposed into stripes of 8 outputs ([out/8][in][8]) for the float
  // reference's linear(), made at its first call: re-making it for every
  // sample (and freeing it again) was a third of a large conversion's time.
  mutable std::vector<double> stripes;
};

// One attention layer with its weights, resolved from the spec and the weights file.
struct FloatLayer {
  std::string name;
  LayerKind kind = LayerKind::kMha;
  MaskKind mask = MaskKind::kNone;
  int max_q_len = 0, max_kv_len = 0;
  int query_dim = 0, key_dim = 0, value_dim = 0, output_dim = 0;
  bool cross = false;          // MHA: separate key/value sequence
  bool kv_cache = false;       // MHA: causal self-attention that decodes with a KV cache
  double scale = 1.0;          // softmax scale (MHA, Luong)
  // MHA
  int num_heads = 1, head_dim = 0;
  int num_kv_heads = 1;        // K/V heads (grouped-query attention when < num_heads)
  FloatLinear q_proj, k_proj, v_proj, out_proj;
  // additive: w_q (no bias), w_k (+ b), v [attn_dim]; pooling: v = the query [dim]
  int attn_dim = 0;
  FloatLinear w_q, w_k;
  std::vector<double> v;
  std::string v_name;
  // additive coverage: w_c [attn_dim] (PyTorch W_c = nn.Linear(1, attn_dim,
  // bias=False), weight [attn_dim, 1]); the query rows of a sample are the
  // successive decoding steps of one sequence (coverage starts at 0)
  bool coverage = false;
  std::vector<double> w_c;
  std::string w_c_name;
  // Luong
  LuongKind luong = LuongKind::kDot;
  FloatLinear w;               // General: W^T as Linear(query_dim -> key_dim)

  int heads() const { return kind == LayerKind::kMha ? num_heads : 1; }
  bool self_attention() const { return kind == LayerKind::kMha && !cross; }
};

// Min/max of a tensor over the calibration set; with keep_values also every
// value (as float), for the calibration methods that look at the distribution.
struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  size_t count = 0;
  bool keep_values = false;
  std::vector<float> values;
  // Each calibration sample's own min and max of the tensor, in sample order
  // (calibrate() fills them; samples where the tensor had no value are left
  // out): what --calib-headroom auto estimates the range's ends from.
  std::vector<double> sample_lo, sample_hi;
  void add(double x) {
    if (x != x) return;  // NaN
    if (x < lo) lo = x;
    if (x > hi) hi = x;
    ++count;
    if (keep_values) values.push_back(static_cast<float>(x));
  }
};
// Keys: query key value q_proj k_proj v_proj context output w_q w_k pre_tanh w.
using RangeMap = std::map<std::string, Range>;

// One sample. Self-attention: key == value == query (kv_len = q_len); value
// null means value = key. valid < 0: all keys valid.
struct SampleInput {
  const double* query = nullptr;  // [q_len][query_dim] (unused by pooling)
  const double* key = nullptr;    // [kv_len][key_dim]
  const double* value = nullptr;  // [kv_len][value_dim]
  int q_len = 0, kv_len = 0, valid = -1;
};

// Computes out [q_len][output_dim] (pooling: q_len = 1) and, if weights is
// non-null, attention weights [heads][q_len][kv_len] (0 on masked keys).
// If ranges is non-null, adds this sample's tensors to it; for self-attention
// with key padding only valid query rows are recorded (padded rows are
// meaningless), and key-side tensors only over valid keys.
void forward(const FloatLayer& layer, const SampleInput& in, std::vector<double>* out,
             std::vector<double>* weights, RangeMap* ranges);
// The same into caller storage: out [output_size()], weights [weights_size()]
// or null; every element is written.
void forward(const FloatLayer& layer, const SampleInput& in, double* out, double* weights, RangeMap* ranges);
size_t output_size(const FloatLayer& layer, const SampleInput& in);
size_t weights_size(const FloatLayer& layer, const SampleInput& in);

// First key a row may not see (the kernels' attention_row_limit in float).
int row_limit(const FloatLayer& layer, int row, int q_len, int kv_len, int valid);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_FLOAT_REFERENCE_H_
