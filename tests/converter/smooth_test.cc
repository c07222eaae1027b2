// SmoothQuant in the converter (converter/calibrate/smooth.h, convert --smooth-alpha):
// the folded layer computes the same float function (float64 reference and
// the runtime's f32 path), the int8 error falls on a block with outlier
// LayerNorm channels (models/outlier_block), the report names such channels
// when the option is off, and the option is refused with a message naming
// the layer where it cannot apply.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "converter/write/block_tables.h"
#include "converter/cli/commands.h"
#include "converter/write/model_file.h"
#include "converter/base/error.h"
#include "converter/io/file.h"
#include "converter/io/formats.h"
#include "converter/kinds/decoder_block.h"
#include "converter/kinds/encoder_block.h"
#include "converter/eval/metrics.h"
#include "converter/eval/runner.h"
#include "converter/calibrate/smooth.h"
#include "fixtures.h"

namespace {

using namespace edgeattn::convert;

const std::string kModels = EA_MODELS_DIR;

struct Loaded {
  ModelSpec spec;
  std::vector<LayerData> calib, ref;
};

Loaded Load(const std::string& model) {
  const std::string dir = kModels + "/" + model + "/";
  const ArrayMap w = load_weights(dir + "weights.safetensors");
  const std::vector<uint8_t> s = read_file(dir + "spec.json");
  Loaded l{load_spec(dir + "spec.json", std::string(s.begin(), s.end()), w, "w", {}), {}, {}};
  const ArrayMap calib = load_data_npz(dir + "calib.npz", "calib");
  const ArrayMap ref = load_data_npz(dir + "reference.npz", "reference");
  for (const FloatLayer& L : l.spec.layers) {
    l.calib.push_back(load_layer_data(calib, "calib", L, false));
    l.ref.push_back(load_layer_data(ref, "reference", L, false));
  }
  return l;
}

std::vector<double> LayerGains(const FloatLayer& L) {
  std::vector<double> g;
  for (const FloatNorm* n : L.kind == &kinds::kind_encoder_block
                                ? std::vector<const FloatNorm*>{&L.as<BlockParams>().norm1, &L.as<BlockParams>().norm2}
                                : std::vector<const FloatNorm*>{&L.as<DecoderParams>().norm1,
                                                                &L.as<DecoderParams>().norm2,
                                                                &L.as<DecoderParams>().norm3}) {
    g.insert(g.end(), n->gain.begin(), n->gain.end());
  }
  return g;
}

double RelL2(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0.0, den = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  return std::sqrt(num / den);
}

// Every pre-norm block layer of the bundled block models and the outlier
// block: the folded layer's float64 outputs equal the original's to rounding,
// its gains did change, and the f32 model of it runs the same function.
TEST(Smooth, FoldedLayerComputesTheSameFunction) {
  for (const auto& [model, names] :
       std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"outlier_block", {"enc", "dec"}}, {"encoder_block", {"pre", "vit", "custom", "dec_pre"}}}) {
    Loaded l = Load(model);
    for (size_t i = 0; i < l.spec.layers.size(); ++i) {
      const FloatLayer& L = l.spec.layers[i];
      if (std::find(names.begin(), names.end(), L.name) == names.end()) continue;
      SCOPED_TRACE(model + " " + L.name);
      for (double alpha : {0.25, 0.5, 0.75}) {
        FloatLayer S = L;
        const std::vector<SmoothedPair> folds = smooth_layer(&S, l.calib[i], alpha);
        ASSERT_EQ(folds.size(), L.kind == &kinds::kind_encoder_block ? 2u : 3u);
        // The factors are not all 1: the weights the files get differ.
        const std::vector<double> g0 = LayerGains(L), g1 = LayerGains(S);
        double moved = 0.0;
        for (size_t j = 0; j < g0.size(); ++j) moved = std::max(moved, std::fabs(g1[j] / g0[j] - 1.0));
        EXPECT_GT(moved, 0.1);
        std::vector<double> a, b, w;
        reference_forward(L, l.ref[i], &a, &w);
        reference_forward(S, l.ref[i], &b, &w);
        EXPECT_LT(RelL2(b, a), 1e-12) << "alpha " << alpha;
      }
      // f32 files of both, run by the runtime, against the unsmoothed float64 layer.
      ModelSpec one, smoothed;
      one.layers.push_back(L);
      smoothed.layers.push_back(L);
      smooth_layer(&smoothed.layers[0], l.calib[i], 0.5);
      std::vector<double> ref, w;
      reference_forward(L, l.ref[i], &ref, &w);
      const LoadedModel m0(build_model(one, OutputType::kF32, {}, "", "test"), "plain");
      const LoadedModel m1(build_model(smoothed, OutputType::kF32, {}, "", "test"), "smoothed");
      const RunResult r0 = run_layer(m0, 0, l.ref[i], 1), r1 = run_layer(m1, 0, l.ref[i], 1);
      EXPECT_LT(RelL2(r0.output, ref), 1e-6);
      EXPECT_LT(RelL2(r1.output, ref), 1e-6);
      EXPECT_LT(RelL2(r1.output, r0.output), 1e-6);
    }
  }
}

// On models/outlier_block (LayerNorm gains of 12 on three channels) the int8
// error on held-out data falls with --smooth-alpha 0.5, by a quarter at least
// on the decoder block (docs/quantization.md has the figures).
TEST(Smooth, OutlierChannelsInt8ErrorFalls) {
  const std::string dir = kModels + "/outlier_block/";
  const std::string out = fixtures::temp_dir("smooth_outlier");
  auto held_out_rel_l2 = [&](double alpha, const char* residual = "auto", const char* headroom = "auto",
                             const std::string& spec = "") {
    ConvertOptions o;
    o.residual = residual;
    o.calib_headroom = headroom;
    o.weights = dir + "weights.safetensors";
    o.spec = spec.empty() ? dir + "spec.json" : spec;
    o.calib = dir + "calib.npz";
    o.heldout = dir + "reference.npz";
    o.output = out + "/m.eatn";
    o.report_json = out + "/r.json";
    o.smooth_alpha = alpha;
    std::ostringstream report;
    run_convert(o, report);
    const std::vector<uint8_t> j = read_file(o.report_json);
    const nlohmann::json r = nlohmann::json::parse(std::string(j.begin(), j.end()));
    if (alpha >= 0.0) {
      EXPECT_EQ(r["smoothing"]["folds"].size(), 5u);
      EXPECT_NE(report.str().find("smoothing (--smooth-alpha 0.5)"), std::string::npos) << report.str();
    }
    // Without --smooth-alpha the report names each outlier-channel LayerNorm
    // output (every one of the five pairs here) and the option; with it, none.
    int hints = 0;
    for (const nlohmann::json& w : r["warnings"]) {
      const std::string t = w.get<std::string>();
      if (t.find("(outlier channels)") == std::string::npos) continue;
      ++hints;
      EXPECT_NE(t.find("--smooth-alpha 0.5"), std::string::npos) << t;
      EXPECT_TRUE(t.find("layer 'enc'") == 0 || t.find("layer 'dec'") == 0) << t;
    }
    EXPECT_EQ(hints, alpha >= 0.0 ? 0 : 5);
    std::vector<double> e;
    for (const nlohmann::json& l : r["layers"]) e.push_back(l["heldout"]["relative_l2"].get<double>());
    return e;
  };
  const std::vector<double> plain = held_out_rel_l2(-1.0), smoothed = held_out_rel_l2(0.5);
  ASSERT_EQ(plain.size(), 2u);
  ASSERT_EQ(smoothed.size(), 2u);
  EXPECT_LT(smoothed[0], plain[0]);         // enc
  EXPECT_LT(smoothed[1], 0.75 * plain[1]);  // dec
  // Issue 37's target for this block (enc <= 3.6 %), with the setting for
  // outlier channels (docs/quantization.md: 3.03 % / 2.60 % measured): the
  // int16 stream, SmoothQuant for the channels' step, 25 % headroom for
  // their held-out extremes.
  const std::vector<double> tuned = held_out_rel_l2(0.5, "int16", "25");
  ASSERT_EQ(tuned.size(), 2u);
  EXPECT_LE(tuned[0], 0.036);  // enc
  EXPECT_LE(tuned[1], 0.030);  // dec
  // The headroom as one layer's "calib_headroom" instead: enc gets it, dec's
  // ranges (and so its outputs) stay those of --calib-headroom auto.
  const std::vector<uint8_t> text = read_file(dir + "spec.json");
  nlohmann::json spec = nlohmann::json::parse(std::string(text.begin(), text.end()));
  ASSERT_EQ(spec["layers"][0]["name"], "enc");
  spec["layers"][0]["calib_headroom"] = 25;
  const std::string spec_path = out + "/enc_headroom.json";
  const std::string dumped = spec.dump(1);
  write_file_atomic(spec_path, dumped.data(), dumped.size());
  const std::vector<double> auto_all = held_out_rel_l2(0.5, "int16", "auto");
  const std::vector<double> enc_only = held_out_rel_l2(0.5, "int16", "auto", spec_path);
  ASSERT_EQ(enc_only.size(), 2u);
  EXPECT_DOUBLE_EQ(enc_only[0], tuned[0]);
  EXPECT_DOUBLE_EQ(enc_only[1], auto_all[1]);
  EXPECT_NE(enc_only[1], tuned[1]);
}

// The hint's measure: the outlier block's LayerNorm outputs are far above
// kOutlierChannelSpread, the bundled blocks' well below it, and post-norm
// blocks and kinds without LayerNorm -> projection pairs give no pair.
TEST(Smooth, ChannelSpreadsSeparateOutlierChannels) {
  Loaded outlier = Load("outlier_block");
  const std::vector<SmoothedPair> o = layernorm_channel_spreads(&outlier.spec, outlier.calib, 2);
  ASSERT_EQ(o.size(), 5u);  // enc: norm1, norm2; dec: norm1, norm2, norm3
  for (const SmoothedPair& p : o) EXPECT_GT(p.spread_before, 2.0 * kOutlierChannelSpread) << p.layer << " " << p.what;
  Loaded bundled = Load("encoder_block");
  const std::vector<SmoothedPair> b = layernorm_channel_spreads(&bundled.spec, bundled.calib, 2);
  EXPECT_EQ(b.size(), 9u);  // pre, vit, custom: 2 each; dec_pre: 3; post, dec_post and the other kinds: none
  for (const SmoothedPair& p : b) {
    EXPECT_NE(p.layer, "post");
    EXPECT_NE(p.layer, "dec_post");
    EXPECT_LT(p.spread_before, 0.6 * kOutlierChannelSpread) << p.layer << " " << p.what;
  }
}

std::string SmoothError(const std::string& model, const std::string& layer, double alpha = 0.5) {
  Loaded l = Load(model);
  try {
    if (layer.empty()) {
      smooth_model(&l.spec, l.calib, alpha, {});
    } else {
      smooth_model(&l.spec, l.calib, alpha, {layer});
    }
  } catch (const ConvertError& e) {
    return e.what();
  }
  return "";
}

TEST(Smooth, RefusedWhereItCannotApply) {
  // Post-norm: the LayerNorm output is also the residual stream.
  for (const char* layer : {"post", "dec_post"}) {
    const std::string e = SmoothError("encoder_block", layer);
    EXPECT_NE(e.find(std::string("layer '") + layer + "'"), std::string::npos) << e;
    EXPECT_NE(e.find("post-norm"), std::string::npos) << e;
  }
  // Every block by default: the post-norm one stops it, naming it and --smooth-layers.
  const std::string all = SmoothError("encoder_block", "");
  EXPECT_NE(all.find("layer 'post'"), std::string::npos) << all;
  EXPECT_NE(all.find("--smooth-layers"), std::string::npos) << all;
  // Kinds without a LayerNorm -> projection pair inside.
  for (const char* layer : {"final_norm", "mlp", "head"}) {
    const std::string e = SmoothError("encoder_block", layer);
    EXPECT_NE(e.find(std::string("layer '") + layer + "'"), std::string::npos) << e;
    EXPECT_NE(e.find("has no LayerNorm feeding a projection"), std::string::npos) << e;
  }
  EXPECT_NE(SmoothError("encoder_block", "nope").find("the spec has no layer 'nope'"), std::string::npos);
  EXPECT_NE(SmoothError("encoder_block", "pre", 1.5).find("--smooth-alpha must be in [0, 1]"), std::string::npos);
  EXPECT_EQ(SmoothError("outlier_block", ""), "");  // both layers pre-norm

  // The CLI path: factors come from calibration data.
  const std::string dir = kModels + "/outlier_block/";
  ConvertOptions o;
  o.weights = dir + "weights.safetensors";
  o.spec = dir + "spec.json";
  o.dtype = "f32";
  o.output = fixtures::temp_dir("smooth_refused") + "/m.eatn";
  o.smooth_alpha = 0.5;
  std::ostringstream report;
  try {
    run_convert(o, report);
    ADD_FAILURE() << "converted without calibration data";
  } catch (const ConvertError& e) {
    EXPECT_NE(std::string(e.what()).find("--smooth-alpha needs calibration data"), std::string::npos) << e.what();
  }
  o.smooth_alpha = -1.0;
  o.smooth_layers = {"enc"};
  try {
    run_convert(o, report);
    ADD_FAILURE() << "--smooth-layers without --smooth-alpha accepted";
  } catch (const ConvertError& e) {
    EXPECT_NE(std::string(e.what()).find("--smooth-layers needs --smooth-alpha"), std::string::npos) << e.what();
  }
}

}  // namespace
