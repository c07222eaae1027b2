#include "converter/convert.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <mutex>
#include <thread>

#include "converter/calibrate.h"
#include "converter/error.h"
#include "converter/quantize.h"
#include "converter/writer.h"
#include "edgeattn/plan.h"

namespace edgeattn {
namespace convert {
namespace {

LayerShape shape_of(const FloatLayer& L, OutputType type, bool tile_scratch) {
  LayerShape s = {};
  s.dtype = type == OutputType::kInt8 ? EA_S8 : EA_F32;
  s.tile_scratch = tile_scratch;
  switch (L.kind) {
    case LayerKind::kMha:
      s.kind = EA_LAYER_MULTI_HEAD_ATTENTION;
      s.embed_dim = L.query_dim;
      s.cross = L.cross;
      s.kv_cache = L.kv_cache;
      s.kv_width = L.num_kv_heads * L.head_dim;
      s.head_dim = L.head_dim;
      s.v_dim = L.head_dim;
      break;
    case LayerKind::kAdditive:
      s.kind = EA_LAYER_ADDITIVE;
      s.attn_dim = L.attn_dim;
      s.coverage = L.coverage;
      break;
    case LayerKind::kLuong:
      s.kind = EA_LAYER_LUONG;
      s.key_dim = L.key_dim;
      s.projects_query = L.luong == LuongKind::kGeneral;
      s.head_dim = L.key_dim;
      s.v_dim = L.value_dim;
      break;
    case LayerKind::kPooling:
      s.kind = EA_LAYER_POOLING;
      s.head_dim = L.key_dim;
      s.v_dim = L.key_dim;
      break;
  }
  return s;
}

fb::LuongScore luong_score(LuongKind k) {
  switch (k) {
    case LuongKind::kDot: return fb::LuongScore::Dot;
    case LuongKind::kGeneral: return fb::LuongScore::General;
    case LuongKind::kScaledDot: return fb::LuongScore::ScaledDot;
  }
  return fb::LuongScore::Dot;
}

// Asymmetric parameters of a calibrated tensor, with errors naming the layer.
struct Calibrated {
  const RangeMap& r;
  std::string where;
  ActQuantParams operator()(const char* key) const {
    auto it = r.find(key);
    if (it == r.end()) fail(where, ": no calibration data for ", key);
    return act_quant(it->second, where + ": " + key);
  }
  const Range& range(const char* key) const {
    auto it = r.find(key);
    if (it == r.end()) fail(where, ": no calibration data for ", key);
    return it->second;
  }
};

flatbuffers::Offset<void> mha_s8(ModelWriter& w, const FloatLayer& L, const Calibrated& c) {
  const ActQuantParams qin = c("query"), kin = c("key"), vin = c("value");
  const ActQuantParams qo = c("q_proj"), ko = c("k_proj"), vo = c("v_proj");
  const ActQuantParams ctx = c("context"), out = c("output");
  const std::string& at = c.where;
  const QuantLinear q = quantize_linear(L.q_proj, qin, qo, at + ": " + L.q_proj.w_name);
  const QuantLinear k = quantize_linear(L.k_proj, kin, ko, at + ": " + L.k_proj.w_name);
  const QuantLinear v = quantize_linear(L.v_proj, vin, vo, at + ": " + L.v_proj.w_name);
  const QuantLinear o = quantize_linear(L.out_proj, ctx, out, at + ": " + L.out_proj.w_name);
  const Requant score = requant(qo.scale * ko.scale * L.scale * kLog2e * 65536.0, at + ": softmax score");
  const Requant pv = requant(vo.scale / (32768.0 * ctx.scale), at + ": softmax output");
  const auto fq = w.LinearS8(q, L.q_proj), fk = w.LinearS8(k, L.k_proj);
  const auto fv = w.LinearS8(v, L.v_proj), fo = w.LinearS8(o, L.out_proj);
  const auto sm = w.Softmax(score, pv);
  return fb::CreateMultiHeadAttention(w.fbb(), L.query_dim, L.key_dim, L.value_dim, L.num_heads,
                                      L.head_dim, L.cross, L.mask == MaskKind::kCausal,
                                      static_cast<float>(L.scale), fq, fk, fv, fo, sm, L.kv_cache,
                                      static_cast<uint32_t>(L.num_kv_heads)).Union();
}

flatbuffers::Offset<void> mha_f32(ModelWriter& w, const FloatLayer& L) {
  const auto fq = w.LinearF32(L.q_proj), fk = w.LinearF32(L.k_proj);
  const auto fv = w.LinearF32(L.v_proj), fo = w.LinearF32(L.out_proj);
  return fb::CreateMultiHeadAttention(w.fbb(), L.query_dim, L.key_dim, L.value_dim, L.num_heads,
                                      L.head_dim, L.cross, L.mask == MaskKind::kCausal,
                                      static_cast<float>(L.scale), fq, fk, fv, fo, 0, L.kv_cache,
                                      static_cast<uint32_t>(L.num_kv_heads)).Union();
}

flatbuffers::Offset<void> additive_s8(ModelWriter& w, const FloatLayer& L, const Calibrated& c) {
  const std::string& at = c.where;
  const ActQuantParams qin = c("query"), kin = c("key");
  const ActQuantParams val = c.r.count("value") ? c("value") : kin;
  // w_q and w_k outputs share one scale so the kernel can add them exactly.
  const Range& rq = c.range("w_q");
  const Range& rk = c.range("w_k");
  const ActQuantParams pq = act_quant(rq, at + ": w_q"), pk = act_quant(rk, at + ": w_k");
  const double span_q = std::max(rq.hi, 0.0) - std::min(rq.lo, 0.0);
  const double span_k = std::max(rk.hi, 0.0) - std::min(rk.lo, 0.0);
  double s_h = std::max(span_q, span_k) / 255.0;
  if (!(s_h > 0.0)) s_h = 1.0 / 255.0;
  s_h = static_cast<double>(static_cast<float>(s_h));
  (void)pq;
  (void)pk;
  auto zp = [&](const Range& r) {
    return static_cast<int>(std::clamp(std::round(-128.0 - std::min(r.lo, 0.0) / s_h), -128.0, 127.0));
  };
  const ActQuantParams oq{s_h, zp(rq)}, ok{s_h, zp(rk)};
  const QuantLinear wq = quantize_linear(L.w_q, qin, oq, at + ": " + L.w_q.w_name);
  const QuantLinear wk = quantize_linear(L.w_k, kin, ok, at + ": " + L.w_k.w_name);
  const TanhTable tt = tanh_table(c.range("pre_tanh"), at);
  const Requant pre = requant(s_h / tt.index.scale, at + ": pre-tanh");
  const QuantVector v = quantize_symmetric(L.v);
  const ActQuantParams out = c("output");
  const Requant score = requant(v.scale / 127.0 * kLog2e * 65536.0, at + ": softmax score");
  const Requant pv = requant(val.scale / (32768.0 * out.scale), at + ": softmax output");
  const auto fq = w.LinearS8(wq, L.w_q), fk = w.LinearS8(wk, L.w_k);
  const auto fv = w.TensorS8(L.v_name, {static_cast<uint32_t>(L.attn_dim)}, 1, L.attn_dim, v.q.data(),
                             {static_cast<float>(v.scale)});
  // Coverage: w_c symmetric int8 (scale s_wc); the term w_c c_j in units of
  // s_h with c_j in Q15: requantize(w_c8 * c_j) by s_wc / (32768 s_h).
  flatbuffers::Offset<fb::Tensor> fwc = 0;
  Requant cov{int32_t{1} << 30, -31};  // 2^-32: stays unused without coverage (or w_c = 0)
  if (L.coverage) {
    QuantVector wc = quantize_symmetric(L.w_c);
    const double r = wc.scale / (32768.0 * s_h);
    bool zero = true;
    for (int8_t x : wc.q) zero = zero && x == 0;
    // Below 2^-32 the term |w_c c_j| / s_h < 127 * 2^24 * 2^-32 < 1 of s_h:
    // negligible, stored as w_c = 0 (the term is exactly 0).
    if (!zero && r < std::ldexp(1.0, -32)) {
      std::fill(wc.q.begin(), wc.q.end(), int8_t{0});
      zero = true;
    }
    if (!zero) {
      cov = requant(r, at + ": coverage");
      if (cov.shift > 0) {
        fail(at, ": coverage multiplier ", r, " exceeds 1 (w_c too large for the w_q/w_k output scale)");
      }
    }
    fwc = w.TensorS8(L.w_c_name, {static_cast<uint32_t>(L.attn_dim)}, 1, L.attn_dim, wc.q.data(),
                     {static_cast<float>(wc.scale)});
  }
  const auto fpre = w.Requants({pre});
  const auto fval = w.Act(val), fout = w.Act(out);
  const auto sm = w.Softmax(score, pv);
  return fb::CreateAdditiveAttentionDirect(w.fbb(), L.query_dim, L.key_dim, L.attn_dim, L.value_dim,
                                           fq, fk, fv, fpre, tt.index.zero_point,
                                           static_cast<float>(tt.index.scale), &tt.table, fval, fout, sm,
                                           L.coverage, fwc, cov.multiplier, cov.shift)
      .Union();
}

flatbuffers::Offset<void> additive_f32(ModelWriter& w, const FloatLayer& L) {
  const auto fq = w.LinearF32(L.w_q), fk = w.LinearF32(L.w_k);
  const auto fv = w.TensorF32(L.v_name, 0, L.attn_dim, L.v.data());
  const auto fwc = L.coverage ? w.TensorF32(L.w_c_name, 0, L.attn_dim, L.w_c.data()) : 0;
  fb::AdditiveAttentionBuilder b(w.fbb());
  b.add_query_dim(L.query_dim);
  b.add_key_dim(L.key_dim);
  b.add_attn_dim(L.attn_dim);
  b.add_value_dim(L.value_dim);
  b.add_w_q(fq);
  b.add_w_k(fk);
  b.add_v(fv);
  if (L.coverage) {
    b.add_coverage(true);
    b.add_w_c(fwc);
  }
  return b.Finish().Union();
}

flatbuffers::Offset<void> luong_s8(ModelWriter& w, const FloatLayer& L, const Calibrated& c) {
  const std::string& at = c.where;
  const ActQuantParams qin = c("query"), kin = c("key");
  const ActQuantParams vin = c.r.count("value") ? c("value") : kin;
  const ActQuantParams out = c("output");
  double s_q = qin.scale;
  flatbuffers::Offset<fb::Linear> fw = 0;
  if (L.luong == LuongKind::kGeneral) {
    const ActQuantParams wo = c("w");
    fw = w.LinearS8(quantize_linear(L.w, qin, wo, at + ": " + L.w.w_name), L.w);
    s_q = wo.scale;
  }
  const Requant score = requant(s_q * kin.scale * L.scale * kLog2e * 65536.0, at + ": softmax score");
  const Requant pv = requant(vin.scale / (32768.0 * out.scale), at + ": softmax output");
  const auto fqi = w.Act(qin), fki = w.Act(kin), fvi = w.Act(vin), fo = w.Act(out);
  const auto sm = w.Softmax(score, pv);
  return fb::CreateLuongAttention(w.fbb(), luong_score(L.luong), L.query_dim, L.key_dim, L.value_dim,
                                  static_cast<float>(L.scale), fw, fqi, fki, fvi, fo, sm)
      .Union();
}

flatbuffers::Offset<void> luong_f32(ModelWriter& w, const FloatLayer& L) {
  flatbuffers::Offset<fb::Linear> fw = 0;
  if (L.luong == LuongKind::kGeneral) fw = w.LinearF32(L.w);
  return fb::CreateLuongAttention(w.fbb(), luong_score(L.luong), L.query_dim, L.key_dim, L.value_dim,
                                  static_cast<float>(L.scale), fw)
      .Union();
}

flatbuffers::Offset<void> pooling_s8(ModelWriter& w, const FloatLayer& L, const Calibrated& c) {
  const std::string& at = c.where;
  const ActQuantParams h = c("key");
  const QuantVector q = quantize_symmetric(L.v);
  const Requant score = requant(q.scale * h.scale * kLog2e * 65536.0, at + ": softmax score");
  const Requant pv = requant(1.0 / 32768.0, at + ": softmax output");
  const auto fq = w.TensorS8(L.v_name, {static_cast<uint32_t>(L.key_dim)}, 1, L.key_dim, q.q.data(),
                             {static_cast<float>(q.scale)});
  const auto fi = w.Act(h), fo = w.Act(h);
  const auto sm = w.Softmax(score, pv);
  return fb::CreateAttentionPooling(w.fbb(), L.key_dim, fq, fi, fo, sm).Union();
}

flatbuffers::Offset<void> pooling_f32(ModelWriter& w, const FloatLayer& L) {
  const auto fq = w.TensorF32(L.v_name, 0, L.key_dim, L.v.data());
  return fb::CreateAttentionPooling(w.fbb(), L.key_dim, fq).Union();
}

fb::LayerOptions options_type(LayerKind k) {
  switch (k) {
    case LayerKind::kMha: return fb::LayerOptions::MultiHeadAttention;
    case LayerKind::kAdditive: return fb::LayerOptions::AdditiveAttention;
    case LayerKind::kLuong: return fb::LayerOptions::LuongAttention;
    case LayerKind::kPooling: return fb::LayerOptions::AttentionPooling;
  }
  return fb::LayerOptions::NONE;
}

}  // namespace

ArenaPlan plan_arena(const ModelSpec& spec, OutputType type) {
  ArenaPlan a;
  std::vector<LayerPlan> plans;
  for (const FloatLayer& L : spec.layers) {
    plans.push_back(plan_layer(shape_of(L, type, spec.tile_scratch), L.max_q_len, L.max_kv_len));
    a.layer_bytes.push_back(plans.back().cache_bytes + plans.back().scratch_bytes);
  }
  // The runtime's own layout (Model::Load checks the file against it).
  a.model_bytes = lay_out_arena(plans.data(), static_cast<int>(plans.size()), nullptr).total_bytes;
  return a;
}

std::vector<uint8_t> build_model(const ModelSpec& spec, OutputType type,
                                 const std::vector<LayerData>& calib, const std::string& calib_path,
                                 const std::string& source, const ProgressFn& progress,
                                 std::vector<FloatOutputs>* reference, const CalibOptions& options,
                                 std::vector<LayerCalibration>* calibration) {
  const bool s8 = type == OutputType::kInt8;
  if (reference != nullptr) reference->assign(s8 ? spec.layers.size() : 0, FloatOutputs());
  if (calibration != nullptr) calibration->assign(s8 ? spec.layers.size() : 0, LayerCalibration());
  if (s8 && calib.size() != spec.layers.size()) fail("int8 conversion needs calibration data (--calib)");
  const ArenaPlan arena = plan_arena(spec, type);
  // Calibration (float64 passes over every sample) is most of a conversion
  // and each layer's is independent of the others: layers are calibrated on
  // up to as many threads as the machine has, then written in order (the
  // same bytes whatever the thread count).
  std::vector<LayerCalibration> found(s8 ? spec.layers.size() : 0);
  if (s8) {
    for (size_t i = 0; i < spec.layers.size(); ++i) {
      if (calib[i].n == 0) fail(calib_path, ": layer '", spec.layers[i].name, "': empty calibration set");
    }
    std::mutex progress_lock;
    std::atomic<size_t> next{0};
    std::exception_ptr error;
    auto worker = [&] {
      for (size_t i = next++; i < spec.layers.size(); i = next++) {
        if (progress) {
          const std::lock_guard<std::mutex> hold(progress_lock);
          progress(i, "calibrating on " + std::to_string(calib[i].n) + " sample" + (calib[i].n == 1 ? "" : "s") +
                          ", quantizing");
        }
        try {
          found[i] = calibrate(spec.layers[i], calib[i], options, reference != nullptr ? &(*reference)[i] : nullptr);
        } catch (...) {
          const std::lock_guard<std::mutex> hold(progress_lock);
          if (!error) error = std::current_exception();
        }
      }
    };
    const size_t threads = std::min<size_t>(spec.layers.size(), std::max(1u, std::thread::hardware_concurrency()));
    std::vector<std::thread> pool;
    for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();
    for (std::thread& t : pool) t.join();
    if (error) std::rethrow_exception(error);
  }
  ModelWriter w;
  for (size_t i = 0; i < spec.layers.size(); ++i) {
    const FloatLayer& L = spec.layers[i];
    flatbuffers::Offset<void> layer_options;
    if (s8) {
      const Calibrated c{found[i].ranges, calib_path + ": layer '" + L.name + "'"};
      switch (L.kind) {
        case LayerKind::kMha: layer_options = mha_s8(w, L, c); break;
        case LayerKind::kAdditive: layer_options = additive_s8(w, L, c); break;
        case LayerKind::kLuong: layer_options = luong_s8(w, L, c); break;
        case LayerKind::kPooling: layer_options = pooling_s8(w, L, c); break;
      }
      if (calibration != nullptr) (*calibration)[i] = std::move(found[i]);
    } else {
      if (progress) progress(i, "writing float weights");
      switch (L.kind) {
        case LayerKind::kMha: layer_options = mha_f32(w, L); break;
        case LayerKind::kAdditive: layer_options = additive_f32(w, L); break;
        case LayerKind::kLuong: layer_options = luong_f32(w, L); break;
        case LayerKind::kPooling: layer_options = pooling_f32(w, L); break;
      }
    }
    w.AddLayer(fb::CreateLayerDirect(w.fbb(), L.name.c_str(), s8 ? fb::DType::S8 : fb::DType::F32,
                                     static_cast<uint32_t>(L.max_q_len), static_cast<uint32_t>(L.max_kv_len),
                                     arena.layer_bytes[i], options_type(L.kind), layer_options,
                                     spec.tile_scratch));
  }
  return w.Finish(source, arena.model_bytes);
}

}  // namespace convert
}  // namespace edgeattn
