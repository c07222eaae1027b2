// Range mode (issue 10 item 3, docs/quantization.md "Beyond the calibrated
// range"): an int8 layer run as if every activation scale that follows from
// its inputs were R times the calibrated one, R = range_q16 / 2^16 >= 1.
//
// What changes, all in integer arithmetic (the kernels are not touched):
//  - a projection whose input and output scales both grow by R keeps its
//    multiplier (s_x s_w / s_y); only the real part of its folded bias
//    (round(b / (s_x s_w)), docs "Linear layers") shrinks by R:
//        bias' = round((bias + zp_x sum_k w) / R) - zp_x sum_k w
//    which lies between the fold and the original bias, so it keeps the
//    accumulator headroom Model::Load checked (checker.h BiasFits);
//  - the softmax score multiplier (c = s_q s_k scale) grows by R^2 (pooling:
//    R, its learned query keeps its scale): M * R rounded back to [2^30, 2^31)
//    with the shift adjusted, twice; a shift beyond kMaxShift is refused;
//  - additive layers: the pre-tanh multiplier (projected q + k to the tanh
//    table's fixed input scale) grows by R; their score multiplier (tanh
//    outputs times the fixed v weights) does not;
//  - the P.V multiplier (s_v / s_ctx) and every zero point are unchanged.
// Float appears only in RunFloat, where float inputs are quantized.
#include <cmath>
#include <cstring>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/edgeattn_generated.h"
#include "edgeattn/kernels/packed_weights.h"
#include "edgeattn/kernels/requant.h"
#include "layers/layer_kind.h"
#include "model_access.h"

namespace edgeattn {
namespace {

// floor(a / b) for b > 0.
int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

}  // namespace

// (m, shift) := the multiplier m * 2^(shift - 31) times range_q16 / 2^16,
// renormalized to m in [2^30, 2^31). False if the shift leaves the range.
bool scale_multiplier(int32_t* m, int32_t* shift, uint32_t range_q16) {
  const uint64_t p = static_cast<uint64_t>(*m) * range_q16;  // < 2^31 * 2^25
  int bits = 0;
  for (uint64_t v = p; v != 0; v >>= 1) ++bits;
  int drop = bits - 31;  // p >= 2^46, so drop >= 16
  uint64_t mr = (p + (uint64_t{1} << (drop - 1))) >> drop;
  if (mr == (uint64_t{1} << 31)) {
    mr >>= 1;
    ++drop;
  }
  const int32_t s = *shift + drop - 16;
  if (s > kernels::kMaxShift) return false;
  *m = static_cast<int32_t>(mr);
  *shift = s;
  return true;
}

// *m 2^(*shift - 31) divided by R (the coverage term, which adds a fixed real
// amount to a pre-tanh sum whose step is R times larger): (m 2^32 / R_q16)
// normalized back to 31 bits, rounded. False if the shift leaves the range.
bool divide_multiplier(int32_t* m, int32_t* shift, uint32_t range_q16) {
  const uint64_t p = (static_cast<uint64_t>(*m) << 32) / range_q16;  // (m / R) 2^16, >= 2^15 m / 256
  int bits = 0;
  for (uint64_t v = p; v != 0; v >>= 1) ++bits;
  int drop = bits - 31;  // p >= 2^(30 + 32 - 25), so drop >= 6
  uint64_t mr = (p + (uint64_t{1} << (drop - 1))) >> drop;
  if (mr == (uint64_t{1} << 31)) {
    mr >>= 1;
    ++drop;
  }
  const int32_t s = *shift + drop - 16;
  if (s < kernels::kMinShift) return false;
  *m = static_cast<int32_t>(mr);
  *shift = s;
  return true;
}

namespace {

// One projection's biases divided by R (see the top of the file) into r.bias.
const int32_t* adjust_bias(const fb::Model& model, const fb::Linear* l, const RangeScale& r) {
  const int in = static_cast<int>(l->in_features());
  const int out = static_cast<int>(l->out_features());
  const int kp = kernels::packed_k(in);
  const int8_t* w = tensor_data<int8_t>(model, l->weight());
  const int32_t* bias = tensor_data<int32_t>(model, l->bias());
  const int64_t zp = l->input()->zero_point();
  const int64_t den = 2 * static_cast<int64_t>(r.range_q16);
  for (int n = 0; n < out; ++n) {
    int64_t sum_w = 0;
    if (zp != 0) {
      for (int k = 0; k < in; ++k) sum_w += w[kernels::packed_offset(n, k, kp)];
    }
    const int64_t fold = zp * sum_w;
    const int64_t real = static_cast<int64_t>(bias[n]) + fold;  // round(b / (s_x s_w))
    // round(real / R) = floor((2 real 2^16 + R_q16) / (2 R_q16)), ties up.
    const int64_t scaled = floor_div(real * 2 * 65536 + r.range_q16, den);
    r.bias[n] = static_cast<int32_t>(scaled - fold);
  }
  return r.bias;
}

// The range rule of a kind (its module's layers::range_rule_<name>), or null.
const RangeRule* kind_range_rule(int kind) {
  switch (kind) {
#define EA_LAYER_KIND(name, ENUM, value, file_options, description) \
  case EA_LAYER_##ENUM:                                              \
    return &layers::range_rule_##name;
#include "edgeattn/layer_kinds.def"
#undef EA_LAYER_KIND
    default:
      return nullptr;
  }
}

// The layer's rule, if its kind has one and the layer has a softmax to
// rescale.
const RangeRule* range_rule(const fb::Layer& l) {
  const LayerKindModule* kind = find_layer_kind(l.options_type());
  const RangeRule* rule = kind != nullptr ? kind_range_rule(kind->kind) : nullptr;
  return rule != nullptr && rule->softmax(l) != nullptr ? rule : nullptr;
}

// Why range mode refuses layer l: its kind, and the kinds that have a rule.
void refuse_kind(ErrorMessage& e, const char* name, const fb::Layer& l) {
  e << "layer '" << name << "': range mode does not support " << layer_kind_option_name(l.options_type())
    << " layers (it rescales the softmax of:";
  for (int k = 0; k < EA_LAYER_KIND_COUNT; ++k) {
    if (find_layer_kind(k) != nullptr && kind_range_rule(k) != nullptr) e << " " << ea_layer_kind_name(static_cast<ea_layer_kind>(k));
  }
  e << ")";
}

// The inputs a layer reads (as the interpreter decides them): no query for a
// learned one, no key or value for self-attention (keys are the query rows).
struct Reads {
  bool query, key, value;
};
Reads reads_of(const LayerInfo& info) {
  const LayerKindModule* kind = find_layer_kind(static_cast<int>(info.kind));
  const bool learned = kind != nullptr && kind->learned_query;
  const bool self = !info.cross;
  return Reads{!learned, !self, !self && !learned};
}

// Widest projection of the layer (its bias workspace), 0 if none.
uint32_t max_out_features(const fb::Layer& l) {
  const LayerKindModule* kind = find_layer_kind(l.options_type());
  const fb::Linear* lin[kMaxLayerLinears] = {};
  const int n = kind != nullptr ? kind->linears(l, lin) : 0;
  uint32_t widest = 0;
  for (int i = 0; i < n; ++i) {
    if (lin[i] != nullptr && lin[i]->out_features() > widest) widest = lin[i]->out_features();
  }
  return widest;
}

struct Staging {
  uint64_t bias, query, key, value, output;
  uint64_t total() const { return bias + query + key + value + output; }
};

// Range workspace of one layer at these lengths.
Staging staging_of(const Model& model, int layer, int q_len, int kv_len) {
  LayerInfo info;
  model.GetLayerInfo(layer, &info);
  const Reads reads = reads_of(info);
  const uint64_t q = reads.query ? static_cast<uint64_t>(q_len) : 1;
  const uint64_t kv = static_cast<uint64_t>(kv_len);
  Staging s = {};
  s.bias = align_up(uint64_t{4} * max_out_features(*model.layer(layer)));
  s.query = reads.query ? align_up(q * static_cast<uint64_t>(info.query_dim)) : 0;
  s.key = reads.key ? align_up(kv * static_cast<uint64_t>(info.key_dim)) : 0;
  s.value = reads.value ? align_up(kv * static_cast<uint64_t>(info.value_dim)) : 0;
  s.output = align_up(q * static_cast<uint64_t>(info.output_dim) * elem_size(info.output_dtype));  // (mha int16 output)
  return s;
}

// The factor R that brings [lo, hi] of `rows` x `dim` floats into the int8
// range of q (1 if already inside); false on a non-finite value.
bool needed_range(const float* x, size_t count, const ea_quant& q, float* range) {
  float mx = 0.0f, mn = 0.0f;
  for (size_t i = 0; i < count; ++i) {
    const float v = x[i];
    if (!std::isfinite(v)) return false;
    mx = v > mx ? v : mx;
    mn = v < mn ? v : mn;
  }
  const float hi = q.scale * static_cast<float>(127 - q.zero_point);
  const float lo = q.scale * static_cast<float>(-128 - q.zero_point);
  float r = 1.0f;
  if (hi > 0.0f && mx / hi > r) r = mx / hi;
  if (lo < 0.0f && mn / lo > r) r = mn / lo;
  if (r > *range) *range = r;
  return true;
}

void quantize(const float* x, size_t count, const ea_quant& q, float range, int8_t* out) {
  const float inv = 1.0f / (q.scale * range);
  for (size_t i = 0; i < count; ++i) {
    const float v = std::floor(x[i] * inv + 0.5f) + static_cast<float>(q.zero_point);
    out[i] = static_cast<int8_t>(v < -128.0f ? -128.0f : (v > 127.0f ? 127.0f : v));
  }
}

bool overlaps(const void* a, size_t an, const void* b, size_t bn) {
  if (a == nullptr || b == nullptr || an == 0 || bn == 0) return false;
  const uintptr_t a0 = reinterpret_cast<uintptr_t>(a), b0 = reinterpret_cast<uintptr_t>(b);
  return a0 < b0 + bn && b0 < a0 + an;
}

}  // namespace

size_t Model::RangeBytes(int max_q_len, int max_kv_len) const {
  uint64_t most = 0;
  for (int i = 0; i < num_layers(); ++i) {
    if (ShapeOf(i).dtype != EA_S8) continue;
    const uint64_t t =
        staging_of(*this, i, CappedQLen(i, max_q_len), CappedKvLen(i, max_kv_len)).total();
    most = t > most ? t : most;
  }
  return static_cast<size_t>(most);
}

uint8_t* Interpreter::RangeWorkspace(size_t* bytes) const {
  const uint64_t start = align_up(align_up(plan_bytes_) + xnn_bytes_);
  *bytes = arena_bytes_ > start ? arena_bytes_ - static_cast<size_t>(start) : 0;
  return arena_ + static_cast<size_t>(start);
}

Status Interpreter::PrepareRange(int layer, const RunArgs& args, uint32_t range_q16,
                                 uint64_t workspace_bytes, RangeScale* rs) {
  const fb::Layer* l = model_->layer(layer);
  const char* name = l->name()->c_str();
  if (ShapeIsS8(layer) == false) {
    error_ << "layer '" << name << "': range mode is for int8 layers";
    return Status::kInvalidArgument;
  }
  const RangeRule* rule = range_rule(*l);
  if (rule == nullptr) {
    refuse_kind(error_, name, *l);
    return Status::kUnsupported;
  }
  if (args.use_cached_keys) {
    error_ << "layer '" << name << "': range mode recomputes the keys (use_cached_keys"
           << " holds them at the calibrated scales)";
    return Status::kUnsupported;
  }
  if (range_q16 < kRangeOne || range_q16 > kRangeMax) {
    error_ << "layer '" << name << "': range " << range_q16 << " (Q16) is outside "
           << kRangeOne << ".." << kRangeMax;
    return Status::kInvalidArgument;
  }
  // Score multiplier: times R per factor that scales (RangeRule), then the
  // kind's other multipliers.
  const fb::SoftmaxQuant* sq = rule->softmax(*l);
  int32_t m = sq->score_multiplier(), s = sq->score_shift();
  RangeScale more = {};
  bool fits = true;
  for (int i = 0; i < rule->score_factors; ++i) fits = fits && scale_multiplier(&m, &s, range_q16);
  if (rule->scale_more != nullptr) fits = fits && rule->scale_more(*l, range_q16, &more);
  if (!fits) {
    error_ << "layer '" << name << "': range " << range_q16
           << " (Q16) takes a requantization shift beyond " << kernels::kMinShift << ".."
           << kernels::kMaxShift;
    return Status::kInvalidArgument;
  }
  size_t avail = 0;
  uint8_t* ws = RangeWorkspace(&avail);
  const uint64_t bias_bytes = align_up(uint64_t{4} * max_out_features(*l));
  if (avail < workspace_bytes || avail < bias_bytes) {
    error_ << "layer '" << name << "': range mode needs " << workspace_bytes
           << " arena bytes after the plan (Model::RangeBytes), " << static_cast<uint64_t>(avail)
           << " are left";
    return Status::kArenaTooSmall;
  }
  rs->range_q16 = range_q16;
  rs->score_mult = m;
  rs->score_shift = s;
  rs->pre_mult = more.pre_mult;
  rs->pre_shift = more.pre_shift;
  rs->cov_mult = more.cov_mult;
  rs->cov_shift = more.cov_shift;
  rs->bias = reinterpret_cast<int32_t*>(ws);
  rs->adjust_bias = adjust_bias;
  return Status::kOk;
}

bool Interpreter::ShapeIsS8(int layer) const { return model_->ShapeOf(layer).dtype == EA_S8; }

Status Interpreter::RunScaled(int layer, const RunArgs& args, uint32_t range_q16) {
  Status s = CheckLayer(layer);
  if (s != Status::kOk) return s;
  RangeScale rs = {};
  s = PrepareRange(layer, args, range_q16, 0, &rs);
  if (s != Status::kOk) return s;
  return RunWith(layer, args, &rs, arena_bytes_);
}

Status Interpreter::RunFloat(int layer, const RunArgs& args, int policy, uint32_t* range_q16) {
  Status s = CheckLayer(layer);
  if (s != Status::kOk) return s;
  if (range_q16 != nullptr) *range_q16 = kRangeOne;
  if (!ShapeIsS8(layer)) return Run(layer, args);
  const fb::Layer* l = model_->layer(layer);
  const char* name = l->name()->c_str();
  LayerInfo info;
  model_->GetLayerInfo(layer, &info);
  if (range_rule(*l) == nullptr) {
    refuse_kind(error_, name, *l);
    return Status::kUnsupported;
  }
  const Reads reads = reads_of(info);
  const bool pooling = !reads.query;  // a learned query: one output row
  const bool self = !info.cross;      // keys and values are the query rows
  if (policy != EA_RANGE_STATIC && policy != EA_RANGE_DYNAMIC && policy != EA_RANGE_DYNAMIC_POW2) {
    error_ << "unknown range policy " << policy;
    return Status::kInvalidArgument;
  }
  // The lengths and inputs the layer reads (Run checks the rest).
  const int q_len = pooling ? 1 : args.q_len;
  const int kv_len = self ? args.q_len : args.kv_len;
  const int max_q = model_->CappedQLen(layer, q_cap_), max_kv = model_->CappedKvLen(layer, kv_cap_);
  if (q_len < 1 || kv_len < 1 || q_len > max_q || kv_len > max_kv ||
      (self && args.kv_len != 0 && args.kv_len != args.q_len) || args.kv_valid_len > kv_len) {
    error_ << "layer '" << name << "': lengths " << q_len << " / " << kv_len << " (valid "
           << args.kv_valid_len << ") are outside 1.." << max_q << " / 1.." << max_kv;
    return Status::kInvalidArgument;
  }
  const float* query = pooling ? nullptr : static_cast<const float*>(args.query);
  const float* key = self ? nullptr : static_cast<const float*>(args.key);
  const float* value = self || pooling
                           ? nullptr
                           : static_cast<const float*>(args.value != nullptr ? args.value : args.key);
  const size_t nq = static_cast<size_t>(q_len) * info.query_dim;
  const size_t nk = static_cast<size_t>(kv_len) * info.key_dim;
  const size_t nv = static_cast<size_t>(kv_len) * info.value_dim;
  const size_t no = static_cast<size_t>(q_len) * info.output_dim;
  float* output = static_cast<float*>(args.output);
  if (output == nullptr || (!pooling && query == nullptr) || (!self && key == nullptr)) {
    error_ << "layer '" << name << "': a required input or output pointer is null";
    return Status::kInvalidArgument;
  }
  if (args.use_cached_keys) {
    error_ << "layer '" << name << "': RunFloat quantizes keys per call (no use_cached_keys)";
    return Status::kUnsupported;
  }
  // attn_weights (uint16, checked again by Run against the plan's bytes)
  // must not reach into the staging buffers either.
  const void* bufs[5] = {query, key, value, output, args.attn_weights};
  const size_t sizes[5] = {nq * 4, nk * 4, nv * 4, no * 4,
                           static_cast<size_t>(info.num_heads) * q_len * kv_len * 2};
  for (int i = 0; i < 5; ++i) {
    if (i < 4 && bufs[i] != nullptr && reinterpret_cast<uintptr_t>(bufs[i]) % 4 != 0) {
      error_ << "layer '" << name << "': float buffers must be 4-byte aligned";
      return Status::kInvalidArgument;
    }
    if (overlaps(bufs[i], sizes[i], arena_, arena_bytes_)) {
      error_ << "layer '" << name << "': a caller buffer overlaps the arena";
      return Status::kInvalidArgument;
    }
  }

  // R: the largest factor any read input needs beyond its int8 range.
  float need = 1.0f;
  const size_t kv_rows = static_cast<size_t>(args.kv_valid_len > 0 ? args.kv_valid_len : kv_len);
  bool finite = true;
  if (query != nullptr) finite = needed_range(query, nq, info.query_quant, &need);
  if (finite && key != nullptr) finite = needed_range(key, kv_rows * info.key_dim, info.key_quant, &need);
  if (finite && value != nullptr) {
    finite = needed_range(value, kv_rows * info.value_dim, info.value_quant, &need);
  }
  if (!finite) {
    error_ << "layer '" << name << "': an input is not finite";
    return Status::kInvalidArgument;
  }
  uint32_t range = kRangeOne;
  if (policy != EA_RANGE_STATIC) {
    const float r_q16 = std::ceil(need * static_cast<float>(kRangeOne));
    if (!(r_q16 <= static_cast<float>(kRangeMax))) {
      error_ << "layer '" << name << "': the inputs are beyond " << kRangeMax / kRangeOne
             << "x the calibrated range";
      return Status::kInvalidArgument;
    }
    range = static_cast<uint32_t>(r_q16);
    if (policy == EA_RANGE_DYNAMIC_POW2) {
      uint32_t p = kRangeOne;
      while (p < range) p <<= 1;
      range = p;
    }
  }
  const Staging st = staging_of(*model_, layer, q_len, kv_len);
  RangeScale rs = {};
  s = PrepareRange(layer, args, range, st.total(), &rs);
  if (s != Status::kOk) return s;

  size_t avail = 0;
  uint8_t* ws = RangeWorkspace(&avail);
  int8_t* q8 = reinterpret_cast<int8_t*>(ws + st.bias);
  int8_t* k8 = reinterpret_cast<int8_t*>(ws + st.bias + st.query);
  int8_t* v8 = reinterpret_cast<int8_t*>(ws + st.bias + st.query + st.key);
  uint8_t* staged_out = ws + st.bias + st.query + st.key + st.value;
  const float rf = static_cast<float>(range) / static_cast<float>(kRangeOne);
  RunArgs a = args;
  a.query = nullptr;
  a.key = nullptr;
  a.value = nullptr;
  if (query != nullptr) {
    quantize(query, nq, info.query_quant, rf, q8);
    a.query = q8;
  }
  if (key != nullptr) {
    quantize(key, nk, info.key_quant, rf, k8);
    a.key = k8;
  }
  if (value != nullptr) {
    quantize(value, nv, info.value_quant, rf, v8);
    a.value = v8;
  }
  a.output = staged_out;
  // Staging (after the bias workspace) is ours; the plan, XNNPACK's bytes
  // and the bias workspace stay protected from the caller's buffers.
  s = RunWith(layer, a, &rs, static_cast<size_t>(ws + st.bias - arena_));
  if (s != Status::kOk) return s;
  const float out_scale = info.output_quant.scale * rf;
  if (info.output_dtype == EA_S16) {  // an mha layer's int16 output (zero point 0)
    const int16_t* o16 = reinterpret_cast<const int16_t*>(staged_out);
    for (size_t i = 0; i < no; ++i) output[i] = out_scale * static_cast<float>(o16[i]);
  } else {
    const int8_t* o8 = reinterpret_cast<const int8_t*>(staged_out);
    for (size_t i = 0; i < no; ++i) output[i] = out_scale * static_cast<float>(o8[i] - info.output_quant.zero_point);
  }
  if (range_q16 != nullptr) *range_q16 = range;
  return Status::kOk;
}

}  // namespace edgeattn
