// Property tests over random valid models (issue 6):
//  - random layers of every kind (MHA self/causal/padding, cross MHA with
//    odd kdim/vdim and odd head dims, additive, Luong dot/scaled/general,
//    pooling) with random scales and lengths are built in-process with the
//    converter library (load_spec + load_layer_data + build_model), in int8
//    and f32;
//  - every model loads, and every run with valid arguments returns EA_OK;
//  - the int8 output and attention weights are bit-identical to the
//    reference kernels (kernels/ref.h) composed by hand from the model's
//    quantization parameters, on every kernel path the CPU supports;
//  - the cached-keys path gives the same bytes as a direct run.
#include <gtest/gtest.h>

#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "converter/base/array.h"
#include "converter/write/model_file.h"
#include "converter/model/dataset.h"
#include "converter/base/error.h"
#include "converter/spec/spec.h"
#include "edgeattn/edgeattn.hpp"
#include "edgeattn/edgeattn_generated.h"
#include "edgeattn/kernels/dispatch.h"
#include "edgeattn/kernels/ref.h"
#include "random_arrays.h"
#include "test_models.h"

namespace {

namespace cv = edgeattn::convert;
namespace fb = edgeattn::fb;
namespace k = edgeattn::kernels;
using edgeattn::Status;
using eatest::AlignedBuffer;
using eatest::Rng;

// ----------------------------------------------------- random models ----

struct RandomModel {
  std::string spec;
  cv::ArrayMap weights, calib;
  std::string description;
};

// Safetensors-style dtype name for the weights; calibration entries become "<f4" below.
cv::Array RandomTensor(Rng& rng, std::vector<size_t> shape, double sd) {
  return eatest::RandomArray(rng, std::move(shape), sd, "F32");
}

cv::Array ValidLens(Rng& rng, size_t n, int lk) {
  cv::Array a;
  a.dtype = "<i4";
  a.is_float = false;
  a.shape = {n};
  for (size_t i = 0; i < n; ++i) a.data.push_back(i == 0 ? lk : rng.uniform_int(1, lk));
  return a;
}

RandomModel MakeRandomModel(uint64_t seed) {
  Rng rng(seed);
  RandomModel m;
  std::ostringstream spec;
  spec << "{\"model\": \"random" << seed << "\", \"layers\": [";
  const int layers = rng.uniform_int(1, 3);
  const size_t n = 4;  // calibration samples
  const double wsd = 0.2 + 0.4 * (static_cast<double>(rng.next() % 1000) / 1000.0);
  for (int li = 0; li < layers; ++li) {
    const std::string name = "l" + std::to_string(li);
    const std::string p = name + ".";
    const int kind = rng.uniform_int(0, 4);
    if (li) spec << ",";
    const int lq = rng.uniform_int(1, 9);
    int lk = rng.uniform_int(1, 11);
    const char* masks[] = {"none", "key_padding", "causal"};
    if (kind == 0 || kind == 1) {  // MHA self (0) or cross (1)
      const int heads = rng.uniform_int(1, 4);
      const int hds[] = {1, 2, 3, 5, 7, 8, 9};
      const int hd = hds[rng.uniform_int(0, 6)];
      const int e = heads * hd;
      const bool cross = kind == 1;
      const char* mask = masks[rng.uniform_int(0, cross ? 1 : 2)];
      spec << "{\"name\": \"" << name << "\", \"kind\": \"mha\", \"preset\": \"torch_mha\", "
           << "\"prefix\": \"" << p << "\", \"embed_dim\": " << e << ", \"num_heads\": " << heads
           << ", \"cross\": " << (cross ? "true" : "false") << ", \"mask\": \"" << mask << "\"";
      if (rng.next() % 2) spec << ", \"scale\": " << 0.05 + 0.5 * (rng.next() % 100) / 100.0;
      m.weights[p + "out_proj.weight"] = RandomTensor(rng, {size_t(e), size_t(e)}, wsd);
      m.weights[p + "out_proj.bias"] = RandomTensor(rng, {size_t(e)}, 0.1);
      m.weights[p + "in_proj_bias"] = RandomTensor(rng, {size_t(3 * e)}, 0.1);
      if (cross) {
        const int kd = rng.uniform_int(1, 13), vd = rng.uniform_int(1, 13);
        spec << ", \"kdim\": " << kd << ", \"vdim\": " << vd << ", \"max_q_len\": " << lq
             << ", \"max_kv_len\": " << lk << "}";
        m.weights[p + "q_proj_weight"] = RandomTensor(rng, {size_t(e), size_t(e)}, wsd);
        m.weights[p + "k_proj_weight"] = RandomTensor(rng, {size_t(e), size_t(kd)}, wsd);
        m.weights[p + "v_proj_weight"] = RandomTensor(rng, {size_t(e), size_t(vd)}, wsd);
        m.calib[name + ".query"] = RandomTensor(rng, {n, size_t(lq), size_t(e)}, 1.0);
        m.calib[name + ".key"] = RandomTensor(rng, {n, size_t(lk), size_t(kd)}, 1.0);
        m.calib[name + ".value"] = RandomTensor(rng, {n, size_t(lk), size_t(vd)}, 1.0);
        m.description += " mha-cross(e=" + std::to_string(e) + ",h=" + std::to_string(heads) + ")";
      } else {
        spec << ", \"max_q_len\": " << lq << "}";
        m.weights[p + "in_proj_weight"] = RandomTensor(rng, {size_t(3 * e), size_t(e)}, wsd);
        m.calib[name + ".query"] = RandomTensor(rng, {n, size_t(lq), size_t(e)}, 1.0);
        lk = lq;
        m.description += std::string(" mha-self-") + mask + "(e=" + std::to_string(e) +
                         ",h=" + std::to_string(heads) + ")";
      }
      if (std::string(mask) == "key_padding") m.calib[name + ".kv_valid_len"] = ValidLens(rng, n, lk);
    } else if (kind == 2) {  // additive
      const int qd = rng.uniform_int(1, 12), kd = rng.uniform_int(1, 12), ad = rng.uniform_int(1, 12);
      const bool pad = rng.next() % 2;
      spec << "{\"name\": \"" << name << "\", \"kind\": \"additive\", \"prefix\": \"" << p
           << "\", \"query_dim\": " << qd << ", \"key_dim\": " << kd << ", \"attn_dim\": " << ad
           << ", \"mask\": \"" << (pad ? "key_padding" : "none") << "\", \"max_q_len\": " << lq
           << ", \"max_kv_len\": " << lk << "}";
      m.weights[p + "W_q.weight"] = RandomTensor(rng, {size_t(ad), size_t(qd)}, wsd);
      m.weights[p + "W_k.weight"] = RandomTensor(rng, {size_t(ad), size_t(kd)}, wsd);
      m.weights[p + "W_k.bias"] = RandomTensor(rng, {size_t(ad)}, 0.1);
      m.weights[p + "v.weight"] = RandomTensor(rng, {1, size_t(ad)}, 1.0);
      m.calib[name + ".query"] = RandomTensor(rng, {n, size_t(lq), size_t(qd)}, 1.0);
      m.calib[name + ".key"] = RandomTensor(rng, {n, size_t(lk), size_t(kd)}, 1.0);
      if (pad) m.calib[name + ".kv_valid_len"] = ValidLens(rng, n, lk);
      m.description += " additive";
    } else if (kind == 3) {  // Luong
      const char* scores[] = {"dot", "scaled_dot", "general"};
      const std::string score = scores[rng.uniform_int(0, 2)];
      const int kd = rng.uniform_int(1, 12);
      const int qd = score == "general" ? rng.uniform_int(1, 12) : kd;
      const int vd = rng.uniform_int(1, 12);
      spec << "{\"name\": \"" << name << "\", \"kind\": \"luong\", \"score\": \"" << score
           << "\", \"prefix\": \"" << p << "\", \"query_dim\": " << qd << ", \"key_dim\": " << kd
           << ", \"value_dim\": " << vd << ", \"max_q_len\": " << lq << ", \"max_kv_len\": " << lk;
      if (score == "dot" && rng.next() % 2) spec << ", \"scale\": 0.7";
      spec << "}";
      if (score == "general") m.weights[p + "W.weight"] = RandomTensor(rng, {size_t(qd), size_t(kd)}, wsd);
      m.calib[name + ".query"] = RandomTensor(rng, {n, size_t(lq), size_t(qd)}, 1.0);
      m.calib[name + ".key"] = RandomTensor(rng, {n, size_t(lk), size_t(kd)}, 1.0);
      m.calib[name + ".value"] = RandomTensor(rng, {n, size_t(lk), size_t(vd)}, 1.0);
      m.description += " luong-" + score;
    } else {  // pooling
      const int d = rng.uniform_int(1, 13);
      const bool pad = rng.next() % 2;
      spec << "{\"name\": \"" << name << "\", \"kind\": \"pooling\", \"prefix\": \"" << p
           << "\", \"dim\": " << d << ", \"mask\": \"" << (pad ? "key_padding" : "none")
           << "\", \"max_kv_len\": " << lk << "}";
      m.weights[p + "query.weight"] = RandomTensor(rng, {1, size_t(d)}, 0.8);
      m.calib[name + ".key"] = RandomTensor(rng, {n, size_t(lk), size_t(d)}, 1.0);
      if (pad) m.calib[name + ".kv_valid_len"] = ValidLens(rng, n, lk);
      m.description += " pooling";
    }
  }
  spec << "]}";
  m.spec = spec.str();
  for (auto& [key, a] : m.calib) a.dtype = a.is_float ? "<f4" : a.dtype;
  return m;
}

std::vector<uint8_t> Build(const RandomModel& m, cv::OutputType type) {
  const cv::ModelSpec spec = cv::load_spec("random.json", m.spec, m.weights, "random.safetensors", {});
  std::vector<cv::LayerData> calib;
  for (const auto& layer : spec.layers) {
    calib.push_back(cv::load_layer_data(m.calib, "calib.npz", layer, false));
  }
  return cv::build_model(spec, type, calib, "calib.npz", "property_test");
}

// ------------------------------------------- reference, composed by hand ----

const int8_t* S8(const fb::Model& m, const fb::Tensor* t) {
  return reinterpret_cast<const int8_t*>(m.data()->data() + t->offset());
}
const int32_t* S32(const fb::Model& m, const fb::Tensor* t) {
  return reinterpret_cast<const int32_t*>(m.data()->data() + t->offset());
}
int32_t Zp(const fb::ActQuant* q) { return q != nullptr ? q->zero_point() : 0; }

std::vector<int8_t> Linear(const fb::Model& m, const fb::Linear* l, int rows, const int8_t* x) {
  std::vector<int8_t> y(static_cast<size_t>(rows) * l->out_features() + 1);
  const auto* r = l->requant();
  k::qs8_linear__ref(rows, l->out_features(), l->in_features(), x, l->in_features(),
                     S8(m, l->weight()), S32(m, l->bias()),
                     r->multiplier()->data(), r->shift()->data(), r->multiplier()->size() > 1,
                     l->output()->zero_point(), y.data(), l->out_features());
  return y;
}

struct RefOut {
  std::vector<int8_t> out;
  std::vector<uint16_t> weights;
};

// The int8 computation of one layer from ref.h, independently of interpreter.cc.
RefOut Reference(const fb::Model& m, const fb::Layer& layer, const edgeattn::LayerInfo& info,
                 const int8_t* query, const int8_t* key, const int8_t* value, int q_len, int kv_len,
                 int valid) {
  RefOut r;
  r.out.assign(static_cast<size_t>(q_len) * info.output_dim, 0);
  r.weights.assign(static_cast<size_t>(info.num_heads) * q_len * kv_len, 0);
  std::vector<int32_t> scratch(kv_len);
  std::vector<uint16_t> probs(kv_len);
  auto base = [&]() {
    k::QS8AttentionArgs a = {};
    a.q_len = q_len;
    a.kv_len = kv_len;
    a.kv_valid_len = valid;
    a.causal_offset = kv_len - q_len;
    a.weights_stride = kv_len;
    a.scratch = scratch.data();
    a.prob_scratch = probs.data();
    return a;
  };
  switch (layer.options_type()) {
    case fb::LayerOptions::MultiHeadAttention: {
      const auto* mh = layer.options_as_MultiHeadAttention();
      const int e = mh->embed_dim(), hd = mh->head_dim();
      const auto q = Linear(m, mh->q_proj(), q_len, query);
      const auto kp = Linear(m, mh->k_proj(), kv_len, key);
      const auto vp = Linear(m, mh->v_proj(), kv_len, value);
      std::vector<int8_t> ctx(static_cast<size_t>(q_len) * e);
      for (int h = 0; h < static_cast<int>(mh->num_heads()); ++h) {
        k::QS8AttentionArgs a = base();
        a.head_dim = a.v_dim = hd;
        a.q = q.data() + h * hd; a.q_stride = e; a.q_zp = Zp(mh->q_proj()->output());
        a.k = kp.data() + h * hd; a.k_stride = e; a.k_zp = Zp(mh->k_proj()->output());
        a.v = vp.data() + h * hd; a.v_stride = e; a.v_zp = Zp(mh->v_proj()->output());
        a.score_mult = mh->softmax()->score_multiplier(); a.score_shift = mh->softmax()->score_shift();
        a.pv_mult = mh->softmax()->pv_multiplier(); a.pv_shift = mh->softmax()->pv_shift();
        a.out_zp = Zp(mh->out_proj()->input());
        a.causal = mh->causal();
        a.out = ctx.data() + h * hd; a.out_stride = e;
        a.weights = r.weights.data() + static_cast<size_t>(h) * q_len * kv_len;
        k::qs8_attention__ref(a);
      }
      const auto out = Linear(m, mh->out_proj(), q_len, ctx.data());
      std::memcpy(r.out.data(), out.data(), r.out.size());
      break;
    }
    case fb::LayerOptions::AdditiveAttention: {
      const auto* ad = layer.options_as_AdditiveAttention();
      const auto qp = Linear(m, ad->w_q(), q_len, query);
      const auto kp = Linear(m, ad->w_k(), kv_len, key);
      k::QS8AdditiveArgs g = {};
      g.q_len = q_len; g.kv_len = kv_len; g.attn_dim = ad->attn_dim(); g.v_dim = ad->value_dim();
      g.qp = qp.data(); g.qp_stride = ad->attn_dim(); g.qp_zp = Zp(ad->w_q()->output());
      g.kp = kp.data(); g.kp_stride = ad->attn_dim(); g.kp_zp = Zp(ad->w_k()->output());
      g.pre_mult = ad->pre_tanh()->multiplier()->Get(0);
      g.pre_shift = ad->pre_tanh()->shift()->Get(0);
      g.pre_zp = ad->pre_tanh_zero_point();
      g.tanh_table = ad->tanh_table()->data();
      g.v_w = S8(m, ad->v());
      g.score_mult = ad->softmax()->score_multiplier(); g.score_shift = ad->softmax()->score_shift();
      g.pv_mult = ad->softmax()->pv_multiplier(); g.pv_shift = ad->softmax()->pv_shift();
      g.values = value; g.values_stride = ad->value_dim(); g.values_zp = Zp(ad->value_input());
      g.out_zp = Zp(ad->output());
      g.kv_valid_len = valid;
      g.out = r.out.data(); g.out_stride = ad->value_dim();
      g.weights = r.weights.data(); g.weights_stride = kv_len;
      g.scratch = scratch.data(); g.prob_scratch = probs.data();
      k::qs8_additive__ref(g);
      break;
    }
    case fb::LayerOptions::LuongAttention: {
      const auto* lg = layer.options_as_LuongAttention();
      std::vector<int8_t> qp;
      k::QS8AttentionArgs a = base();
      if (lg->score() == fb::LuongScore::General) {
        qp = Linear(m, lg->w(), q_len, query);
        a.q = qp.data(); a.q_zp = Zp(lg->w()->output());
      } else {
        a.q = query; a.q_zp = Zp(lg->query_input());
      }
      a.head_dim = lg->key_dim(); a.v_dim = lg->value_dim();
      a.q_stride = lg->key_dim();
      a.k = key; a.k_stride = lg->key_dim(); a.k_zp = Zp(lg->key_input());
      a.v = value; a.v_stride = lg->value_dim(); a.v_zp = Zp(lg->value_input());
      a.score_mult = lg->softmax()->score_multiplier(); a.score_shift = lg->softmax()->score_shift();
      a.pv_mult = lg->softmax()->pv_multiplier(); a.pv_shift = lg->softmax()->pv_shift();
      a.out_zp = Zp(lg->output());
      a.out = r.out.data(); a.out_stride = lg->value_dim();
      a.weights = r.weights.data();
      k::qs8_attention__ref(a);
      break;
    }
    case fb::LayerOptions::AttentionPooling: {
      const auto* p = layer.options_as_AttentionPooling();
      const int d = p->dim();
      k::QS8AttentionArgs a = base();
      a.head_dim = a.v_dim = d;
      a.q = S8(m, p->query()); a.q_stride = d; a.q_zp = 0;
      a.k = key; a.k_stride = d; a.k_zp = Zp(p->input());
      a.v = key; a.v_stride = d; a.v_zp = Zp(p->input());
      a.score_mult = p->softmax()->score_multiplier(); a.score_shift = p->softmax()->score_shift();
      a.pv_mult = p->softmax()->pv_multiplier(); a.pv_shift = p->softmax()->pv_shift();
      a.out_zp = Zp(p->output());
      a.out = r.out.data(); a.out_stride = d;
      a.weights = r.weights.data();
      k::qs8_attention__ref(a);
      break;
    }
    default:
      ADD_FAILURE() << "unknown layer kind";
  }
  return r;
}

std::vector<k::KernelPath> SupportedPaths() {
  std::vector<k::KernelPath> out;
  for (int p = 0; p < static_cast<int>(k::KernelPath::kCount); ++p) {
    if (k::kernel_path_supported(static_cast<k::KernelPath>(p))) out.push_back(static_cast<k::KernelPath>(p));
  }
  return out;
}

struct PathRestorer {
  k::KernelPath saved = k::kernels().path;
  ~PathRestorer() { k::set_kernel_path(saved); }
};

constexpr int kModels = 1000;

TEST(Property, RandomInt8ModelsMatchTheComposedReference) {
  PathRestorer restore;
  const auto paths = SupportedPaths();
  ASSERT_FALSE(paths.empty());
  int layers_checked = 0;
  for (int mi = 0; mi < kModels; ++mi) {
    const RandomModel rm = MakeRandomModel(1000 + mi);
    SCOPED_TRACE("model seed " + std::to_string(1000 + mi) + ":" + rm.description);
    std::vector<uint8_t> bytes;
    try {
      bytes = Build(rm, cv::OutputType::kInt8);
    } catch (const cv::ConvertError& e) {
      FAIL() << "converter rejected a valid random model: " << e.what() << "\n" << rm.spec;
    }
    AlignedBuffer file(bytes.size());
    std::memcpy(file.data(), bytes.data(), bytes.size());
    edgeattn::Model model;
    ASSERT_EQ(model.Load(file.data(), file.size()), Status::kOk) << model.error();
    AlignedBuffer arena(model.arena_bytes());
    edgeattn::Interpreter interp;
    ASSERT_EQ(interp.Init(&model, arena.data(), arena.size()), Status::kOk) << interp.error();
    const fb::Model& fbm = *model.flatbuffer();
    Rng rng(77 + mi);
    for (int li = 0; li < model.num_layers(); ++li) {
      edgeattn::LayerInfo info;
      ASSERT_EQ(model.GetLayerInfo(li, &info), Status::kOk);
      for (int trial = 0; trial < 3; ++trial) {
        const int ql = rng.uniform_int(1, info.max_q_len);
        const int kvl = rng.uniform_int(1, info.max_kv_len);
        eatest::LayerIo io;
        io.Make(info, ql, kvl, rng);
        const int valid = rng.next() % 2 ? rng.uniform_int(0, io.kv_len) : 0;
        const int eff_valid = valid <= 0 ? io.kv_len : valid;
        const int8_t* q = reinterpret_cast<const int8_t*>(io.query.data());
        const int8_t* key = io.self_attention ? q : reinterpret_cast<const int8_t*>(io.key.data());
        const int8_t* value = io.self_attention ? q
                              : io.value.empty() ? key
                                                 : reinterpret_cast<const int8_t*>(io.value.data());
        const RefOut ref = Reference(fbm, *model.layer(li), info, q, key, value, io.q_len,
                                     io.kv_len, eff_valid);
        for (k::KernelPath path : paths) {
          ASSERT_TRUE(k::set_kernel_path(path));
          SCOPED_TRACE(std::string("path ") + k::kernel_path_name(path) + " layer " + info.name +
                       " q " + std::to_string(io.q_len) + " kv " + std::to_string(io.kv_len) +
                       " valid " + std::to_string(valid));
          std::fill(io.output.begin(), io.output.end(), 0xCD);
          std::fill(io.weights.begin(), io.weights.end(), 0xCD);
          ASSERT_EQ(interp.Run(li, io.Args(valid)), Status::kOk) << interp.error();
          ASSERT_EQ(0, std::memcmp(io.output.data(), ref.out.data(), ref.out.size()));
          ASSERT_EQ(0, std::memcmp(io.weights.data(), ref.weights.data(), ref.weights.size() * 2));
          const bool cacheable = info.kind == EA_LAYER_ADDITIVE ||
                                 (info.kind == EA_LAYER_MULTI_HEAD_ATTENTION && info.cross);
          if (cacheable) {
            ASSERT_EQ(interp.CacheKeys(li, io.key.data(), io.value.empty() ? nullptr : io.value.data(),
                                       io.kv_len, valid),
                      Status::kOk)
                << interp.error();
            edgeattn::RunArgs a = io.Args(valid);
            a.use_cached_keys = 1;
            a.key = nullptr;
            if (info.kind == EA_LAYER_ADDITIVE) {
              a.value = value;
            } else {
              a.value = nullptr;
            }
            std::fill(io.output.begin(), io.output.end(), 0xCD);
            ASSERT_EQ(interp.Run(li, a), Status::kOk) << interp.error();
            ASSERT_EQ(0, std::memcmp(io.output.data(), ref.out.data(), ref.out.size()));
          }
        }
        ++layers_checked;
      }
    }
  }
  std::printf("checked %d layer runs on %zu kernel path(s)\n", layers_checked, paths.size());
}

TEST(Property, RandomF32ModelsLoadAndRun) {
  for (int mi = 0; mi < kModels; ++mi) {
    const RandomModel rm = MakeRandomModel(5000 + mi);
    SCOPED_TRACE("model seed " + std::to_string(5000 + mi) + ":" + rm.description);
    std::vector<uint8_t> bytes;
    try {
      bytes = Build(rm, cv::OutputType::kF32);
    } catch (const cv::ConvertError& e) {
      FAIL() << e.what();
    }
    AlignedBuffer file(bytes.size());
    std::memcpy(file.data(), bytes.data(), bytes.size());
    edgeattn::Model model;
    ASSERT_EQ(model.Load(file.data(), file.size()), Status::kOk) << model.error();
    AlignedBuffer arena(model.arena_bytes());
    edgeattn::Interpreter interp;
    ASSERT_EQ(interp.Init(&model, arena.data(), arena.size()), Status::kOk);
    Rng rng(99 + mi);
    for (int li = 0; li < model.num_layers(); ++li) {
      edgeattn::LayerInfo info;
      ASSERT_EQ(model.GetLayerInfo(li, &info), Status::kOk);
      eatest::LayerIo io;
      io.Make(info, rng.uniform_int(1, info.max_q_len), rng.uniform_int(1, info.max_kv_len), rng);
      ASSERT_EQ(interp.Run(li, io.Args(0)), Status::kOk) << interp.error();
      for (size_t i = 0; i < io.output.size() / 4; ++i) {
        float v;
        std::memcpy(&v, &io.output[i * 4], 4);
        ASSERT_TRUE(std::isfinite(v)) << info.name << " element " << i;
      }
    }
  }
}

}  // namespace
