// A simulator of a "plain" int8 scheme for multi-head attention layers, the
// baseline of issue 10's stretch target: edgeattn's int8 error should be at
// most half of this scheme's. It runs in the converter (float64), next to the
// float64 reference, on the same calibrated ranges and the same int8 weights
// edgeattn uses, so the two differ only where the schemes differ.
//
// The plain scheme, step by step (int8 = rounded to int8 codes with
// saturation; float = float64, no rounding):
//
//   1. query, key, value inputs      int8, asymmetric per tensor, the calibrated
//                                    ranges of the layer ("query", "key",
//                                    "value"), round half away from zero (as
//                                    the converter quantizes the runtime's inputs)
//   2. q_proj, k_proj, v_proj        weights int8, symmetric per output
//      weights and biases            channel (quantize_linear(), edgeattn's own
//                                    int8 weights); bias int32 at s_x s_w[n]
//   3. the three projections         exact integer accumulation
//                                    sum_k q_w[n][k] (q_x[k] - zp_x) + bias[n]
//   4. q, k, v                       int8, per tensor, the calibrated ranges
//                                    ("q_proj", "k_proj", "v_proj"): requantized
//                                    in float, round(acc s_x s_w[n] / s_y) + zp_y
//   5. scores                        float: scale * <q, k> of the dequantized
//                                    int8 q and k
//   6. softmax                       float (exp, sum, divide), masks as the
//                                    float reference applies them (row_limit)
//   7. P.V                           float: probabilities times dequantized int8 v
//   8. context (out_proj input)      int8, per tensor, calibrated ("context")
//   9. out_proj                      int8 weights, int32 bias, exact integer
//                                    accumulation, as steps 2-3
//  10. output                        int8, per tensor, calibrated ("output"),
//                                    requantized in float; dequantized for the
//                                    comparison
//
// Against edgeattn's int8 path (docs/quantization.md) the same tensors are
// rounded to int8 with the same scales and zero points; what differs is steps
// 4-8: edgeattn requantizes with a 31-bit integer multiplier (round half up),
// computes the softmax in integers from the int32 scores, rounds the
// probabilities to Q15 and requantizes the int32 P.V sums to the int8
// context. The plain scheme does steps 5-7 exactly.
//
// PlainInt8Options switches off single roundings (that tensor stays float64)
// to measure which one dominates the error; with every rounding off the
// simulation is the float64 reference up to summation order.
#ifndef EDGEATTN_CONVERTER_EVAL_PLAIN_INT8_H_
#define EDGEATTN_CONVERTER_EVAL_PLAIN_INT8_H_

#include <string>
#include <vector>

#include "converter/calibrate/calibrate.h"
#include "converter/model/dataset.h"
#include "converter/model/float_reference.h"
#include "converter/quantize/quantize.h"

namespace edgeattn {
namespace convert {

// Which tensors the simulation rounds to int8 (true: as the plain scheme
// does; false: that tensor stays float64).
struct PlainInt8Options {
  bool inputs = true;   // step 1: query, key, value inputs
  bool weights = true;  // steps 2, 9: every projection's weights and biases
  bool q = true, k = true, v = true;  // step 4, each projection's output
  bool context = true;  // step 8
  bool output = true;   // step 10

  static PlainInt8Options none();  // every rounding off: the float64 layer
};

// The scheme in one line, for reports.
extern const char* const kPlainInt8Scheme;

// True for the layers the plain scheme is defined for (kind mha).
bool plain_int8_supported(const FloatLayer& layer);

// One MHA layer in the plain scheme, its int8 parameters made once.
class PlainInt8Layer {
 public:
  // `calibration`: the layer's calibrated ranges (calibrate()), the ones its
  // edgeattn int8 model was made from. Throws ConvertError naming `what` for
  // a layer kind other than mha or a missing range.
  PlainInt8Layer(const FloatLayer& layer, const LayerCalibration& calibration,
                 const PlainInt8Options& options = PlainInt8Options(), const std::string& what = "plain int8");

  // One sample: out [q_len][output_dim] (dequantized), weights (if non-null)
  // [heads][q_len][kv_len] float probabilities, 0 on masked keys; the sizes
  // of forward() in float_reference.h.
  void forward(const SampleInput& in, double* out, double* weights) const;

  // Every sample of `data`, concatenated as reference_forward() lays them out.
  void run(const LayerData& data, std::vector<double>* out, std::vector<double>* weights) const;

 private:
  // A projection: int8 weights (per channel) + int32 bias, its input's and
  // output's per-tensor parameters, and which of them are rounded.
  struct Proj {
    const FloatLinear* f = nullptr;
    QuantLinear q;
    std::vector<double> bias_q;  // round(b[n] / (s_x s_w[n])): the int32 bias
    bool round_in = true, round_w = true, round_out = true;
  };
  Proj make_proj(const FloatLinear& f, const ActQuantParams& in, const ActQuantParams& out, bool round_in,
                 bool round_out, const std::string& what) const;
  // y [rows][f.out]: the projection of x [rows][f.in] (real values; rounded
  // to the input's int8 first if round_in), real values (on the output's
  // int8 grid if round_out).
  void project(const Proj& p, const double* x, int rows, double* y) const;

  const FloatLayer& layer_;
  PlainInt8Options options_;
  ActQuantParams query_, key_, value_, context_;
  Proj q_, k_, v_, o_;
};

// Rounds x to the int8 grid of `q` (sat8(round(x / s) + zp)) and back to a
// real value: s (code - zp).
double fake_quant_int8(double x, const ActQuantParams& q);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_EVAL_PLAIN_INT8_H_
