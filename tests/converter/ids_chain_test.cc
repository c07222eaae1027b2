// A whole model from token ids to class indices in one call: embedding ->
// encoder_block -> linear head -> argmax, chained with "input", converted
// from a float64 state dict made here and calibrated from int32 ids only;
// Interpreter::Invoke's indices against the fixtures' own float64 layers
// run one after another.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "converter/cli/commands.h"
#include "converter/io/file.h"
#include "converter/io/npy.h"
#include "converter/io/safetensors.h"
#include "edgeattn/edgeattn.hpp"
#include "fixtures.h"
#include "whole_model.h"

namespace {
namespace ids_chain_test {  // tests/CMakeLists.txt: unity builds

using namespace edgeattn::convert;
using fixtures::Entries;

constexpr int kVocab = 20, kRows = 9, kDim = 16, kClasses = 7;

struct IdsModel {
  fixtures::LayerCase block = fixtures::encoder_block_case(71, false);  // tensors under "enc."
  Array table, head_w, head_b;
  Entries weights;
  Array calib_ids, test_ids;

  IdsModel() {
    fixtures::Rng rng(72);
    table = fixtures::random_normal(rng, {size_t(kVocab), size_t(kDim)}, 1.0, "F32");
    head_w = fixtures::random_weight(rng, {size_t(kClasses), size_t(kDim)}, 2.0);
    head_b = fixtures::random_weight(rng, {size_t(kClasses)}, 1.0);
    weights = block.weights;
    weights.emplace_back("tok.weight", table);
    weights.emplace_back("head.weight", head_w);
    weights.emplace_back("head.bias", head_b);
    calib_ids = ids(rng, 64);
    test_ids = ids(rng, 128);  // held out: not seen by calibration
  }

  static Array ids(fixtures::Rng& rng, int n) {
    std::vector<double> v(static_cast<size_t>(n) * kRows);
    for (double& x : v) x = rng.integer(0, kVocab - 1);
    return fixtures::make("<i4", {size_t(n), size_t(kRows)}, v);
  }

  std::string spec(bool argmax = true) const {
    return std::string(R"({"model": "ids_chain", "layers": [
      {"name": "emb", "kind": "embedding", "prefix": "tok.", "max_q_len": 9},
      {"name": "block", "kind": "encoder_block", "preset": "torch", "prefix": "enc.", "embed_dim": 16,
       "num_heads": 2, "ffn_dim": 40, "max_q_len": 9, "input": "emb"},
      {"name": "head", "kind": "linear", "prefix": "head.", "max_q_len": 9, "input": "block"})") +
           (argmax ? R"(,
      {"name": "top", "kind": "argmax", "dim": 7, "max_q_len": 9, "input": "head"}]})"
                   : "]}");
  }

  // float64 logits [kRows][kClasses] of sample i of `ids`: the table's rows,
  // the fixture's nn.TransformerEncoderLayer, the head.
  std::vector<double> logits(const Array& ids, int i) const {
    std::vector<double> x;
    for (int r = 0; r < kRows; ++r) {
      const size_t id = static_cast<size_t>(ids.data[static_cast<size_t>(i) * kRows + r]);
      x.insert(x.end(), table.data.begin() + id * kDim, table.data.begin() + (id + 1) * kDim);
    }
    ArrayMap in;
    in["block.query"] = fixtures::make("F32", {1, size_t(kRows), size_t(kDim)}, x);
    std::vector<double> y, w;
    block.reference(in, &y, &w);
    std::vector<double> out(static_cast<size_t>(kRows) * kClasses);
    for (int r = 0; r < kRows; ++r) {
      for (int c = 0; c < kClasses; ++c) {
        double acc = head_b.data[static_cast<size_t>(c)];
        for (int k = 0; k < kDim; ++k) {
          acc += head_w.data[static_cast<size_t>(c) * kDim + k] * y[static_cast<size_t>(r) * kDim + k];
        }
        out[static_cast<size_t>(r) * kClasses + c] = acc;
      }
    }
    return out;
  }
};

// First index of the largest of n values.
template <typename T>
int argmax(const T* x, int n) {
  int best = 0;
  for (int i = 1; i < n; ++i) {
    if (x[i] > x[best]) best = i;
  }
  return best;
}

// Largest minus second largest of n values.
double margin(const double* x, int n) {
  std::vector<double> v(x, x + n);
  std::sort(v.rbegin(), v.rend());
  return v[0] - v[1];
}

std::string convert(const IdsModel& m, const std::string& dir, const std::string& dtype, const std::string& spec,
                    const std::string& report_json = "", const std::string& residual = "") {
  save_safetensors(dir + "/weights.safetensors", m.weights);
  fixtures::write_text(dir + "/spec.json", spec);
  save_npz(dir + "/calib.npz", {{"emb.query", m.calib_ids}});
  ConvertOptions o;
  o.weights = dir + "/weights.safetensors";
  o.spec = dir + "/spec.json";
  o.calib = dir + "/calib.npz";
  o.dtype = dtype;
  o.output = dir + "/ids_" + dtype + ".eatn";
  o.report_json = report_json;
  if (!residual.empty()) o.residual = residual;
  std::ostringstream report;
  run_convert(o, report);
  return o.output;
}

struct Runtime : fixtures::RunnableModel {
  using RunnableModel::RunnableModel;
  // One Invoke on sample i of ids; out: kRows x width elements of T.
  template <typename T>
  std::vector<T> invoke(const Array& ids, int i, int width) {
    std::vector<int32_t> x(kRows);
    for (int r = 0; r < kRows; ++r) x[static_cast<size_t>(r)] = static_cast<int32_t>(ids.data[static_cast<size_t>(i) * kRows + r]);
    std::vector<T> out(static_cast<size_t>(kRows) * width);
    edgeattn::ModelInputs in = {};
    in.rows = x.data();
    in.num_rows = kRows;
    edgeattn::ModelOutputs o = {out.data(), 0};
    EXPECT_EQ(interp.Invoke(in, &o), edgeattn::Status::kOk) << interp.error();
    EXPECT_EQ(o.num_rows, kRows);
    return out;
  }
};

// int8: the indices are the argmax of the int8 logits the same model gives
// without its argmax layer (exactly: same calibration, so the same bytes),
// every row whose float64 top-2 margin exceeds twice that row's int8 logit
// error agrees with the float64 model (it cannot flip), and at least 90 % of
// all held-out rows agree.
//
// Why 90 %: an index can differ from the float model's only where a row's
// int8 logit error reaches half its float64 top-2 margin (the second check
// makes that a tested fact). One int8 encoder block plus a head stays within
// about 2 % relative L2 of its float64 output (tests/kinds, chain_test), and
// measured here 4.6 % of the 1152 held-out rows have a margin below twice
// their error, so at least 95.4 % must agree (99.1 % do: most near-margin
// rows still pick the same class); 90 % leaves room for another seed or a
// calibration change without hiding a broken argmax or embedding, which
// would agree on about 1 row in 7.
TEST(IdsChain, Int8IndicesAgreeWithTheFloat64Model) {
  const IdsModel m;
  const std::string dir = fixtures::temp_dir("ids_chain_int8");
  Runtime rt(convert(m, dir, "int8", m.spec()));
  Runtime logits_rt(convert(m, dir, "int8", m.spec(false)));
  ASSERT_TRUE(rt.model.has_graph());
  edgeattn::GraphInfo g = {};
  ASSERT_EQ(rt.model.GetGraphInfo(&g), edgeattn::Status::kOk) << rt.model.error();
  EXPECT_EQ(g.num_steps, 4);
  EXPECT_EQ(g.input_dtype, EA_S32);
  EXPECT_EQ(g.input_dim, 1);
  EXPECT_EQ(g.input_range, kVocab);
  EXPECT_EQ(g.output_dtype, EA_S32);
  EXPECT_EQ(g.output_dim, 1);
  edgeattn::LayerInfo head = {};
  ASSERT_EQ(logits_rt.model.GetLayerInfo(2, &head), edgeattn::Status::kOk);
  int rows = 0, agree = 0, safe = 0, safe_agree = 0;
  for (int i = 0; i < static_cast<int>(m.test_ids.shape[0]); ++i) {
    const std::vector<int32_t> got = rt.invoke<int32_t>(m.test_ids, i, 1);
    const std::vector<int8_t> q = logits_rt.invoke<int8_t>(m.test_ids, i, kClasses);
    const std::vector<double> ref = m.logits(m.test_ids, i);
    for (int r = 0; r < kRows; ++r) {
      const int8_t* qr = q.data() + static_cast<size_t>(r) * kClasses;
      const double* fr = ref.data() + static_cast<size_t>(r) * kClasses;
      ASSERT_EQ(got[static_cast<size_t>(r)], argmax(qr, kClasses)) << "sample " << i << " row " << r;
      double err = 0;
      for (int c = 0; c < kClasses; ++c) {
        err = std::max(err, std::fabs(head.output_quant.scale * (qr[c] - head.output_quant.zero_point) - fr[c]));
      }
      const bool same = got[static_cast<size_t>(r)] == argmax(fr, kClasses);
      ++rows;
      agree += same;
      if (margin(fr, kClasses) > 2 * err) {
        ++safe;
        safe_agree += same;
      }
    }
  }
  std::printf("  ids -> emb -> block -> head -> argmax, int8 on %d held-out rows: agreement %.2f %%; "
              "%.2f %% of rows have a float64 top-2 margin below twice their int8 logit error\n",
              rows, 100.0 * agree / rows, 100.0 * (rows - safe) / rows);
  EXPECT_EQ(safe_agree, safe);
  EXPECT_GE(agree, 0.9 * rows);
}

// f32: the indices are the float64 model's on every row whose top-2 margin
// is above 1e-4 (f32 carries the logits within about 1e-6 of them).
TEST(IdsChain, Float32IndicesEqualTheFloat64Model) {
  const IdsModel m;
  Runtime rt(convert(m, fixtures::temp_dir("ids_chain_f32"), "f32", m.spec()));
  int rows = 0, compared = 0;
  for (int i = 0; i < 32; ++i) {
    const std::vector<int32_t> got = rt.invoke<int32_t>(m.test_ids, i, 1);
    const std::vector<double> ref = m.logits(m.test_ids, i);
    for (int r = 0; r < kRows; ++r, ++rows) {
      const double* fr = ref.data() + static_cast<size_t>(r) * kClasses;
      if (margin(fr, kClasses) <= 1e-4) continue;
      ++compared;
      EXPECT_EQ(got[static_cast<size_t>(r)], argmax(fr, kClasses)) << "sample " << i << " row " << r;
    }
  }
  EXPECT_GE(compared, rows - 2);
}

// A token id outside the table stops Invoke before anything runs, naming it.
TEST(IdsChain, InvokeRefusesAnIdOutsideTheTable) {
  const IdsModel m;
  Runtime rt(convert(m, fixtures::temp_dir("ids_chain_bad"), "int8", m.spec()));
  std::vector<int32_t> x(kRows, 3), out(kRows, -5);
  x[4] = kVocab;
  edgeattn::ModelInputs in = {};
  in.rows = x.data();
  in.num_rows = kRows;
  edgeattn::ModelOutputs o = {out.data(), 0};
  EXPECT_EQ(rt.interp.Invoke(in, &o), edgeattn::Status::kInvalidArgument);
  EXPECT_NE(std::string(rt.interp.error()).find("token id 20 at 4 is outside 0..19"), std::string::npos)
      << rt.interp.error();
  EXPECT_EQ(out, std::vector<int32_t>(kRows, -5));
}

// The report gives the argmax layer's agreement (not an error figure): after
// the chain, the fraction of calibration rows whose int8 index equals the
// float64 model's, which the test counts with Invoke and its own reference.
TEST(IdsChain, ReportGivesTheArgmaxAgreement) {
  const IdsModel m;
  const std::string dir = fixtures::temp_dir("ids_chain_report");
  Runtime rt(convert(m, dir, "int8", m.spec(), dir + "/report.json"));
  const std::vector<uint8_t> text = read_file(dir + "/report.json");
  const nlohmann::json report = nlohmann::json::parse(text.begin(), text.end());
  ASSERT_EQ(report["layers"].size(), 4u);
  const nlohmann::json& top = report["layers"][3];
  ASSERT_TRUE(top.contains("agreement")) << top.dump();
  EXPECT_FALSE(top.contains("relative_l2"));
  ASSERT_TRUE(top.contains("chained")) << top.dump();
  int rows = 0, agree = 0;
  for (int i = 0; i < static_cast<int>(m.calib_ids.shape[0]); ++i) {
    const std::vector<int32_t> got = rt.invoke<int32_t>(m.calib_ids, i, 1);
    const std::vector<double> ref = m.logits(m.calib_ids, i);
    for (int r = 0; r < kRows; ++r, ++rows) agree += got[static_cast<size_t>(r)] == argmax(ref.data() + r * kClasses, kClasses);
  }
  const double reported = top["chained"]["agreement"].get<double>();
  std::printf("  argmax after the chain on the calibration rows: agreement %.4f (report %.4f); on the head's "
              "float64 inputs %.4f\n",
              static_cast<double>(agree) / rows, reported, top["agreement"].get<double>());
  EXPECT_DOUBLE_EQ(reported, static_cast<double>(agree) / rows);
}

// The 16-bit residual stream from the token ids (--residual int16, issue
// 37): an embedding feeding a block directly writes the block's int16 input
// from an int16 table (embedding -> block, the block's int16 rows the
// model's output). Against the test's float64 model (the table's rows
// through the fixture's post-norm block) the int16 stream is more accurate
// than the int8 one and within 1.5 % relative L2 (the post-norm block alone
// is 0.7 % on the int16 stream, docs/quantization.md; an int8 table would
// already cost about 1 %).
TEST(IdsChain, Int16StreamFromTheEmbedding) {
  const IdsModel m;
  const std::string spec = R"({"model": "ids_block", "layers": [
      {"name": "emb", "kind": "embedding", "prefix": "tok.", "max_q_len": 9},
      {"name": "block", "kind": "encoder_block", "preset": "torch", "prefix": "enc.", "embed_dim": 16,
       "num_heads": 2, "ffn_dim": 40, "max_q_len": 9, "input": "emb"}]})";
  double rel[2] = {0, 0};
  for (const bool s16 : {false, true}) {
    const std::string dir = fixtures::temp_dir(s16 ? "ids_block_res16" : "ids_block_res8");
    Runtime rt(convert(m, dir, "int8", spec, "", s16 ? "int16" : "int8"));
    edgeattn::LayerInfo emb = {};
    ASSERT_EQ(rt.model.GetLayerInfo(0, &emb), edgeattn::Status::kOk);
    EXPECT_EQ(emb.input_dtype, EA_S32);
    EXPECT_EQ(emb.output_dtype, s16 ? EA_S16 : EA_S8);
    edgeattn::GraphInfo g = {};
    ASSERT_EQ(rt.model.GetGraphInfo(&g), edgeattn::Status::kOk) << rt.model.error();
    EXPECT_EQ(g.output_dtype, s16 ? EA_S16 : EA_S8);
    double e2 = 0, r2 = 0;
    for (int i = 0; i < static_cast<int>(m.test_ids.shape[0]); ++i) {
      std::vector<double> x;
      for (int r = 0; r < kRows; ++r) {
        const size_t id = static_cast<size_t>(m.test_ids.data[static_cast<size_t>(i) * kRows + r]);
        x.insert(x.end(), m.table.data.begin() + id * kDim, m.table.data.begin() + (id + 1) * kDim);
      }
      ArrayMap in;
      in["block.query"] = fixtures::make("F32", {1, size_t(kRows), size_t(kDim)}, x);
      std::vector<double> want, w;
      m.block.reference(in, &want, &w);
      std::vector<double> got(want.size());
      if (s16) {
        const std::vector<int16_t> y = rt.invoke<int16_t>(m.test_ids, i, kDim);
        for (size_t k = 0; k < got.size(); ++k) got[k] = g.output_quant.scale * y[k];
      } else {
        const std::vector<int8_t> y = rt.invoke<int8_t>(m.test_ids, i, kDim);
        for (size_t k = 0; k < got.size(); ++k) got[k] = g.output_quant.scale * (y[k] - g.output_quant.zero_point);
      }
      for (size_t k = 0; k < got.size(); ++k) {
        e2 += (got[k] - want[k]) * (got[k] - want[k]);
        r2 += want[k] * want[k];
      }
    }
    rel[s16] = std::sqrt(e2 / r2);
  }
  std::printf("  ids -> emb -> block, block output relative L2: int8 stream %.4f, int16 stream %.4f\n", rel[0],
              rel[1]);
  EXPECT_LT(rel[1], rel[0]);
  EXPECT_LE(rel[1], 0.015);
}

}  // namespace ids_chain_test
}  // namespace
