// The converter's kind modules (converter/kinds/): the table, the per-kind
// payload of FloatLayer, and reusing the MHA module's pieces for a sub-layer
// the way a composite kind does.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>

#include "converter/calibrate/calibrate.h"
#include "converter/model/dataset.h"
#include "converter/base/error.h"
#include "converter/kinds/kind.h"
#include "converter/kinds/mha.h"
#include "converter/kinds/pooling.h"
#include "converter/spec/spec.h"
#include "fixtures.h"

namespace {

using fixtures::to_map;

using namespace edgeattn::convert;

TEST(ConverterKinds, TableIsComplete) {
  std::set<std::string> names;
  for (const KindModule* k : all_kinds()) {
    SCOPED_TRACE(k->name);
    EXPECT_TRUE(names.insert(k->name).second) << "duplicate kind name";
    EXPECT_EQ(find_kind(std::string(k->name)), k);
    EXPECT_EQ(find_kind(k->runtime_kind), k);
    EXPECT_EQ(find_kind(k->options), k);
    // Everything but the optional inspect lines must be there.
    EXPECT_TRUE(k->resolve && k->shell && k->io && k->forward && k->value_points && k->minmax_points &&
                k->write_s8 && k->write_f32 && k->tensors && k->inspect_quant);
  }
  // Every kind the runtime's public enum names has a converter module, under
  // the runtime's name for it.
  // (Values the list skips are no kind: "?".)
  for (int k = 0; k < EA_LAYER_KIND_COUNT; ++k) {
    if (std::string(ea_layer_kind_name(static_cast<ea_layer_kind>(k))) == "?") continue;
    const KindModule* module = find_kind(static_cast<ea_layer_kind>(k));
    ASSERT_NE(module, nullptr) << k;
    EXPECT_STREQ(module->name, ea_layer_kind_name(static_cast<ea_layer_kind>(k)));
  }
  EXPECT_EQ(find_kind(std::string("transformer")), nullptr);
  // The list's order, "or" before the last; kinds appended later extend it.
  const std::string names_text = kind_names();
  EXPECT_EQ(names_text.rfind("mha, additive, luong, pooling, layernorm, ffn, encoder_block, decoder_block, linear", 0), 0u)
      << names_text;
  EXPECT_EQ(names_text.substr(names_text.rfind(" or ") + 4), all_kinds().back()->name) << names_text;
}

// FloatLayer's parameters are per kind and copied with the layer.
TEST(ConverterKinds, PayloadIsPerKindAndCopied) {
  const fixtures::LayerCase c = fixtures::mha_case("none", true, "linear", 7);
  const ModelSpec spec = load_spec("s.json", c.spec_json, to_map(c.weights), "w", {});
  const FloatLayer& L = spec.layers[0];
  FloatLayer copy = L;
  copy.as<MhaParams>().scale = 123.0;
  copy.as<MhaParams>().q_proj.w[0] += 1.0;
  EXPECT_NE(L.as<MhaParams>().scale, 123.0);
  EXPECT_NE(L.as<MhaParams>().q_proj.w[0], copy.as<MhaParams>().q_proj.w[0]);
  EXPECT_THROW(L.as<PoolingParams>(), std::logic_error);
  EXPECT_TRUE(L.io().keys);  // cross-attention reads its own keys
  EXPECT_EQ(L.heads(), L.as<MhaParams>().num_heads);
  FloatLayer bare;
  bare.name = "x";
  EXPECT_THROW(bare.io(), std::logic_error);
}

// A composite runs the MHA module on its sub-layer, records the sub-layer's
// points under a prefix and quantizes from them: the parameters must be those
// of the MHA layer calibrated on its own.
TEST(ConverterKinds, SubLayerPointsUnderAPrefix) {
  const fixtures::LayerCase c = fixtures::mha_case("key_padding", false, "torch_mha", 3);
  const ModelSpec spec = load_spec("s.json", c.spec_json, to_map(c.weights), "w", {});
  const FloatLayer& attn = spec.layers[0];
  const LayerData d = load_layer_data(to_map(c.calib), "calib.npz", attn, false);
  ASSERT_GT(d.n, 1);
  RangeMap direct, composite;
  direct["q_proj"].keep_values = true;
  composite["attn.q_proj"].keep_values = true;
  std::vector<double> out_a, out_b;
  for (int i = 0; i < d.n; ++i) {
    const SampleInput in = d.sample(attn, i);
    out_a.resize(output_size(attn, in));
    kinds::kind_mha.forward(attn, in, out_a.data(), nullptr, &direct);
    RangeMap sub = sub_ranges(composite, "attn.");
    EXPECT_TRUE(sub["q_proj"].keep_values);
    EXPECT_FALSE(sub["k_proj"].keep_values);
    forward(attn, in, &out_b, nullptr, &sub);
    merge_ranges(sub, "attn.", &composite);
    EXPECT_EQ(out_a, out_b);
  }
  EXPECT_FALSE(direct.at("q_proj").values.empty());
  EXPECT_EQ(direct.at("q_proj").values, composite.at("attn.q_proj").values);
  for (const char* key : {"query", "q_proj", "k_proj", "v_proj", "context", "output"}) {
    SCOPED_TRACE(key);
    ASSERT_EQ(composite.count(std::string("attn.") + key), 1u);
    const Range& a = direct.at(key);
    const Range& b = composite.at(std::string("attn.") + key);
    EXPECT_EQ(a.lo, b.lo);
    EXPECT_EQ(a.hi, b.hi);
    EXPECT_EQ(a.count, b.count);
    const Calibrated whole{composite, "c.npz: layer 'block'", ""};
    const ActQuantParams p = whole.sub("attn.")(key), q = act_quant(a, key);
    EXPECT_EQ(p.scale, q.scale);
    EXPECT_EQ(p.zero_point, q.zero_point);
  }
  const Calibrated whole{composite, "c.npz: layer 'block'", ""};
  try {
    whole.sub("attn.")("w_q");
    ADD_FAILURE() << "no error for a point the sub-layer does not record";
  } catch (const ConvertError& e) {
    EXPECT_EQ(std::string(e.what()), "c.npz: layer 'block': no calibration data for attn.w_q");
  }
}

}  // namespace
