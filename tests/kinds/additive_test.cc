// The additive (Bahdanau) attention kind: its round trips (tests/kinds/round_trip.h) and its
// own cases.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "converter/cli/commands.h"
#include "converter/base/error.h"
#include "converter/io/file.h"
#include "converter/io/npy.h"
#include "converter/io/safetensors.h"
#include "converter/eval/runner.h"
#include "round_trip.h"

namespace {

using kindtest::check_case;
using namespace edgeattn::convert;
using fixtures::LayerCase;
using kindtest::Figures;
using kindtest::measure;

TEST(Additive, RoundTrip) { check_case(fixtures::additive_case(14)); }
TEST(Additive, RoundTripSeparateValues) { check_case(fixtures::additive_case(19, true)); }
// The PyTorch seq2seq tutorial's BahdanauAttention: b_q folded into w_k's
// bias, b_v accepted (the softmax cancels it), against the tutorial's forward.
TEST(Additive, RoundTripTutorialBiases) { check_case(fixtures::additive_tutorial_case(20)); }

// The same round trip would catch a dropped bias: converted without b_q
// (--allow-unused), the f32 model is far outside the tolerance above, and
// convert's own accuracy report says so (its float reference keeps the
// nn.Linear bias the spec leaves out).
TEST(Additive, DroppedBiasShows) {
  LayerCase c = fixtures::additive_tutorial_case(20);
  const std::string dir = fixtures::temp_dir("dropped_bias");
  save_safetensors(dir + "/weights.safetensors", c.weights);
  fixtures::write_text(dir + "/spec.json", fixtures::spec_without(c.spec_json, "b_q"));
  save_npz(dir + "/calib.npz", c.calib);
  ConvertOptions o;
  o.weights = dir + "/weights.safetensors";
  o.spec = dir + "/spec.json";
  o.calib = dir + "/calib.npz";
  o.dtype = "f32";
  o.output = dir + "/model.eatn";
  o.report_json = dir + "/report.json";
  std::ostringstream report;
  EXPECT_THROW(run_convert(o, report), ConvertError);
  o.allow_unused = true;
  ASSERT_NO_THROW(run_convert(o, report));
  EXPECT_NE(report.str().find("warning: tensor 'attention.Wa.bias'"), std::string::npos) << report.str();
  const LoadedModel lm(read_file(o.output), o.output);
  const FloatLayer shell = layer_shell(lm.model(), 0);
  const LayerData d = load_layer_data(c.test, "test", shell, false);
  const RunResult run = run_layer(lm, 0, d, 1);
  std::vector<double> ref, ref_w;
  c.reference(c.test, &ref, &ref_w);
  const Figures f = measure(c, d, d.lq, shell.output_dim, 1, run.output, ref, run.weights, ref_w);
  EXPECT_GT(f.max_abs, 100 * 1e-4 * f.ref_range);
  EXPECT_GT(f.weights_max_abs, 100 * 1e-5);
  const std::vector<uint8_t> j = read_file(o.report_json);
  const double rel_l2 = nlohmann::json::parse(j.begin(), j.end())["layers"][0]["relative_l2"].get<double>();
  EXPECT_GT(rel_l2, 0.05);
  std::printf("  without b_q: max|err| %.3e (range %.3g), relL2 %.4f; convert's report: relL2 %.4f\n", f.max_abs,
              f.ref_range, f.rel_l2, rel_l2);
}

}  // namespace
