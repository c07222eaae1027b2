// A tiny ViT as one chained model (issue 36's model ends): patch projection
// (linear) -> positions (one class token, timm's cls_token / pos_embed) ->
// pre-norm encoder block -> LayerNorm -> row_pool -> linear head, converted
// from a float64 state dict made here with "input" chaining and run with one
// Interpreter::Invoke, against the test's own float64 model. A second model
// pools the mean of the valid rows over a sinusoidal table with padded inputs
// (a keyword-spotting shape), so the valid rows travel through the chain.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "converter/base/error.h"
#include "converter/cli/commands.h"
#include "converter/io/file.h"
#include "converter/io/npy.h"
#include "converter/io/safetensors.h"
#include "converter/spec/spec.h"
#include "edgeattn/edgeattn.hpp"
#include "edgeattn/edgeattn_generated.h"
#include "fixtures.h"
#include "whole_model.h"

namespace {
namespace vit_chain_test {  // tests/CMakeLists.txt: unity builds

using namespace edgeattn::convert;
using fixtures::Entries;

constexpr int kPatches = 8, kPatchDim = 12, kDim = 16, kRows = kPatches + 1, kClasses = 5, kSamples = 64;

struct Vit {
  bool mean;  // false: the class row and a learned table; true: the mean of the valid rows, sinusoidal, padding
  fixtures::LayerCase block = fixtures::encoder_block_case(71, true);  // pre-norm, as ViT
  Array patch_w, patch_b, cls, pos, norm_g, norm_b, head_w, head_b, patches, valid;
  Entries weights;

  explicit Vit(bool mean_pool) : mean(mean_pool) {
    fixtures::Rng rng(mean ? 72 : 73);
    patch_w = fixtures::random_weight(rng, {size_t(kDim), size_t(kPatchDim)}, 1.5);
    patch_b = fixtures::random_weight(rng, {size_t(kDim)}, 0.5);
    cls = fixtures::random_normal(rng, {1, 1, size_t(kDim)}, 0.5, "F32");
    pos = fixtures::random_normal(rng, {1, size_t(kRows), size_t(kDim)}, 0.3, "F32");
    norm_g = fixtures::random_weight(rng, {size_t(kDim)}, 0.5);
    for (double& g : norm_g.data) g += 1.0;
    norm_b = fixtures::random_weight(rng, {size_t(kDim)}, 0.3);
    head_w = fixtures::random_weight(rng, {size_t(kClasses), size_t(kDim)}, 2.0);
    head_b = fixtures::random_weight(rng, {size_t(kClasses)}, 0.5);
    patches = fixtures::random_normal(rng, {size_t(kSamples), size_t(kPatches), size_t(kPatchDim)}, 1.0);
    std::vector<double> v;
    for (int i = 0; i < kSamples; ++i) {
      const int n = mean && i > 0 ? rng.integer(2, kPatches) : kPatches;
      v.push_back(n);
      for (int r = n; r < kPatches; ++r) {  // padded patches are zeros
        std::fill_n(patches.data.begin() + (static_cast<long>(i) * kPatches + r) * kPatchDim, kPatchDim, 0.0);
      }
    }
    valid = fixtures::make("<i4", {size_t(kSamples)}, v);
    weights = {{"patch_embed.proj.weight", patch_w}, {"patch_embed.proj.bias", patch_b}, {"cls_token", cls}};
    if (!mean) weights.emplace_back("pos_embed", pos);
    for (const auto& [name, a] : block.weights) weights.emplace_back("blocks.0." + name.substr(4), a);  // "enc."
    weights.emplace_back("norm.weight", norm_g);
    weights.emplace_back("norm.bias", norm_b);
    weights.emplace_back("head.weight", head_w);
    weights.emplace_back("head.bias", head_b);
  }

  std::string spec() const {
    return std::string(R"({"model": "vit", "layers": [
      {"name": "embed", "kind": "linear", "prefix": "patch_embed.proj.", "max_q_len": 8)") +
           (mean ? R"(, "mask": "key_padding")" : "") + R"(},
      {"name": "tok", "kind": "positions", "max_q_len": 8, "input": "embed")" +
           (mean ? R"(, "table": "sinusoidal")" : "") + R"(},
      {"name": "block", "kind": "encoder_block", "preset": "torch", "prefix": "blocks.0.", "embed_dim": 16,
       "num_heads": 2, "ffn_dim": 40, "norm_first": true, "mask": "key_padding", "max_q_len": 9, "input": "tok"},
      {"name": "norm", "kind": "layernorm", "prefix": "norm.", "dim": 16, "eps": 1e-6, "max_q_len": 9,
       "input": "block"},
      {"name": "pool", "kind": "row_pool", "mode": ")" +
           (mean ? "mean" : "first") + R"(", "dim": 16, "max_kv_len": 9, "input": "norm"},
      {"name": "head", "kind": "linear", "prefix": "head.", "max_q_len": 1, "input": "pool"}]})";
  }

  Entries calib() const {
    Entries e = {{"embed.query", patches}};
    if (mean) e.emplace_back("embed.kv_valid_len", valid);
    return e;
  }

  int valid_patches(int i) const { return static_cast<int>(valid.data[static_cast<size_t>(i)]); }

  // The float64 model on sample i: its logits [kClasses] (and the pooled row
  // the head reads [kDim], when asked).
  std::vector<double> reference(int i, std::vector<double>* pooled_row = nullptr) const {
    const double* x = patches.data.data() + static_cast<size_t>(i) * kPatches * kPatchDim;
    std::vector<double> t(static_cast<size_t>(kRows) * kDim);
    for (int r = 0; r < kRows; ++r) {
      for (int k = 0; k < kDim; ++k) {
        double v = cls.data[static_cast<size_t>(k)];
        if (r > 0) {
          v = patch_b.data[static_cast<size_t>(k)];
          for (int c = 0; c < kPatchDim; ++c) {
            v += patch_w.data[static_cast<size_t>(k) * kPatchDim + c] * x[static_cast<size_t>(r - 1) * kPatchDim + c];
          }
        }
        const double w = std::pow(10000.0, -static_cast<double>(k - k % 2) / kDim);
        const double p = mean ? (k % 2 == 0 ? std::sin(r * w) : std::cos(r * w)) : pos.data[static_cast<size_t>(r) * kDim + k];
        t[static_cast<size_t>(r) * kDim + k] = v + p;
      }
    }
    const int rows_valid = valid_patches(i) + 1;  // the class row is valid
    ArrayMap in;
    in["block.query"] = fixtures::make("F32", {1, size_t(kRows), size_t(kDim)}, t);
    in["block.kv_valid_len"] = fixtures::make("<i4", {1}, {static_cast<double>(rows_valid)});
    std::vector<double> y, wts;
    block.reference(in, &y, &wts);
    // LayerNorm (eps 1e-6) of the rows the pooling reads, then the pooled row.
    const int pooled = mean ? rows_valid : 1;
    std::vector<double> row(kDim, 0.0);
    for (int r = 0; r < pooled; ++r) {
      const double* yr = y.data() + static_cast<size_t>(r) * kDim;
      double mu = 0, var = 0;
      for (int k = 0; k < kDim; ++k) mu += yr[k] / kDim;
      for (int k = 0; k < kDim; ++k) var += (yr[k] - mu) * (yr[k] - mu) / kDim;
      for (int k = 0; k < kDim; ++k) {
        row[static_cast<size_t>(k)] += ((yr[k] - mu) / std::sqrt(var + 1e-6) * norm_g.data[static_cast<size_t>(k)] +
                                        norm_b.data[static_cast<size_t>(k)]) / pooled;
      }
    }
    if (pooled_row != nullptr) *pooled_row = row;
    std::vector<double> logits(kClasses);
    for (int c = 0; c < kClasses; ++c) {
      double acc = head_b.data[static_cast<size_t>(c)];
      for (int k = 0; k < kDim; ++k) acc += head_w.data[static_cast<size_t>(c) * kDim + k] * row[static_cast<size_t>(k)];
      logits[static_cast<size_t>(c)] = acc;
    }
    return logits;
  }
};

std::string convert(const Vit& vit, const std::string& dtype, const std::string& residual = "",
                    const std::string& spec = "") {
  const std::string dir = fixtures::temp_dir(std::string("vit_") + (vit.mean ? "mean_" : "first_") + dtype +
                                             (residual.empty() ? "" : "_res" + residual) + (spec.empty() ? "" : "_s"));
  return fixtures::convert_files(dir, vit.weights, spec.empty() ? vit.spec() : spec, vit.calib(), dtype, residual);
}

using Runtime = fixtures::RunnableModel;
using Errors = fixtures::LogitErrors;

// Every sample through one Invoke each; the logits against the float64 model.
Errors run_all(Runtime& rt, const Vit& vit) {
  const edgeattn::GraphInfo g = rt.graph();
  EXPECT_EQ(g.num_steps, 6);
  EXPECT_EQ(g.input_dim, kPatchDim);
  EXPECT_EQ(g.output_dim, kClasses);
  EXPECT_EQ(g.max_output_rows, 1);
  Errors e;
  for (int i = 0; i < kSamples; ++i) {
    const double* x = vit.patches.data.data() + static_cast<size_t>(i) * kPatches * kPatchDim;
    e.add(fixtures::invoke_logits(rt, x, kPatches, vit.mean ? vit.valid_patches(i) : 0), vit.reference(i));
  }
  return e;
}

TEST(VitChain, Float32InvokeEqualsTheFloat64Model) {
  for (const bool mean : {false, true}) {
    SCOPED_TRACE(mean ? "mean, sinusoidal, padded" : "class row, learned table");
    const Vit vit(mean);
    Runtime rt(convert(vit, "f32"));
    const Errors e = run_all(rt, vit);
    std::printf("  vit %-5s f32 logits: relative L2 %.2e (worst sample %.2e)\n", mean ? "mean" : "first", e.rel_l2(),
                e.worst_sample);
    EXPECT_LE(e.worst_sample, 1e-5);
  }
}

// The head's gain on a relative error of the row it reads, for an error in
// no particular direction (int8 rounding noise): |W e| ~ |W|_F / sqrt(kDim) |e|,
// so kappa = |W|_F / sqrt(kDim) rms|x| / rms|W x + b| over the samples
// (float64 only).
double head_gain(const Vit& vit) {
  double w2 = 0;
  for (const double w : vit.head_w.data) w2 += w * w;
  double x2 = 0, y2 = 0;
  for (int i = 0; i < kSamples; ++i) {
    std::vector<double> row;
    for (const double y : vit.reference(i, &row)) y2 += y * y;
    for (const double x : row) x2 += x * x;
  }
  return std::sqrt(w2 / kDim) * std::sqrt(x2 / y2);
}

// int8: every hand-over quantized once and passed on as bytes. The bound:
// the pooled row's relative error is at most the sum of the layers' own
// int8 round-trip errors along the chain (tests/kinds, each against its own
// float64: linear 1.3 %, positions 1.0 %, encoder block 1.6-1.8 %, LayerNorm
// 1.3 %, row_pool "mean" 0.8 %, "first" an exact copy): 5.4 % for "first",
// 6.2 % for "mean"; the head turns a relative error e of its input into
// about kappa e of its logits (head_gain, from the float64 model) and adds
// its own rounding, 1.3 %. And the top class agrees on nearly every sample.
TEST(VitChain, Int8InvokeIsWithinTheLayersErrorsOfTheFloat64Model) {
  for (const bool mean : {false, true}) {
    SCOPED_TRACE(mean ? "mean, sinusoidal, padded" : "class row, learned table");
    const Vit vit(mean);
    Runtime rt(convert(vit, "int8"));
    const Errors e = run_all(rt, vit);
    const double kappa = head_gain(vit), bound = kappa * (mean ? 0.062 : 0.054) + 0.013;
    std::printf("  vit %-5s int8 logits: relative L2 %.4f (worst sample %.4f), top-1 agreement %d / %d;"
                " head gain %.2f, bound %.4f\n",
                mean ? "mean" : "first", e.rel_l2(), e.worst_sample, e.top1_agree, kSamples, kappa, bound);
    EXPECT_LE(e.rel_l2(), bound);
    EXPECT_GE(e.top1_agree, kSamples - 3);
  }
}

// The 16-bit residual stream through the whole chain (--residual int16,
// issue 37): the converter makes the patch projection write int16 rows (the
// stream's 16-bit entry), the positions layer read them and write the block's
// int16 input, and the layer after the block read its int16 output, and the logits
// come out no worse than with the int8 stream, within the int8 bound and
// with the same top-1 agreement. Two orders after the block: LayerNorm then
// row_pool (the pool reads int8), and, for the class row (where both orders
// are the same function, so the same float64 model), row_pool first: it reads
// the int16 rows and hands the LayerNorm an int16 row (the peers' models).
TEST(VitChain, Int16StreamFromPositionsToThePooling) {
  for (const bool mean : {false, true}) {
    for (const bool pool_first : {false, true}) {
      if (mean && pool_first) continue;
      SCOPED_TRACE(std::string(mean ? "mean, sinusoidal, padded" : "class row, learned table") +
                   (pool_first ? ", row_pool before the LayerNorm" : ""));
      const Vit vit(mean);
      std::string spec = vit.spec();
      if (pool_first) {
        const std::string norm = R"({"name": "norm", "kind": "layernorm", "prefix": "norm.", "dim": 16, "eps": 1e-6, "max_q_len": 9,
       "input": "block"},)";
        const std::string pool = R"({"name": "pool", "kind": "row_pool", "mode": "first", "dim": 16, "max_kv_len": 9, "input": "norm"},
      {"name": "head", "kind": "linear", "prefix": "head.", "max_q_len": 1, "input": "pool"})";
        ASSERT_NE(spec.find(norm), std::string::npos);
        ASSERT_NE(spec.find(pool), std::string::npos);
        spec.replace(spec.find(pool), pool.size(),
                     R"({"name": "norm", "kind": "layernorm", "prefix": "norm.", "dim": 16, "eps": 1e-6, "max_q_len": 1, "input": "pool"},
      {"name": "head", "kind": "linear", "prefix": "head.", "max_q_len": 1, "input": "norm"})");
        spec.replace(spec.find(norm), norm.size(),
                     R"({"name": "pool", "kind": "row_pool", "mode": "first", "dim": 16, "max_kv_len": 9, "input": "block"},)");
      }
      Errors e[2];
      for (const bool s16 : {false, true}) {
        Runtime rt(convert(vit, "int8", s16 ? "int16" : "int8", pool_first ? spec : ""));
        // The steps' element types: the projection writes, positions reads and
        // writes, the next layer reads int16 on the int16 stream; --residual int8: int8 throughout.
        edgeattn::LayerInfo embed, tok, after;
        ASSERT_EQ(rt.model.GetLayerInfo(0, &embed), edgeattn::Status::kOk);
        ASSERT_EQ(rt.model.GetLayerInfo(1, &tok), edgeattn::Status::kOk);
        ASSERT_EQ(rt.model.GetLayerInfo(3, &after), edgeattn::Status::kOk);
        EXPECT_EQ(embed.input_dtype, EA_S8);
        EXPECT_EQ(embed.output_dtype, s16 ? EA_S16 : EA_S8);
        EXPECT_EQ(tok.input_dtype, s16 ? EA_S16 : EA_S8);
        EXPECT_EQ(tok.output_dtype, s16 ? EA_S16 : EA_S8);
        EXPECT_EQ(after.input_dtype, s16 ? EA_S16 : EA_S8);
        if (pool_first) {  // the pooled row on the stream's grid into the LayerNorm
          edgeattn::LayerInfo norm;
          ASSERT_EQ(rt.model.GetLayerInfo(4, &norm), edgeattn::Status::kOk);
          EXPECT_EQ(after.output_dtype, s16 ? EA_S16 : EA_S8);
          EXPECT_EQ(norm.input_dtype, s16 ? EA_S16 : EA_S8);
          EXPECT_EQ(norm.output_dtype, EA_S8);
        } else {
          EXPECT_EQ(after.output_dtype, EA_S8);
        }
        e[s16] = run_all(rt, vit);
      }
      const double kappa = head_gain(vit), bound = kappa * (mean ? 0.062 : 0.054) + 0.013;
      std::printf("  vit %-5s%s logits: relative L2 int8 stream %.4f, int16 stream %.4f; top-1 %d, %d / %d;"
                  " bound %.4f\n",
                  mean ? "mean" : "first", pool_first ? " (pool, then norm)" : "", e[0].rel_l2(), e[1].rel_l2(),
                  e[0].top1_agree, e[1].top1_agree, kSamples, bound);
      EXPECT_LE(e[1].rel_l2(), bound);
      EXPECT_LE(e[1].rel_l2(), e[0].rel_l2());
      EXPECT_GE(e[1].top1_agree, kSamples - 3);
    }
  }
}

// The stream's 16-bit entry alone (positions16-in, requant.h): the converted
// chain's positions layer run by itself on int16 rows at the int16 ends and
// between them; every output is the real (s_in x + pos) / s_out, from the
// file's scales and the test's float64 table, rounded once, within A's and
// P's own roundings (2^(14-n) + 2^-(b+1) output steps) where it does not
// saturate, and 32767 / -32768 beyond. The class row is the converter's
// rounding of cls + pos.
TEST(VitChain, Int16EntryPositionsWithinTheContractsBound) {
  const Vit vit(false);
  const std::string path = convert(vit, "int8", "int16");
  const std::vector<uint8_t> file = read_file(path);
  const auto* p = edgeattn::fb::GetModel(file.data())->layers()->Get(1)->options_as_Positions();
  ASSERT_NE(p, nullptr);
  ASSERT_TRUE(p->input16());
  ASSERT_TRUE(p->output16());
  ASSERT_TRUE(edgeattn::fb::GetModel(file.data())->layers()->Get(0)->options_as_Linear()->output16());
  const int n = p->shift(), bits = p->pos_bits();
  Runtime rt(path);
  edgeattn::LayerInfo info;
  ASSERT_EQ(rt.model.GetLayerInfo(1, &info), edgeattn::Status::kOk);
  ASSERT_EQ(info.input_dtype, EA_S16);
  ASSERT_EQ(info.output_dtype, EA_S16);
  EXPECT_EQ(info.query_quant.zero_point, 0);
  EXPECT_EQ(info.output_quant.zero_point, 0);
  const double s_in = info.query_quant.scale, s_out = info.output_quant.scale;
  // (+1e-6 relative: A and P come from the converter's float64 scales, these are the file's float32 ones.)
  const double bound = 0.5 + std::ldexp(1.0, 14 - n) + std::ldexp(1.0, -(bits + 1));
  const int16_t ends[] = {-32768, -32767, -16384, -1, 0, 1, 255, 16383, 32766, 32767};
  int checked = 0, saturated = 0;
  for (int t = 0; t < 40; ++t) {
    std::vector<int16_t> x(static_cast<size_t>(kPatches) * kDim), y(static_cast<size_t>(kRows) * kDim, 0x5A5A);
    for (size_t k = 0; k < x.size(); ++k) {
      x[k] = t < 10 ? ends[(k + static_cast<size_t>(t)) % 10]
                    : static_cast<int16_t>((k * 2654435761u + static_cast<size_t>(t) * 40503u) % 65536 - 32768);
    }
    edgeattn::RunArgs r = {};
    r.query = x.data();
    r.q_len = kPatches;
    r.output = y.data();
    ASSERT_EQ(rt.interp.Run(1, r), edgeattn::Status::kOk) << rt.interp.error();
    for (int row = 0; row < kRows; ++row) {
      for (int k = 0; k < kDim; ++k) {
        const double pos = vit.pos.data[static_cast<size_t>(row) * kDim + k];
        const int got = y[static_cast<size_t>(row) * kDim + k];
        if (row == 0) {  // the class row: one rounding in float64 by the converter
          const double real = (vit.cls.data[static_cast<size_t>(k)] + pos) / s_out;
          EXPECT_LE(std::fabs(got - std::clamp(real, -32768.0, 32767.0)), 0.5 + 1e-6 * std::fabs(real) + 1e-9);
          continue;
        }
        const double real = (s_in * x[static_cast<size_t>(row - 1) * kDim + k] + pos) / s_out;
        const double tol = bound + 1e-6 * std::fabs(real);
        if (real >= 32767.0 + tol) {
          ASSERT_EQ(got, 32767) << "row " << row << " col " << k;
          ++saturated;
        } else if (real <= -32768.0 - tol) {
          ASSERT_EQ(got, -32768) << "row " << row << " col " << k;
          ++saturated;
        } else {
          ASSERT_LE(std::fabs(got - std::clamp(real, -32768.0, 32767.0)), tol)
              << "x " << x[static_cast<size_t>(row - 1) * kDim + k] << " row " << row << " col " << k;
          ++checked;
        }
      }
    }
  }
  std::printf("  int16 entry: shift %d, table bits %d, A %d; %d outputs within %.4f steps, %d saturated\n", n, bits,
              p->input_multiplier(), checked, bound, saturated);
  EXPECT_GT(checked, 40 * kPatches * kDim / 2);
}

// --residual int8 keeps the int8 hand-over: no int16 anywhere in the chain.
TEST(VitChain, Int8StreamKeepsTheInt8Entry) {
  const Vit vit(false);
  const std::vector<uint8_t> file = read_file(convert(vit, "int8", "int8"));
  const auto* m = edgeattn::fb::GetModel(file.data());
  EXPECT_FALSE(m->layers()->Get(0)->options_as_Linear()->output16());
  EXPECT_FALSE(m->layers()->Get(1)->options_as_Positions()->input16());
  EXPECT_FALSE(m->layers()->Get(1)->options_as_Positions()->output16());
}

// The 16-bit entry needs the positions layer to be the projection's only
// reader: a second reader (here a decoder block's memory, which is int8)
// keeps the projection's output int8, and positions then reads int8 rows.
TEST(VitChain, SecondReaderKeepsTheInt8Entry) {
  const Vit vit(false);
  const fixtures::LayerCase dec = fixtures::decoder_block_case(74);  // embed_dim 16, as kDim
  ArrayMap w = fixtures::to_map(vit.weights);
  for (const auto& [name, a] : dec.weights) w[name] = a;
  std::string spec = vit.spec();
  spec = spec.substr(0, spec.find(R"(      {"name": "norm")")) +
         R"(      {"name": "dec", "kind": "decoder_block", "preset": "torch", "prefix": "dec.", "embed_dim": 16,
       "num_heads": 4, "ffn_dim": 24, "max_q_len": 9, "max_kv_len": 8, "input": "block", "memory": "embed"}]})";
  ModelSpec two = load_spec("s.json", spec, w, "w", {});
  ASSERT_EQ(two.layers.size(), 4u);
  use_residual16(&two);
  EXPECT_FALSE(two.layers[0].output16);  // embed: read by tok and by dec's memory
  EXPECT_FALSE(two.layers[1].input16);   // tok reads int8 rows
  EXPECT_TRUE(two.layers[1].output16);   // and still writes the stream
  EXPECT_TRUE(two.layers[3].input16 && two.layers[3].output16);
  // The control: without the memory, the same chain gets the 16-bit entry.
  ModelSpec one = load_spec("s.json", vit.spec(), fixtures::to_map(vit.weights), "w", {});
  use_residual16(&one);
  EXPECT_TRUE(one.layers[0].output16);
  EXPECT_TRUE(one.layers[1].input16);
}

}  // namespace vit_chain_test
}  // namespace

namespace {
namespace vit_chain_test {  // tests/CMakeLists.txt: unity builds

// The rows positions adds count at the next hand-over: a block that takes
// only max_q_len rows is a spec error naming both, and so is a row_pool
// whose max_kv_len is short.
TEST(VitChain, AddedRowsMustFitTheNextLayer) {
  const Vit vit(false);
  const auto error_of = [&](const std::string& from, const std::string& to) {
    std::string spec = vit.spec();
    spec.replace(spec.find(from), from.size(), to);
    try {
      const std::string dir = fixtures::temp_dir("vit_rows");
      save_safetensors(dir + "/weights.safetensors", vit.weights);
      fixtures::write_text(dir + "/spec.json", spec);
      save_npz(dir + "/calib.npz", vit.calib());
      ConvertOptions o;
      o.weights = dir + "/weights.safetensors";
      o.spec = dir + "/spec.json";
      o.calib = dir + "/calib.npz";
      o.dtype = "f32";
      o.output = dir + "/vit.eatn";
      std::ostringstream report;
      run_convert(o, report);
    } catch (const ConvertError& e) {
      return std::string(e.what());
    }
    return std::string("converted");
  };
  std::string msg = error_of(R"("max_q_len": 9, "input": "tok")", R"("max_q_len": 8, "input": "tok")");
  EXPECT_NE(msg.find("layer 'block'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("layer 'tok' gives up to 9 rows (max_q_len 8 + 1 it adds), more than max_q_len 8"),
            std::string::npos)
      << msg;
  msg = error_of(R"("max_kv_len": 9, "input": "norm")", R"("max_kv_len": 7, "input": "norm")");
  EXPECT_NE(msg.find("layer 'norm' gives up to 9 rows, more than max_kv_len 7"), std::string::npos) << msg;
  msg = error_of(R"("dim": 16, "max_kv_len": 9)", R"("dim": 12, "max_kv_len": 9)");
  EXPECT_NE(msg.find("layer 'norm' gives rows of 16 values, this layer reads 12"), std::string::npos) << msg;
}

}  // namespace vit_chain_test
}  // namespace
