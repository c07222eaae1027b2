// converter_plain_int8_study: where the int8 error of a model's mha layers
// comes from (docs/quantization.md, "Against a plain int8 scheme"). For each
// mha layer, on held-out data: edgeattn's int8 runtime and the plain int8
// scheme (converter/eval/plain_int8.h) against the float64 layer, the distance
// between the two, and the plain scheme with single roundings switched off
// (that tensor kept in float64) or with only one rounding on.
//
//   converter_plain_int8_study MODEL_DIR --heldout-split F
//   converter_plain_int8_study MODEL_DIR --heldout FILE.npz
//
// MODEL_DIR holds weights.safetensors, spec.json and calib.npz (models/*).
// Calibration: minmax without headroom (the library's CalibOptions(); the
// command line's default adds the auto headroom).
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "converter/calibrate/calibrate.h"
#include "converter/write/model_file.h"
#include "converter/model/dataset.h"
#include "converter/eval/heldout.h"
#include "converter/io/file.h"
#include "converter/io/formats.h"
#include "converter/eval/metrics.h"
#include "converter/eval/plain_int8.h"
#include "converter/eval/runner.h"
#include "converter/kinds/kind.h"
#include "converter/spec/spec.h"

using namespace edgeattn::convert;

namespace {

struct Variant {
  std::string name;
  PlainInt8Options options;
};

std::vector<Variant> variants() {
  std::vector<Variant> v;
  bool PlainInt8Options::*flags[] = {&PlainInt8Options::inputs, &PlainInt8Options::weights, &PlainInt8Options::q,
                                     &PlainInt8Options::k,      &PlainInt8Options::v,       &PlainInt8Options::context,
                                     &PlainInt8Options::output};
  const char* names[] = {"inputs", "weights", "q", "k", "v", "context", "output"};
  v.push_back({"plain (every rounding)", PlainInt8Options()});
  for (size_t f = 0; f < 7; ++f) {
    PlainInt8Options o;
    o.*flags[f] = false;
    v.push_back({std::string("off: ") + names[f], o});
  }
  for (size_t f = 0; f < 7; ++f) {
    PlainInt8Options o = PlainInt8Options::none();
    o.*flags[f] = true;
    v.push_back({std::string("only: ") + names[f], o});
  }
  PlainInt8Options qk;
  qk.q = qk.k = false;
  v.push_back({"off: q, k", qk});
  PlainInt8Options qkv;
  qkv.q = qkv.k = qkv.v = false;
  v.push_back({"off: q, k, v", qkv});
  PlainInt8Options co;
  co.context = co.output = false;
  v.push_back({"off: context, output", co});
  PlainInt8Options qkvc;
  qkvc.q = qkvc.k = qkvc.v = qkvc.context = false;
  v.push_back({"off: q, k, v, context", qkvc});
  PlainInt8Options ioc;
  ioc.inputs = ioc.context = ioc.output = false;
  v.push_back({"off: inputs, context, output", ioc});
  PlainInt8Options iqkco;
  iqkco.inputs = iqkco.q = iqkco.k = iqkco.context = iqkco.output = false;
  v.push_back({"off: inputs, q, k, context, output", iqkco});
  PlainInt8Options only_w = PlainInt8Options::none();
  only_w.weights = only_w.inputs = true;
  v.push_back({"only: inputs, weights", only_w});
  return v;
}

int usage() {
  std::fprintf(stderr, "usage: converter_plain_int8_study MODEL_DIR (--heldout-split F | --heldout FILE.npz)\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) return usage();
  const std::string dir = argv[1], how = argv[2], arg = argv[3];
  if (how != "--heldout-split" && how != "--heldout") return usage();
  try {
    const ArrayMap weights = load_weights(dir + "/weights.safetensors");
    const std::vector<uint8_t> spec_bytes = read_file(dir + "/spec.json");
    const ModelSpec spec = load_spec(dir + "/spec.json", std::string(spec_bytes.begin(), spec_bytes.end()), weights,
                                     dir + "/weights.safetensors", LengthOverrides{});
    const std::string calib_path = dir + "/calib.npz";
    ArrayMap npz = load_data_npz(calib_path, "calibration data");
    std::vector<LayerData> calib, held;
    for (const FloatLayer& L : spec.layers) calib.push_back(take_layer_data(&npz, calib_path, L, false));
    if (how == "--heldout") {
      ArrayMap h = load_data_npz(arg, "held-out data");
      for (const FloatLayer& L : spec.layers) held.push_back(take_layer_data(&h, arg, L, false));
    } else {
      const double f = std::atof(arg.c_str());
      for (size_t i = 0; i < calib.size(); ++i) {
        LayerData keep, out;
        split_heldout(calib[i], f, calib_path, &keep, &out);
        calib[i] = std::move(keep);
        held.push_back(std::move(out));
      }
    }
    std::vector<LayerCalibration> cal;
    const std::vector<uint8_t> bytes =
        build_model(spec, OutputType::kInt8, calib, calib_path, "study", nullptr, nullptr, CalibOptions(), &cal);
    const LoadedModel lm(bytes, "model");
    std::printf("%s, %s %s; calibrated on %d samples, %d held out; relative L2 %% against the float64 layer\n",
                dir.c_str(), how.c_str(), arg.c_str(), calib.empty() ? 0 : calib[0].n,
                held.empty() ? 0 : held[0].n);
    for (size_t i = 0; i < spec.layers.size(); ++i) {
      const FloatLayer& L = spec.layers[i];
      if (!plain_int8_supported(L)) {
        std::printf("%s: %s layer, no plain int8 scheme\n", L.name.c_str(), L.kind->name);
        continue;
      }
      const HeldoutResult h = evaluate_heldout(lm, static_cast<int>(i), L, held[i], cal[i]);
      std::vector<double> ref, ref_w;
      reference_forward(L, held[i], &ref, &ref_w);
      const RunResult run = run_layer(lm, static_cast<int>(i), held[i], 1);
      std::vector<double> plain, plain_w;
      PlainInt8Layer(L, cal[i]).run(held[i], &plain, &plain_w);
      const Metrics between = compare(L, held[i], run.output, plain, run.weights, plain_w);
      std::printf("%s:\n  %-36s %7.3f   (attn max|diff| %.2e)\n", L.name.c_str(), "edgeattn int8 runtime",
                  100.0 * h.metrics.rel_l2, h.metrics.weights_max_abs);
      std::printf("  %-36s %7.3f   (relative to the plain output; attn max|diff| %.2e)\n",
                  "edgeattn vs plain", 100.0 * between.rel_l2, between.weights_max_abs);
      for (const Variant& v : variants()) {
        std::vector<double> out, w;
        PlainInt8Layer(L, cal[i], v.options).run(held[i], &out, &w);
        const Metrics m = compare(L, held[i], out, ref, w, ref_w);
        std::printf("  %-36s %7.3f   (attn max|diff| %.2e)\n", v.name.c_str(), 100.0 * m.rel_l2, m.weights_max_abs);
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "converter_plain_int8_study: %s\n", e.what());
    return 1;
  }
  return 0;
}
