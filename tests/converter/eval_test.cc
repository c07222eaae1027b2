// edgeattn-convert eval as users need it (issue 35, item 4): a reference file
// with outputs only (no attention weights) is compared on its outputs, and
// --dump-outputs writes exactly what the runtime returned, under the
// reference's key names.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "converter/base/error.h"
#include "converter/cli/commands.h"
#include "converter/eval/runner.h"
#include "converter/io/file.h"
#include "converter/io/npy.h"
#include "fixtures.h"

namespace {

using namespace edgeattn::convert;

const std::string kPooling = std::string(EA_MODELS_DIR) + "/pooling";

// The bundled pooling model in int8, converted into `dir`.
std::string convert_pooling(const std::string& dir) {
  ConvertOptions o;
  o.weights = kPooling + "/weights.safetensors";
  o.spec = kPooling + "/spec.json";
  o.calib = kPooling + "/calib.npz";
  o.output = dir + "/pooling_int8.eatn";
  o.quiet = true;
  std::ostringstream report;
  run_convert(o, report);
  return o.output;
}

TEST(Eval, DumpOutputsHoldsTheRuntimesOutputsUnderTheReferenceNames) {
  const std::string dir = fixtures::temp_dir("eval_dump");
  EvalOptions e;
  e.model = convert_pooling(dir);
  e.reference = kPooling + "/reference.npz";
  e.repeat = 1;
  e.dump_outputs = dir + "/dump.npz";
  std::ostringstream out;
  ASSERT_NO_THROW(run_eval(e, out)) << out.str();
  EXPECT_NE(out.str().find("wrote " + e.dump_outputs + " (2 arrays)"), std::string::npos) << out.str();

  const ArrayMap dump = load_npz(e.dump_outputs);
  ASSERT_EQ(dump.size(), 2u);
  ASSERT_EQ(dump.count("pool.output"), 1u);
  ASSERT_EQ(dump.count("pool.attn_weights"), 1u);
  const ArrayMap ref = load_npz(e.reference);
  const LoadedModel lm(read_file(e.model), e.model);
  const FloatLayer shell = layer_shell(lm.model(), 0);
  const LayerData d = load_layer_data(ref, e.reference, shell, true);
  const RunResult run = run_layer(lm, 0, d, 1);
  const Array& o = dump.at("pool.output");
  const Array& w = dump.at("pool.attn_weights");
  EXPECT_EQ(o.dtype, "<f4");
  EXPECT_EQ(o.shape, ref.at("pool.output").shape);  // [N, 1, D]: the reference's own shape
  EXPECT_EQ(w.shape, (std::vector<size_t>{static_cast<size_t>(d.n), 1, 1, static_cast<size_t>(d.lk)}));
  ASSERT_EQ(o.data.size(), run.output.size());
  ASSERT_EQ(w.data.size(), run.weights.size());
  for (size_t i = 0; i < o.data.size(); ++i) {
    ASSERT_EQ(o.data[i], static_cast<double>(static_cast<float>(run.output[i]))) << "output " << i;
  }
  for (size_t i = 0; i < w.data.size(); ++i) {
    ASSERT_EQ(w.data[i], static_cast<double>(static_cast<float>(run.weights[i]))) << "weights " << i;
  }
}

TEST(Eval, DumpOutputsUnwritableFailsBeforeRunning) {
  const std::string dir = fixtures::temp_dir("eval_dump_bad");
  EvalOptions e;
  e.model = convert_pooling(dir);
  e.reference = kPooling + "/reference.npz";
  e.repeat = 1;
  e.dump_outputs = "/nonexistent_ea_dir/dump.npz";
  std::ostringstream out;
  try {
    run_eval(e, out);
    FAIL() << "no error";
  } catch (const ConvertError& ex) {
    EXPECT_NE(std::string(ex.what()).find("/nonexistent_ea_dir/dump.npz: cannot write"), std::string::npos)
        << ex.what();
  }
  EXPECT_EQ(out.str(), "");  // nothing ran
}

TEST(Eval, ReferenceWithOutputsOnlyComparesOutputs) {
  const std::string dir = fixtures::temp_dir("eval_outputs_only");
  EvalOptions full;
  full.model = convert_pooling(dir);
  full.reference = kPooling + "/reference.npz";
  full.repeat = 1;
  full.json = dir + "/full.json";
  std::ostringstream full_out;
  run_eval(full, full_out);

  ArrayMap ref = load_npz(full.reference);
  ASSERT_EQ(ref.erase("pool.attn_weights"), 1u);
  std::vector<std::pair<std::string, Array>> entries(ref.begin(), ref.end());
  save_npz(dir + "/outputs_only.npz", entries);
  EvalOptions e = full;
  e.reference = dir + "/outputs_only.npz";
  e.json = dir + "/outputs_only.json";
  std::ostringstream out;
  ASSERT_NO_THROW(run_eval(e, out)) << out.str();
  EXPECT_NE(out.str().find("attn: not in reference"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("attn max|diff|"), std::string::npos) << out.str();
  EXPECT_NE(full_out.str().find("attn max|diff|"), std::string::npos) << full_out.str();
  // The outputs' figures are those of the full reference.
  const auto relL2 = [](const std::string& s) { return s.substr(s.find("relL2"), 30); };  // "relL2 X  cos Y"
  EXPECT_EQ(relL2(out.str()), relL2(full_out.str()));
  const std::vector<uint8_t> report = read_file(e.json);
  EXPECT_NE(std::string(report.begin(), report.end()).find("\"attn_weights_max_abs_diff\": null"), std::string::npos);
}

}  // namespace
