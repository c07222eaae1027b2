// The plain int8 scheme's simulator (converter/eval/plain_int8.h), the baseline of
// issue 10's stretch target: with every rounding off it is the float layer
// (checked against the fixtures' own float64 implementation), a small case
// worked out by hand, saturation at the calibrated range, and its figure in
// the held-out report of the bundled transformer.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "converter/calibrate/calibrate.h"
#include "converter/cli/commands.h"
#include "converter/model/dataset.h"
#include "converter/kinds/mha.h"
#include "converter/kinds/pooling.h"
#include "converter/base/error.h"
#include "converter/io/file.h"
#include "converter/io/formats.h"
#include "converter/eval/metrics.h"
#include "converter/eval/plain_int8.h"
#include "converter/spec/spec.h"
#include "fixtures.h"

namespace {

using namespace edgeattn::convert;
using nlohmann::json;

double rel_l2(const std::vector<double>& a, const std::vector<double>& b) {
  double e2 = 0.0, r2 = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    e2 += (a[i] - b[i]) * (a[i] - b[i]);
    r2 += b[i] * b[i];
  }
  return std::sqrt(e2 / r2);
}

// Rounding switched off everywhere: the float layer. The expected values
// come from the fixtures' float64 MHA (tests/converter/fixtures.cc), written
// independently of the converter.
TEST(PlainInt8, EveryRoundingOffIsTheFloatLayer) {
  for (const fixtures::LayerCase& c :
       {fixtures::mha_case("key_padding", false, "torch_mha", 41), fixtures::mha_case("causal", false, "linear", 42),
        fixtures::mha_case("key_padding", true, "torch_mha", 43), fixtures::mha_case("none", false, "linear", 44)}) {
    SCOPED_TRACE(c.spec_json);
    ArrayMap weights, calib;
    for (const auto& [k, a] : c.weights) weights[k] = a;
    for (const auto& [k, a] : c.calib) calib[k] = a;
    const ModelSpec spec = load_spec("spec.json", c.spec_json, weights, "w", LengthOverrides{});
    const FloatLayer& L = spec.layers[0];
    const LayerCalibration cal = calibrate(L, load_layer_data(calib, "calib", L, false), CalibOptions());
    const LayerData test = load_layer_data(c.test, "test", L, false);
    std::vector<double> want, want_w, got, got_w;
    c.reference(c.test, &want, &want_w);
    PlainInt8Layer(L, cal, PlainInt8Options::none()).run(test, &got, &got_w);
    ASSERT_EQ(got.size(), want.size());
    ASSERT_EQ(got_w.size(), want_w.size());
    // Padded query rows of self-attention are meaningless (and the fixture
    // leaves them as computed): compare() skips them, as the report does.
    const Metrics m = compare(L, test, got, want, got_w, want_w);
    EXPECT_LE(m.rel_l2, 1e-12);
    EXPECT_LE(m.weights_max_abs, 1e-12);
    // Every rounding on: an int8 error, neither zero nor large.
    PlainInt8Layer(L, cal).run(test, &got, &got_w);
    const Metrics q = compare(L, test, got, want, got_w, want_w);
    EXPECT_GT(q.rel_l2, 1e-3);
    EXPECT_LT(q.rel_l2, 0.05);
  }
}

// Each rounding on its own adds error, and the layer with all of them is
// worse than with any one alone (on this fixture, measured 2026-11-25: the
// single roundings give 0.23-1.15 %, all together 2.12 %).
TEST(PlainInt8, EachRoundingAddsError) {
  const fixtures::LayerCase c = fixtures::mha_case("key_padding", true, "torch_mha", 45);
  ArrayMap weights, calib;
  for (const auto& [k, a] : c.weights) weights[k] = a;
  for (const auto& [k, a] : c.calib) calib[k] = a;
  const ModelSpec spec = load_spec("spec.json", c.spec_json, weights, "w", LengthOverrides{});
  const FloatLayer& L = spec.layers[0];
  const LayerCalibration cal = calibrate(L, load_layer_data(calib, "calib", L, false), CalibOptions());
  const LayerData test = load_layer_data(c.test, "test", L, false);
  std::vector<double> want, want_w, all, w;
  c.reference(c.test, &want, &want_w);
  PlainInt8Layer(L, cal).run(test, &all, &w);
  const double all_err = rel_l2(all, want);
  bool PlainInt8Options::*flags[] = {&PlainInt8Options::inputs, &PlainInt8Options::weights, &PlainInt8Options::q,
                                     &PlainInt8Options::k,      &PlainInt8Options::v,       &PlainInt8Options::context,
                                     &PlainInt8Options::output};
  for (size_t f = 0; f < sizeof flags / sizeof flags[0]; ++f) {
    SCOPED_TRACE(f);
    PlainInt8Options only = PlainInt8Options::none();
    only.*flags[f] = true;
    std::vector<double> one;
    PlainInt8Layer(L, cal, only).run(test, &one, &w);
    const double e = rel_l2(one, want);
    std::printf("  only rounding %zu: relL2 %.4f (every rounding: %.4f)\n", f, e, all_err);
    EXPECT_GT(e, 1e-4);
    EXPECT_LT(e, all_err);
  }
}

// A layer small enough to work out by hand: one head of dim 2, identity
// projections without bias, softmax scale 1. Calibrated ranges: [-2, 127/64]
// (scale 1/64, zero point 0) for the query, key, their projections and the
// output; [-1, 191/64] (scale 1/64, zero point -64) for the value and its
// projection; [-4, 127/32] (scale 1/32, zero point 0) for the context.
struct HandCase {
  FloatLayer L;
  LayerCalibration cal;
  HandCase() {
    L.name = "hand";
    L.kind = &kinds::kind_mha;
    L.mask = MaskKind::kKeyPadding;
    MhaParams& P = L.params.emplace<MhaParams>();
    P.cross = true;
    L.query_dim = L.key_dim = L.value_dim = L.output_dim = 2;
    P.num_heads = P.num_kv_heads = 1;
    P.head_dim = 2;
    P.scale = 1.0;
    L.max_q_len = 2;
    L.max_kv_len = 3;
    for (FloatLinear* f : {&P.q_proj, &P.k_proj, &P.v_proj, &P.out_proj}) {
      f->in = f->out = 2;
      f->w = {1.0, 0.0, 0.0, 1.0};
    }
    auto range = [](double lo, double hi) {
      Range r;
      r.add(lo);
      r.add(hi);
      return r;
    };
    for (const char* k : {"query", "key", "q_proj", "k_proj", "output"}) cal.ranges[k] = range(-2.0, 127.0 / 64);
    cal.ranges["value"] = cal.ranges["v_proj"] = range(-1.0, 191.0 / 64);
    cal.ranges["context"] = range(-4.0, 127.0 / 32);
    cal.seen = cal.ranges;
  }
};

TEST(PlainInt8, HandCheckedSmallCase) {
  HandCase h;
  EXPECT_EQ(act_quant(h.cal.ranges["query"], "q").scale, 1.0 / 64);
  EXPECT_EQ(act_quant(h.cal.ranges["query"], "q").zero_point, 0);
  EXPECT_EQ(act_quant(h.cal.ranges["value"], "v").scale, 1.0 / 64);
  EXPECT_EQ(act_quant(h.cal.ranges["value"], "v").zero_point, -64);
  EXPECT_EQ(act_quant(h.cal.ranges["context"], "c").scale, 1.0 / 32);
  EXPECT_EQ(act_quant(h.cal.ranges["context"], "c").zero_point, 0);
  // Query row 0 (0.3, -0.5) rounds to (19, -32)/64; row 1 (3, 0) saturates
  // to (127, 0)/64. Keys (0.5, 0.25), (-0.25, 1.0) and values (1, -1),
  // (0.125, 0.75) are on the grid; a third key is padding (valid = 2).
  const std::vector<double> query = {0.3, -0.5, 3.0, 0.0};
  const std::vector<double> key = {0.5, 0.25, -0.25, 1.0, 9.0, 9.0};
  const std::vector<double> value = {1.0, -1.0, 0.125, 0.75, 9.0, 9.0};
  SampleInput in;
  in.query = query.data();
  in.key = key.data();
  in.value = value.data();
  in.q_len = 2;
  in.kv_len = 3;
  in.valid = 2;
  double out[4], w[6];
  PlainInt8Layer(h.L, h.cal).forward(in, out, w);
  // Row 0: scores 19/64 * 0.5 - 0.5 * 0.25 = 3/128 and
  // 19/64 * -0.25 - 0.5 = -147/256; p0 = 1 / (1 + e^(-153/256)) = 0.64512;
  // context (p0 + p1/8, -p0 + 3 p1 / 4) = (0.68948, -0.37896) rounds to
  // (22, -12)/32, and the identity out_proj gives (44, -24)/64.
  const double p0 = 1.0 / (1.0 + std::exp(-153.0 / 256.0));
  EXPECT_NEAR(p0, 0.64512, 1e-5);
  EXPECT_NEAR(w[0], p0, 1e-12);
  EXPECT_NEAR(w[1], 1.0 - p0, 1e-12);
  EXPECT_EQ(w[2], 0.0);
  EXPECT_EQ(out[0], 44.0 / 64);
  EXPECT_EQ(out[1], -24.0 / 64);
  // Row 1: q = (127/64, 0): scores 127/128 and -127/256, p0 = 1 / (1 +
  // e^(-381/256)) = 0.81582; context (0.83884, -0.67769) -> (27, -22)/32
  // -> output (54, -44)/64 (without the context's rounding: -43/64).
  const double r0 = 1.0 / (1.0 + std::exp(-381.0 / 256.0));
  EXPECT_NEAR(r0, 0.81582, 1e-5);
  EXPECT_NEAR(w[3], r0, 1e-12);
  EXPECT_EQ(out[2], 54.0 / 64);
  EXPECT_EQ(out[3], -44.0 / 64);

  // Context and output roundings off: the float context of the int8 q, k, v
  // through the int8 identity (its per-channel scale is 1/127 as a float).
  PlainInt8Options o;
  o.context = o.output = false;
  PlainInt8Layer(h.L, h.cal, o).forward(in, out, w);
  EXPECT_NEAR(out[0], p0 + (1.0 - p0) / 8, 1e-7);
  EXPECT_NEAR(out[1], -p0 + 0.75 * (1.0 - p0), 1e-7);
  // Query rounding off too: row 1's query no longer saturates (3, 0):
  // scores 1.5 and -0.75.
  o.inputs = o.q = false;
  PlainInt8Layer(h.L, h.cal, o).forward(in, out, w);
  const double s0 = 1.0 / (1.0 + std::exp(-2.25));
  EXPECT_NEAR(w[3], s0, 1e-7);
  EXPECT_NEAR(out[2], s0 + (1.0 - s0) / 8, 1e-7);
}

TEST(PlainInt8, FakeQuantRoundsAndSaturates) {
  const ActQuantParams q{1.0 / 64, 0};
  EXPECT_EQ(fake_quant_int8(0.3, q), 19.0 / 64);
  EXPECT_EQ(fake_quant_int8(-0.3, q), -19.0 / 64);
  EXPECT_EQ(fake_quant_int8(3.0, q), 127.0 / 64);
  EXPECT_EQ(fake_quant_int8(-3.0, q), -2.0);
  const ActQuantParams z{0.5, -100};  // real range [-14, 113.5]
  EXPECT_EQ(fake_quant_int8(0.74, z), 0.5);
  EXPECT_EQ(fake_quant_int8(-20.0, z), -14.0);
  EXPECT_EQ(fake_quant_int8(200.0, z), 113.5);
}

TEST(PlainInt8, OnlyMha) {
  FloatLayer L;
  L.kind = &kinds::kind_pooling;
  EXPECT_FALSE(plain_int8_supported(L));
  EXPECT_THROW(PlainInt8Layer(L, LayerCalibration()), ConvertError);
  HandCase h;
  h.cal.ranges.erase("context");
  EXPECT_THROW(PlainInt8Layer(h.L, h.cal), ConvertError);
}

// ---- The bundled transformer: the held-out report ----

json convert_transformer(const std::string& tag, ConvertOptions o, std::string* text) {
  const std::string dir = fixtures::temp_dir("plain_" + tag);
  const std::string m = std::string(EA_MODELS_DIR) + "/transformer";
  o.weights = m + "/weights.safetensors";
  o.spec = m + "/spec.json";
  o.calib = m + "/calib.npz";
  o.output = dir + "/m.eatn";
  o.report_json = dir + "/r.json";
  o.quiet = true;
  std::ostringstream report;
  run_convert(o, report);
  *text = report.str();
  const std::vector<uint8_t> bytes = read_file(o.report_json);
  return json::parse(std::string(bytes.begin(), bytes.end()));
}

// Every layer reports the plain scheme. Sane bounds: it rounds the same
// tensors as edgeattn at the same scales, so its error is of the same size
// (measured 2026-11-25 with --heldout-split 0.5: plain 1.37-1.87 %,
// edgeattn/plain 1.000-1.002). The plain figure is held between 0.3 % and the
// 3 % transformer target; edgeattn/plain <= 1.05 holds docs/quantization.md's
// reading that the integer softmax costs no measurable accuracy.
TEST(PlainInt8, BundledTransformerHeldOutReport) {
  ConvertOptions o;
  o.heldout_split = 0.5;
  std::string text;
  const json r = convert_transformer("split", o, &text);
  ASSERT_EQ(r["layers"].size(), 3u);
  for (const json& l : r["layers"]) {
    SCOPED_TRACE(l["name"].get<std::string>());
    const json& h = l["heldout"];
    ASSERT_TRUE(h.contains("plain_int8"));
    const json& p = h["plain_int8"];
    const double plain = p["relative_l2"].get<double>(), ours = h["relative_l2"].get<double>();
    EXPECT_GT(plain, 0.003);
    EXPECT_LT(plain, 0.03);
    EXPECT_GT(p["cosine"].get<double>(), 0.999);
    EXPECT_GE(p["worst_sample"]["relative_l2"].get<double>(), plain);
    EXPECT_DOUBLE_EQ(p["edgeattn_over_plain_relative_l2"].get<double>(), ours / plain);
    EXPECT_LE(ours / plain, 1.05);
    EXPECT_NE(p["scheme"].get<std::string>().find("float64 scores, softmax and P.V"), std::string::npos);
  }
  EXPECT_NE(text.find("plain int8, float softmax: relL2 "), std::string::npos) << text;
  EXPECT_NE(text.find("edgeattn/plain relL2 "), std::string::npos) << text;
}

// docs/quantization.md's reading of the stretch target: the int8 rounding
// of the output alone, at the calibrated range, costs more than half the
// plain scheme's error on every transformer layer (measured 2026-11-25,
// --heldout-split 0.5: 1.155 / 1.517, 0.955 / 1.366, 1.081 / 1.870 %), so no
// scheme with an int8 output reaches half of it; with the inputs, context
// and output kept in float the rest is below half on the two self-attention
// layers (0.622 / 1.517, 0.598 / 1.366) but not on dec_cross (1.071 / 1.870).
TEST(PlainInt8, BundledTransformerOutputRoundingAloneExceedsHalf) {
  const std::string m = std::string(EA_MODELS_DIR) + "/transformer";
  const ArrayMap weights = load_weights(m + "/weights.safetensors");
  const std::vector<uint8_t> spec_bytes = read_file(m + "/spec.json");
  const ModelSpec spec =
      load_spec("spec.json", std::string(spec_bytes.begin(), spec_bytes.end()), weights, "w", LengthOverrides{});
  ArrayMap npz = load_data_npz(m + "/calib.npz", "calib");
  ASSERT_EQ(spec.layers.size(), 3u);
  for (const FloatLayer& L : spec.layers) {
    SCOPED_TRACE(L.name);
    LayerData calib, held;
    split_heldout(take_layer_data(&npz, "calib", L, false), 0.5, "calib", &calib, &held);
    ASSERT_EQ(held.n, 8);
    const LayerCalibration cal = calibrate(L, calib, CalibOptions());
    std::vector<double> ref, ref_w, out, w;
    reference_forward(L, held, &ref, &ref_w);
    auto err = [&](const PlainInt8Options& o) {
      PlainInt8Layer(L, cal, o).run(held, &out, &w);
      return compare(L, held, out, ref, w, ref_w).rel_l2;
    };
    const double plain = err(PlainInt8Options());
    PlainInt8Options only_output = PlainInt8Options::none();
    only_output.output = true;
    EXPECT_GT(err(only_output), 0.5 * plain);
    PlainInt8Options boundary;  // inputs, context and output in float
    boundary.inputs = boundary.context = boundary.output = false;
    if (L.name == "dec_cross") {
      EXPECT_GT(err(boundary), 0.5 * plain);
    } else {
      EXPECT_LT(err(boundary), 0.5 * plain);
    }
  }
}

// Other kinds report nothing about it.
TEST(PlainInt8, NotReportedForOtherKinds) {
  const std::string dir = fixtures::temp_dir("plain_pool");
  const std::string m = std::string(EA_MODELS_DIR) + "/pooling";
  ConvertOptions o;
  o.weights = m + "/weights.safetensors";
  o.spec = m + "/spec.json";
  o.calib = m + "/calib.npz";
  o.heldout_split = 0.5;
  o.output = dir + "/m.eatn";
  o.report_json = dir + "/r.json";
  o.quiet = true;
  std::ostringstream report;
  run_convert(o, report);
  const std::vector<uint8_t> bytes = read_file(o.report_json);
  const json r = json::parse(std::string(bytes.begin(), bytes.end()));
  for (const json& l : r["layers"]) {
    ASSERT_TRUE(l.contains("heldout"));
    EXPECT_FALSE(l["heldout"].contains("plain_int8"));
  }
  EXPECT_EQ(report.str().find("plain int8"), std::string::npos);
}

}  // namespace
