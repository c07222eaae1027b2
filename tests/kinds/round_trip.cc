#include "round_trip.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "converter/cli/commands.h"
#include "converter/base/error.h"
#include "converter/io/file.h"
#include "converter/io/npy.h"
#include "converter/io/safetensors.h"
#include "converter/eval/runner.h"

namespace kindtest {

using namespace edgeattn::convert;
using fixtures::LayerCase;

Figures measure(const LayerCase& c, const LayerData& d, int lq, int dout, int heads,
                const std::vector<double>& out, const std::vector<double>& ref,
                const std::vector<double>& w, const std::vector<double>& ref_w) {
  Figures f;
  double e2 = 0, r2 = 0, o2 = 0, dot = 0, lo = 1e300, hi = -1e300;
  for (int i = 0; i < d.n; ++i) {
    const int rows = c.self_padding && d.valid[static_cast<size_t>(i)] >= 0 ? d.valid[static_cast<size_t>(i)] : lq;
    for (int r = 0; r < rows; ++r) {
      for (int k = 0; k < dout; ++k) {
        const size_t x = (static_cast<size_t>(i) * lq + r) * dout + k;
        f.max_abs = std::max(f.max_abs, std::fabs(out[x] - ref[x]));
        e2 += (out[x] - ref[x]) * (out[x] - ref[x]);
        r2 += ref[x] * ref[x];
        o2 += out[x] * out[x];
        dot += out[x] * ref[x];
        lo = std::min(lo, ref[x]);
        hi = std::max(hi, ref[x]);
      }
      for (int h = 0; h < heads; ++h) {
        for (int j = 0; j < d.lk; ++j) {
          const size_t x = ((static_cast<size_t>(i) * heads + h) * lq + r) * d.lk + j;
          f.weights_max_abs = std::max(f.weights_max_abs, std::fabs(w[x] - ref_w[x]));
        }
      }
    }
  }
  f.rel_l2 = std::sqrt(e2 / r2);
  f.cosine = dot / std::sqrt(r2 * o2);
  f.ref_range = hi - lo;
  return f;
}

void check_case(const LayerCase& c) {
  const std::string dir = fixtures::temp_dir(c.name);
  save_safetensors(dir + "/weights.safetensors", c.weights);
  fixtures::write_text(dir + "/spec.json", c.spec_json);
  save_npz(dir + "/calib.npz", c.calib);
  std::vector<double> ref, ref_w;
  c.reference(c.test, &ref, &ref_w);
  for (const std::string dtype : {"int8", "f32"}) {
    SCOPED_TRACE(c.name + " " + dtype);
    ConvertOptions o;
    o.weights = dir + "/weights.safetensors";
    o.spec = dir + "/spec.json";
    o.calib = dir + "/calib.npz";
    o.dtype = dtype;
    o.output = dir + "/model_" + dtype + ".eatn";
    std::ostringstream report;
    ASSERT_NO_THROW(run_convert(o, report)) << report.str();
    const LoadedModel lm(read_file(o.output), o.output);
    ASSERT_EQ(lm.model().num_layers(), 1);
    const FloatLayer shell = layer_shell(lm.model(), 0);
    const LayerData d = load_layer_data(c.test, "test", shell, false);
    const RunResult run = run_layer(lm, 0, d, 1);
    const int lq = shell.output_rows(d.lq);  // 1 with a learned query, + added rows (class tokens)
    const Figures f = measure(c, d, lq, shell.output_dim, shell.heads(), run.output, ref, run.weights, ref_w);
    std::printf("  %-10s %-5s max|err| %.3e (range %.3g) relL2 %.4f cos %.6f attn max|diff| %.3e\n",
                c.name.c_str(), dtype.c_str(), f.max_abs, f.ref_range, f.rel_l2, f.cosine, f.weights_max_abs);
    if (dtype == "int8") {
      EXPECT_LE(f.rel_l2, 0.03);
      EXPECT_GE(f.cosine, 0.999);
      EXPECT_LE(f.weights_max_abs, 0.05);
    } else {
      EXPECT_LE(f.max_abs, 1e-4 * f.ref_range);
      EXPECT_LE(f.weights_max_abs, 1e-5);
    }
  }
}

std::string convert_case(const LayerCase& c, const std::string& dtype, const std::string& residual) {
  const std::string dir = fixtures::temp_dir(c.name + "_" + dtype + (residual.empty() ? "" : "_res_" + residual));
  return fixtures::convert_files(dir, c.weights, c.spec_json, c.calib, dtype, residual);
}

StreamRun run_stream(const LayerCase& c, const std::string& residual) {
  const std::string file = convert_case(c, "int8", residual);
  const LoadedModel lm(read_file(file), file);
  StreamRun s;
  EXPECT_EQ(lm.model().GetLayerInfo(0, &s.info), edgeattn::Status::kOk);
  const FloatLayer shell = layer_shell(lm.model(), 0);
  const LayerData d = load_layer_data(c.test, "test", shell, false);
  const RunResult run = run_layer(lm, 0, d, 1);
  std::vector<double> ref, ref_w;
  c.reference(c.test, &ref, &ref_w);
  // Valid rows only (key padding), as the fixture's round trip compares them.
  const int dim = shell.output_dim;
  double e2 = 0, r2 = 0, c2 = 0;
  for (int i = 0; i < d.n; ++i) {
    const int rows = d.valid[static_cast<size_t>(i)] >= 0 ? d.valid[static_cast<size_t>(i)] : d.lq;
    for (size_t x = static_cast<size_t>(i) * d.lq * dim; x < (static_cast<size_t>(i) * d.lq + rows) * dim; ++x) {
      const double err = run.output[x] - ref[x], change = ref[x] - d.query[x];
      e2 += err * err;
      r2 += ref[x] * ref[x];
      c2 += change * change;
    }
  }
  s.rel_l2 = std::sqrt(e2 / r2);
  s.change_rel_l2 = std::sqrt(e2 / c2);
  std::printf("  %-10s residual %-5s relL2 %.4f  change relL2 %.4f\n", c.name.c_str(), residual.c_str(), s.rel_l2,
              s.change_rel_l2);
  return s;
}

}  // namespace kindtest
