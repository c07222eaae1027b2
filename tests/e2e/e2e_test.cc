// End to end: PyTorch-trained models (models/<name>/) converted at build time
// by edgeattn-convert to int8 and f32, loaded by the runtime, every layer run
// on the held-out inputs of reference.npz and compared with PyTorch's float
// outputs (L.output) and attention weights (L.attn_weights).
//
// Product targets (not to be loosened; a miss is reported with its figures):
//   f32:  max |y - ref| <= 1e-4. PyTorch and the runtime both compute in float32
//         but in different summation orders; for these widths (<= 64) and O(1)
//         activations the accumulated rounding is ~1e-6..1e-5 through the four
//         projections and the softmax, so 1e-4 leaves margin while any real
//         defect (mask, head split, scale, layout) shows up as >= 1e-2.
//   int8: relative L2 error <= 2% and cosine similarity >= 0.9995 per
//         attention layer; a transformer block (LayerNorms, attention, FFN and
//         residual adds, issue 24) may add 1 percentage point to that
//         (<= 3%, cosine >= 0.999), a LayerNorm, FFN or linear layer alone is
//         held to 2%. Kinds without attention weights (layernorm, ffn, linear)
//         compare outputs only.
// For self-attention with key padding only query rows < kv_valid_len are
// compared (padded query rows are meaningless, see models/README.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include "converter/base/array.h"
#include "converter/io/npy.h"
#include "edgeattn/edgeattn.hpp"
#include "test_models.h"

namespace cv = edgeattn::convert;
using edgeattn::Interpreter;
using edgeattn::LayerInfo;
using edgeattn::Model;
using edgeattn::RunArgs;
using edgeattn::Status;

namespace {

struct Param {
  std::string model;  // transformer, bahdanau, pooling, coverage
  std::string dtype;  // int8, f32
};

void PrintTo(const Param& p, std::ostream* os) { *os << p.model << "_" << p.dtype; }

std::vector<Param> Params() {
  std::vector<Param> out;
  for (const std::string& m : eatest::SplitCommaList(EA_BUNDLED_MODELS)) {
    out.push_back({m, "int8"});
    out.push_back({m, "f32"});
  }
  return out;
}

std::vector<uint8_t> Quantize(const double* x, size_t n, const edgeattn::Quant& q) {
  std::vector<uint8_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    long v = std::lround(x[i] / q.scale) + q.zero_point;
    v = std::min(127L, std::max(-128L, v));
    out[i] = static_cast<uint8_t>(static_cast<int8_t>(v));
  }
  return out;
}

std::vector<uint8_t> AsF32(const double* x, size_t n) {
  std::vector<uint8_t> out(n * 4);
  for (size_t i = 0; i < n; ++i) {
    const float f = static_cast<float>(x[i]);
    std::memcpy(&out[i * 4], &f, 4);
  }
  return out;
}

struct Figures {
  double max_abs = 0, err2 = 0, ref2 = 0, out2 = 0, dot = 0, w_max_abs = 0;
  double floor2 = 0;  // int8: error of merely rounding the reference to the output quantization
  size_t rows = 0;
  double rel_l2() const { return std::sqrt(err2 / ref2); }
  double cosine() const { return dot / std::sqrt(ref2 * out2); }
};

class E2E : public ::testing::TestWithParam<Param> {};

TEST_P(E2E, EveryLayerMatchesPyTorch) {
  const Param& p = GetParam();
  const std::string file = eatest::ModelPath(p.model + "_" + p.dtype);
  eatest::AlignedBuffer bytes;
  ASSERT_TRUE(eatest::ReadFile(file, &bytes)) << file;
  Model model;
  ASSERT_EQ(model.Load(bytes.data(), bytes.size()), Status::kOk) << file << ": " << model.error();
  eatest::AlignedBuffer arena(model.arena_bytes());
  Interpreter interp;
  ASSERT_EQ(interp.Init(&model, arena.data(), model.arena_bytes()), Status::kOk) << interp.error();
  const std::string ref_path = std::string(EA_MODELS_SRC) + "/" + p.model + "/reference.npz";
  cv::ArrayMap ref = cv::load_npz(ref_path);

  for (int l = 0; l < model.num_layers(); ++l) {
    LayerInfo info = {};
    ASSERT_EQ(model.GetLayerInfo(l, &info), Status::kOk);
    const std::string name = info.name;
    const bool s8 = info.dtype == EA_S8;
    const bool self = !info.cross;  // keys and values (if any) are the query rows
    const bool pooling = info.kind == EA_LAYER_POOLING;
    const bool block = info.kind == EA_LAYER_ENCODER_BLOCK || info.kind == EA_LAYER_DECODER_BLOCK;
    auto get = [&](const std::string& k) -> const cv::Array* {
      auto it = ref.find(name + "." + k);
      return it == ref.end() ? nullptr : &it->second;
    };
    const cv::Array* q = get("query");
    const cv::Array* k = get("key");
    const cv::Array* v = get("value");
    const cv::Array* valid = get("kv_valid_len");
    const cv::Array* out_ref = get("output");
    const cv::Array* w_ref = get("attn_weights");
    ASSERT_NE(out_ref, nullptr) << ref_path << ": no " << name << ".output";
    if (info.num_heads > 0) {
      ASSERT_NE(w_ref, nullptr) << ref_path << ": no " << name << ".attn_weights";
    }
    if (!pooling) {
      ASSERT_NE(q, nullptr) << name;
    }
    if (!self) {
      ASSERT_NE(k, nullptr) << name;
    }
    if (v == nullptr) v = self ? q : k;
    const cv::Array* seq = self ? q : k;
    const size_t n = out_ref->shape[0];
    const int lq = pooling ? 1 : static_cast<int>(q->shape[1]);
    const int lk = static_cast<int>(seq->shape[1]);
    const int heads = w_ref != nullptr ? static_cast<int>(w_ref->shape[1]) : 0;
    ASSERT_EQ(heads, info.num_heads) << name;
    ASSERT_EQ(static_cast<int>(out_ref->shape[2]), info.output_dim) << name;

    Figures f;
    for (size_t s = 0; s < n; ++s) {
      const int kv_valid = valid != nullptr ? static_cast<int>(valid->data[s]) : -1;
      std::vector<uint8_t> qb, kb, vb;
      if (!pooling) {
        const size_t cnt = static_cast<size_t>(lq) * info.query_dim;
        qb = s8 ? Quantize(&q->data[s * cnt], cnt, info.query_quant) : AsF32(&q->data[s * cnt], cnt);
      }
      if (!self) {
        const size_t kc = static_cast<size_t>(lk) * info.key_dim;
        const size_t vc = static_cast<size_t>(lk) * info.value_dim;
        kb = s8 ? Quantize(&k->data[s * kc], kc, info.key_quant) : AsF32(&k->data[s * kc], kc);
        if (!pooling) vb = s8 ? Quantize(&v->data[s * vc], vc, info.value_quant) : AsF32(&v->data[s * vc], vc);
      }
      std::vector<uint8_t> out(static_cast<size_t>(lq) * info.output_dim * (s8 ? 1 : 4));
      std::vector<uint8_t> w(static_cast<size_t>(heads) * lq * lk * (s8 ? 2 : 4));  // empty without weights
      RunArgs a = {};
      a.query = qb.empty() ? nullptr : qb.data();
      a.key = kb.empty() ? nullptr : kb.data();
      a.value = vb.empty() ? nullptr : vb.data();
      a.q_len = lq;
      a.kv_len = self ? 0 : lk;
      a.kv_valid_len = kv_valid;
      a.output = out.data();
      a.attn_weights = heads > 0 ? w.data() : nullptr;
      ASSERT_EQ(interp.Run(l, a), Status::kOk) << name << " sample " << s << ": " << interp.error();
      const int rows = self && kv_valid >= 0 ? std::min(lq, kv_valid) : lq;
      for (int i = 0; i < rows; ++i) {
        for (int c = 0; c < info.output_dim; ++c) {
          const size_t idx = static_cast<size_t>(i) * info.output_dim + c;
          double y;
          if (s8) {
            y = info.output_quant.scale * (static_cast<int8_t>(out[idx]) - info.output_quant.zero_point);
          } else {
            float t;
            std::memcpy(&t, &out[idx * 4], 4);
            y = t;
          }
          const double r = out_ref->data[s * static_cast<size_t>(lq) * info.output_dim + idx];
          f.max_abs = std::max(f.max_abs, std::fabs(y - r));
          f.err2 += (y - r) * (y - r);
          f.ref2 += r * r;
          f.out2 += y * y;
          f.dot += y * r;
          if (s8) {
            const double qr = std::min(127.0, std::max(-128.0, std::nearbyint(r / info.output_quant.scale) +
                                                                   info.output_quant.zero_point));
            const double fr = info.output_quant.scale * (qr - info.output_quant.zero_point);
            f.floor2 += (fr - r) * (fr - r);
          }
        }
        for (int h = 0; h < heads; ++h) {
          for (int j = 0; j < lk; ++j) {
            const size_t widx = (static_cast<size_t>(h) * lq + i) * lk + j;
            double wy;
            if (s8) {
              uint16_t t;
              std::memcpy(&t, &w[widx * 2], 2);
              wy = t / 32768.0;
            } else {
              float t;
              std::memcpy(&t, &w[widx * 4], 4);
              wy = t;
            }
            const double wr = w_ref->data[s * static_cast<size_t>(heads) * lq * lk + widx];
            f.w_max_abs = std::max(f.w_max_abs, std::fabs(wy - wr));
          }
        }
        ++f.rows;
      }
    }
    std::printf("[e2e] %-11s %-4s %-10s rows %4zu  max|err| %.3g  relL2 %.4f%%  cosine %.6f  attn max|diff| %.3g"
                "  (output-rounding floor relL2 %.4f%%)\n",
                p.model.c_str(), p.dtype.c_str(), name.c_str(), f.rows, f.max_abs, 100 * f.rel_l2(), f.cosine(),
                f.w_max_abs, 100 * std::sqrt(f.floor2 / f.ref2));
    RecordProperty(name + "_max_abs", std::to_string(f.max_abs));
    RecordProperty(name + "_rel_l2", std::to_string(f.rel_l2()));
    RecordProperty(name + "_cosine", std::to_string(f.cosine()));
    RecordProperty(name + "_attn_max_abs", std::to_string(f.w_max_abs));
    ASSERT_GT(f.rows, 0u) << name;
    if (s8) {
      EXPECT_LE(f.rel_l2(), block ? 0.03 : 0.02) << p.model << " int8 layer " << name << ": relative L2 " << f.rel_l2()
                                  << " (rounding the reference itself to the output quantization gives "
                                  << std::sqrt(f.floor2 / f.ref2) << ")";
      EXPECT_GE(f.cosine(), block ? 0.999 : 0.9995) << p.model << " int8 layer " << name << ": cosine " << f.cosine();
    } else {
      EXPECT_LE(f.max_abs, 1e-4) << p.model << " f32 layer " << name << ": max abs error " << f.max_abs;
      // Float weights: same float32 argument, |dw| <= ~1e-5 expected; 1e-4 as for outputs.
      EXPECT_LE(f.w_max_abs, 1e-4) << p.model << " f32 layer " << name << ": attention weights";
    }
  }
}

// Converter -> file -> runtime round trip per layer kind and mask: the bundled
// files contain the expected layers with the expected kind and flags.
TEST_P(E2E, LayerKindsAndMasksRoundTrip) {
  const Param& p = GetParam();
  eatest::AlignedBuffer bytes;
  ASSERT_TRUE(eatest::ReadFile(eatest::ModelPath(p.model + "_" + p.dtype), &bytes));
  Model model;
  ASSERT_EQ(model.Load(bytes.data(), bytes.size()), Status::kOk) << model.error();
  struct Want { const char* model; const char* layer; ea_layer_kind kind; int cross, causal, coverage = 0; };
  const Want wants[] = {
      {"transformer", "enc_self", EA_LAYER_MULTI_HEAD_ATTENTION, 0, 0},
      {"transformer", "dec_self", EA_LAYER_MULTI_HEAD_ATTENTION, 0, 1},
      {"transformer", "dec_cross", EA_LAYER_MULTI_HEAD_ATTENTION, 1, 0},
      {"bahdanau", "bahdanau", EA_LAYER_ADDITIVE, 1, 0},
      {"pooling", "pool", EA_LAYER_POOLING, 1, 0},
      {"coverage", "cov", EA_LAYER_ADDITIVE, 1, 0, 1},
      {"coverage", "plain", EA_LAYER_ADDITIVE, 1, 0, 0},
      {"encoder_block", "pre", EA_LAYER_ENCODER_BLOCK, 0, 0},
      {"encoder_block", "post", EA_LAYER_ENCODER_BLOCK, 0, 0},
      {"encoder_block", "vit", EA_LAYER_ENCODER_BLOCK, 0, 0},
      {"encoder_block", "custom", EA_LAYER_ENCODER_BLOCK, 0, 1},
      {"encoder_block", "final_norm", EA_LAYER_LAYERNORM, 0, 0},
      {"encoder_block", "mlp", EA_LAYER_FEED_FORWARD, 0, 0},
      {"encoder_block", "dec_pre", EA_LAYER_DECODER_BLOCK, 1, 0},  // key = the memory; causal inside
      {"encoder_block", "dec_post", EA_LAYER_DECODER_BLOCK, 1, 0},
      {"encoder_block", "head", EA_LAYER_LINEAR, 0, 0},
  };
  int found = 0;
  for (const Want& w : wants) {
    if (p.model != w.model) continue;
    const int l = model.FindLayer(w.layer);
    ASSERT_GE(l, 0) << p.model << ": no layer " << w.layer;
    LayerInfo info = {};
    ASSERT_EQ(model.GetLayerInfo(l, &info), Status::kOk);
    EXPECT_EQ(info.kind, w.kind) << w.layer;
    EXPECT_EQ(info.cross, w.cross) << w.layer;
    EXPECT_EQ(info.causal, w.causal) << w.layer;
    EXPECT_EQ(info.coverage, w.coverage) << w.layer;
    EXPECT_EQ(info.dtype, p.dtype == "int8" ? EA_S8 : EA_F32) << w.layer;
    ++found;
  }
  EXPECT_GT(found, 0) << "unknown bundled model " << p.model;
}

INSTANTIATE_TEST_SUITE_P(Bundled, E2E, ::testing::ValuesIn(Params()),
                         [](const ::testing::TestParamInfo<Param>& i) { return i.param.model + "_" + i.param.dtype; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(E2E);

TEST(E2EModels, BundledModelsPresent) {
  // All four bundled models are expected; configure-time detection means cmake
  // must be re-run after models/ is populated.
  const std::vector<std::string> have = eatest::SplitCommaList(EA_BUNDLED_MODELS);
  for (const char* m : {"transformer", "bahdanau", "pooling", "coverage"}) {
    if (std::find(have.begin(), have.end(), m) == have.end()) {
      ADD_FAILURE() << "models/" << m << " was not found at configure time: its e2e tests did not run";
    }
  }
}

}  // namespace
