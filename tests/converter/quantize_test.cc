// Calibration parameters, weight quantization and the written file layout.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "converter/write/block_tables.h"
#include "converter/calibrate/calibrate.h"
#include "converter/cli/commands.h"
#include "converter/base/error.h"
#include "converter/io/file.h"
#include "converter/io/npy.h"
#include "converter/io/safetensors.h"
#include "converter/quantize/quantize.h"
#include "converter/eval/runner.h"
#include "edgeattn/edgeattn_generated.h"
#include "edgeattn/kernels/quantize_multiplier.h"
#include "fixtures.h"

namespace {

using namespace edgeattn::convert;
namespace fb = edgeattn::fb;

TEST(ConverterQuantize, ActQuantFromRange) {
  ActQuantParams q = act_quant(-1.0, 3.0);
  EXPECT_FLOAT_EQ(static_cast<float>(q.scale), 4.0f / 255.0f);
  EXPECT_EQ(q.zero_point, -64);  // round(-128 + 63.75)
  q = act_quant(0.5, 2.0);       // extended to include 0
  EXPECT_FLOAT_EQ(static_cast<float>(q.scale), 2.0f / 255.0f);
  EXPECT_EQ(q.zero_point, -128);
  q = act_quant(-2.0, -1.0);
  EXPECT_EQ(q.zero_point, 127);
  Range empty;
  EXPECT_THROW(act_quant(empty, "x"), ConvertError);
}

// A folded bias must leave in * 128 * 128 of room in the int32 accumulator
// (Model::Load refuses less, F6 in docs/security.md): the tensor is named.
TEST(ConverterQuantize, BiasWithoutAccumulatorHeadroomIsRejected) {
  FloatLinear l;
  l.in = 4;
  l.out = 1;
  l.w = {1.0, 1.0, 1.0, 1.0};
  const ActQuantParams in{1.0, 0}, out{1.0, 0};
  // s_acc = 1 / 127: a bias of b folds to round(127 b).
  const double bound = (2147483647.0 - 4.0 * 128 * 128) / 127.0;
  l.b = {bound - 1.0};
  EXPECT_NO_THROW(quantize_linear(l, in, out, "ok_proj"));
  l.b = {bound + 1.0};
  try {
    quantize_linear(l, in, out, "big_proj");
    FAIL() << "no error for a bias without accumulator headroom";
  } catch (const ConvertError& e) {
    EXPECT_NE(std::string(e.what()).find("big_proj"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("accumulator"), std::string::npos) << e.what();
  }
}

TEST(ConverterQuantize, LinearPerChannelWithFoldedBias) {
  FloatLinear l;
  l.in = 3;
  l.out = 3;
  l.w = {0.4, -1.0, 0.25, 0, 0, 0, 2.0, 2.0, -2.0};
  l.b = {0.1, -0.2, 0.0};
  const ActQuantParams in{0.02, 5}, out{0.05, -3};
  const QuantLinear q = quantize_linear(l, in, out, "t");
  EXPECT_EQ(q.row_stride, 16);
  ASSERT_EQ(q.w.size(), 48u);
  EXPECT_FLOAT_EQ(q.w_scale[0], 1.0f / 127.0f);
  EXPECT_FLOAT_EQ(q.w_scale[1], 1.0f);  // all-zero row
  EXPECT_EQ(q.w[0], 51);                 // round(0.4 * 127)
  EXPECT_EQ(q.w[1], -127);
  EXPECT_EQ(q.w[2], 32);
  for (int k = 3; k < 16; ++k) EXPECT_EQ(q.w[static_cast<size_t>(k)], 0);
  EXPECT_EQ(q.w[32], 127);
  EXPECT_EQ(q.w[34], -127);
  // bias[n] = round(b / (s_in s_w)) - zp_in * sum_k Wq[n][k]
  const double s0 = 0.02 * static_cast<double>(q.w_scale[0]);
  EXPECT_EQ(q.bias[0], static_cast<int32_t>(std::round(0.1 / s0)) - 5 * (51 - 127 + 32));
  EXPECT_EQ(q.bias[1], static_cast<int32_t>(std::round(-0.2 / 0.02)));
  EXPECT_NEAR(edgeattn::kernels::dequantize_multiplier(q.requant[0].multiplier, q.requant[0].shift),
              s0 / 0.05, 1e-9 * s0 / 0.05);
  FloatLinear huge = l;
  huge.b = {1e9, 0, 0};
  EXPECT_THROW(quantize_linear(huge, in, out, "t"), ConvertError);
}

TEST(ConverterQuantize, TanhTable) {
  Range r;
  r.add(-9.0);
  r.add(2.0);
  const TanhTable t = tanh_table(r, "t");
  EXPECT_FLOAT_EQ(static_cast<float>(t.index.scale), 8.0f / 255.0f);  // clipped to [-6, 2]
  ASSERT_EQ(t.table.size(), 256u);
  EXPECT_EQ(t.table[static_cast<size_t>(t.index.zero_point + 128)], 0);
  for (size_t i = 1; i < 256; ++i) EXPECT_GE(t.table[i], t.table[i - 1]);
  EXPECT_EQ(t.table[0], -127);
}

// An FFN's hidden range cut where the activation is flat: every fc1 output
// between the calibrated low end and the cut gives the activation's exact
// int8 code (that of 0), through the cut grid and its table; the step above
// it is finer; a range already above the cut is left as it was.
TEST(ConverterQuantize, ActivationInputCutLosesNothing) {
  for (Activation a : {Activation::kRelu, Activation::kGeluErf, Activation::kGeluTanh, Activation::kSilu}) {
    SCOPED_TRACE(activation_name(a));
    const ActQuantParams in = act_quant(-8.3, 9.5);
    const ActQuantParams out = act_quant(a == Activation::kRelu ? 0.0 : -0.28, 9.5);
    const ActQuantParams cut = activation_input_quant(a, in, out);
    EXPECT_LT(cut.scale, (a == Activation::kSilu ? 0.95 : 0.75) * in.scale);  // SiLU flattens later (about -6.6)
    const std::vector<int8_t> table = activation_table(a, cut, out);
    const double cut_lo = cut.scale * (-128 - cut.zero_point);
    for (double x = -8.3; x <= cut_lo; x += 0.001) {
      // The cut grid saturates x to its lowest code, index 0 of the table.
      const double code = std::clamp(std::round(x / cut.scale) + cut.zero_point, -128.0, 127.0);
      ASSERT_EQ(code, -128.0) << x;
      const double exact = std::clamp(std::round(activate(a, x) / out.scale) + out.zero_point, -128.0, 127.0);
      ASSERT_EQ(table[0], exact) << x;
    }
    // Inputs above the cut: the table is the activation of the finer grid.
    const ActQuantParams high = act_quant(cut_lo + 0.5, 9.5);
    EXPECT_EQ(activation_input_quant(a, high, out).scale, high.scale);
    EXPECT_EQ(activation_input_quant(a, high, out).zero_point, high.zero_point);
  }
}

TEST(ConverterQuantize, RequantRejectsUnrepresentable) {
  EXPECT_THROW(requant(0.0, "x"), ConvertError);
  EXPECT_THROW(requant(INFINITY, "x"), ConvertError);
  EXPECT_THROW(requant(1e-12, "x"), ConvertError);
  const Requant r = requant(0.75, "x");
  EXPECT_EQ(r.shift, 0);
  EXPECT_EQ(r.multiplier, 1610612736);
}

// Every tensor 16-byte aligned, data 64-byte aligned, rows padded, CRC and
// arena as the runtime computes them.
TEST(ConverterFile, LayoutAlignmentCrcAndArena) {
  const fixtures::LayerCase c = fixtures::mha_case("key_padding", true, "torch_mha", 3);
  const std::string dir = fixtures::temp_dir("layout");
  save_safetensors(dir + "/w.safetensors", c.weights);
  fixtures::write_text(dir + "/spec.json", c.spec_json);
  save_npz(dir + "/calib.npz", c.calib);
  for (const char* dtype : {"int8", "f32"}) {
    ConvertOptions o;
    o.weights = dir + "/w.safetensors";
    o.spec = dir + "/spec.json";
    o.calib = dir + "/calib.npz";
    o.dtype = dtype;
    o.output = dir + "/m.eatn";
    o.report_json = dir + "/r.json";
    std::ostringstream report;
    run_convert(o, report);
    EXPECT_NE(report.str().find("relL2"), std::string::npos) << report.str();
    const std::vector<uint8_t> bytes = read_file(o.output);
    const LoadedModel lm(bytes, o.output);
    const fb::Model* m = lm.model().flatbuffer();
    EXPECT_EQ(m->format_version(), 6u);
    EXPECT_EQ(m->producer()->name()->str(), "edgeattn-convert");
    EXPECT_EQ(m->producer()->version()->str(), "0.1.0");
    // int8 models also record their calibration (shown by inspect).
    EXPECT_EQ(m->producer()->source()->str(),
              std::string(dtype) == "int8" ? "w.safetensors; int8 calibration: minmax, headroom auto on 64 samples of calib.npz"
                                           : "w.safetensors");
    EXPECT_EQ(reinterpret_cast<uintptr_t>(m->data()->data()) % 64, 0u);
    // Format 3: the file ends in the CRC-32 of every byte before it (zlib's).
    ASSERT_GT(bytes.size(), 4u);
    uint32_t tail = 0;
    for (int i = 0; i < 4; ++i) tail |= static_cast<uint32_t>(bytes[bytes.size() - 4 + i]) << (8 * i);
    EXPECT_EQ(tail, static_cast<uint32_t>(crc32(0, bytes.data(), static_cast<uInt>(bytes.size() - 4))));
    const auto* l = m->layers()->Get(0);
    const auto* a = l->options_as_MultiHeadAttention();
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->kdim(), 14u);
    EXPECT_EQ(a->head_dim(), 5u);
    EXPECT_FLOAT_EQ(a->scale(), 1.0f / std::sqrt(5.0f));
    for (const fb::Linear* lin : {a->q_proj(), a->k_proj(), a->v_proj(), a->out_proj()}) {
      EXPECT_EQ(lin->weight()->offset() % 16, 0u);
      if (std::string(dtype) == "int8") {  // packed K4N16: 16-channel blocks of round_up(in, 4)
        EXPECT_EQ(lin->weight()->layout(), fb::WeightLayout::PackedK4N16);
        EXPECT_EQ(lin->weight()->row_stride(), (lin->in_features() + 3) / 4 * 4);
        EXPECT_EQ(lin->weight()->size(), uint64_t{(lin->out_features() + 15) / 16 * 16} *
                                             lin->weight()->row_stride());
      } else {
        EXPECT_EQ(lin->weight()->layout(), fb::WeightLayout::RowMajor);
        EXPECT_EQ(lin->weight()->row_stride() % 16, 0u);
        EXPECT_EQ(lin->weight()->size(), uint64_t{lin->out_features()} * lin->weight()->row_stride() * 4);
      }
      ASSERT_NE(lin->bias(), nullptr);
      EXPECT_EQ(lin->bias()->offset() % 16, 0u);
    }
    const edgeattn::LayerPlan p = lm.model().PlanLayer(0, 6, 7);
    EXPECT_EQ(l->arena_bytes(), p.cache_bytes + p.scratch_bytes);
    EXPECT_EQ(m->arena_bytes(), p.cache_bytes + p.scratch_bytes);
    EXPECT_GT(read_file(o.report_json).size(), 100u);
  }
}

}  // namespace
