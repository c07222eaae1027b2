// The converter's layer (FloatLayer: the fields every kind has plus the
// kind's own parameters) and its float64 forward pass, written directly from
// the model definitions (PyTorch semantics): forward() runs the layer's kind
// module (converter/kinds/), which builds on the shared numerics below. Used
// to calibrate activation ranges and as the reference of the accuracy report.
#ifndef EDGEATTN_CONVERTER_MODEL_FLOAT_REFERENCE_H_
#define EDGEATTN_CONVERTER_MODEL_FLOAT_REFERENCE_H_

#include <cstddef>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace edgeattn {
namespace convert {

enum class MaskKind { kNone, kKeyPadding, kCausal };

struct KindModule;  // converter/kinds/kind.h: everything the converter knows about one layer kind

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

// A kind's own fields (weights, options), defined in its module's header
// (converter/kinds/mha.h: MhaParams, ...). Derive from KindParamsOf<P>.
struct KindParams {
  virtual ~KindParams() = default;
  virtual std::unique_ptr<KindParams> clone() const = 0;
};
template <class P>
struct KindParamsOf : KindParams {
  std::unique_ptr<KindParams> clone() const override { return std::make_unique<P>(static_cast<const P&>(*this)); }
};

// Holds one KindParams by value (copies copy it).
class KindPayload {
 public:
  KindPayload() = default;
  KindPayload(const KindPayload& o) : p_(o.p_ ? o.p_->clone() : nullptr) {}
  KindPayload& operator=(const KindPayload& o) {
    p_ = o.p_ ? o.p_->clone() : nullptr;
    return *this;
  }
  KindPayload(KindPayload&&) = default;
  KindPayload& operator=(KindPayload&&) = default;

  // New default parameters of type P (replacing any).
  template <class P>
  P& emplace() {
    p_ = std::make_unique<P>();
    return static_cast<P&>(*p_);
  }
  // The parameters, which must be a P (a logic error otherwise).
  template <class P>
  const P& get() const {
    const P* p = dynamic_cast<const P*>(p_.get());
    if (p == nullptr) throw std::logic_error("layer parameters of another kind");
    return *p;
  }
  template <class P>
  P& get() {
    return const_cast<P&>(static_cast<const KindPayload&>(*this).get<P>());
  }

 private:
  std::unique_ptr<KindParams> p_;
};

// What one call of a layer reads and writes besides its query rows (see
// SampleInput): generic code (datasets, runner, metrics) asks this instead of
// the kind.
struct LayerIo {
  // Reads a key (and value) sequence of its own, [kv_len][key_dim]. False:
  // kv_len = q_len and any keys are the query rows (self-attention, and
  // per-row kinds that have no keys at all).
  bool keys = true;
  // Attention maps per call, [heads][q_len][kv_len]; 0: no attention weights.
  int heads = 1;
};

// One layer with its weights, resolved from the spec and the weights file
// (or, without weights, from a model's description: runner.h layer_shell).
// The fields every kind has are here; the kind's own are in `params`.
struct FloatLayer {
  std::string name;
  const KindModule* kind = nullptr;
  MaskKind mask = MaskKind::kNone;
  int max_q_len = 0, max_kv_len = 0;
  int query_dim = 0, key_dim = 0, value_dim = 0, output_dim = 0;
  // The spec's "input": the earlier layer whose output rows are this layer's
  // query (its index in the model, -1: the layer's own inputs from the data
  // files). The converter makes this layer's data by running that layer's
  // float64 forward, and gives its input the earlier output's quantization.
  int input_layer = -1;
  // The spec's "memory": the earlier layer whose output rows are this cross
  // layer's keys and values (a decoder's memory from its encoder; -1: the
  // data files' keys, or the model's memory rows).
  int memory_layer = -1;
  // The spec's "calib_method" for this layer ("minmax", "percentile",
  // "mse"), "" for the command line's --calib-method.
  std::string calib_method;
  // The spec's "calib_headroom" ("auto" or a percentage, as --calib-headroom
  // takes it), "" for the command line's.
  std::string calib_headroom;
  // Rows the layer adds to its input's (class tokens prepended: output rows
  // = q_len + added_rows; ea_layer_info.added_rows), 0 for most kinds.
  int added_rows = 0;
  // The 16-bit residual stream (convert --residual int16, issue 37): the
  // query rows / output rows are int16 (symmetric) in an int8 model.
  bool input16 = false, output16 = false;
  KindPayload params;  // the kind's parameters (kinds/<kind>.h)

  template <class P>
  const P& as() const { return params.get<P>(); }
  template <class P>
  P& as() { return params.get<P>(); }

  // Asked of the kind (kinds/registry.cc).
  LayerIo io() const;
  // The query is a learned weight: no query input, one output row (pooling).
  bool learned_query() const;
  int heads() const { return io().heads; }
  // Output rows of a call with q_len query rows: 1 with a learned query,
  // else q_len + added_rows.
  int output_rows(int q_len) const { return learned_query() ? 1 : q_len + added_rows; }
  // Attention whose keys and values are its query rows.
  bool self_attention() const {
    const LayerIo i = io();
    return !i.keys && i.heads > 0;
  }
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
  // With keep_columns, record() also keeps each column's largest |value|
  // (--smooth-alpha's per-channel maxima, converter/calibrate/smooth.h).
  bool keep_columns = false;
  std::vector<double> column_absmax;
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

// Computes out [output_rows(q_len)][output_dim] (pooling: 1 row) and, if weights is
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

// ---- numerics shared by the kinds' forwards (float_reference.cc) ----------
// Every sum is the plain loop in order, bit for bit on every machine.

// y [rows][out] = x [rows][in] W^T + b.
void linear(const FloatLinear& l, const double* x, int rows, double* y);
std::vector<double> linear(const FloatLinear& l, const double* x, int rows);
// y[r][c] = sum over k in order of x[r][k] * w[k][c] from 0.0, for r < rows,
// c < width; w row-major with row stride w_stride.
void matmul(int rows, int depth, const double* x, size_t x_stride, const double* w, size_t w_stride, int width,
            double* y, size_t y_stride);
// out[c] = sum over j < n in order of coeff[j] * rows[j * stride + c], c < width.
void weighted_row_sum(int n, const double* coeff, const double* rows, size_t stride, int width, double* out);
// Softmax over s[0..n) in place.
void softmax(double* s, int n);
// Adds rows [0, min(rows, first_row_excluded)) x cols of x (row stride
// `stride`) to ranges[key]; nothing when ranges is null.
void record(RangeMap* ranges, const char* key, const double* x, int rows, int cols, int stride,
            int first_row_excluded);

// The frame every attention kind's forward shares: which sequences are keys
// and values, the lengths, the rows that enter calibration, and writing a
// row's probabilities. Constructing it records the inputs' ranges ("query",
// "key", "value").
struct AttentionFrame {
  AttentionFrame(const FloatLayer& layer, const SampleInput& in, double* weights, RangeMap* ranges);
  const FloatLayer& L;
  int lq = 0, lk = 0, valid = 0;
  int q_rec = 0;  // query rows that enter calibration (self-attention with key padding: valid ones)
  const double* key = nullptr;
  const double* value = nullptr;
  double* weights;
  RangeMap* ranges;
  std::vector<double> s;  // one row's scores [max(lk, 1)]

  int limit(int row) const { return row_limit(L, row, lq, lk, valid); }
  // Row r of head h's weights: the first `limit` probabilities, then zeros.
  void store_weights(int h, int r, const double* p, int limit) const;
  // Softmax of s[0..limit), ctx_row = its weighted sum of `vals` rows, and the weights.
  void attend(int h, int r, int limit, const double* vals, int v_stride, int v_dim, double* ctx_row);
};

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_MODEL_FLOAT_REFERENCE_H_
