// edgeattn-kwt-model: a keyword-spotting transformer shaped like KWT-1
// (Berg et al. 2021: 98 frames x 40 features -> linear -> class token and
// learned positions -> N pre-norm encoder blocks, d 64, 1 head, MLP 256, GELU
// -> LayerNorm -> class row -> linear head, 12 classes), with timm's tensor
// names, for the Cortex-M whole-model firmware (targets/cortex-m/example).
//
//   edgeattn-kwt-model OUT_DIR BLOCKS [--torch-kwt]
//
// writes OUT_DIR/weights.safetensors, spec.json (one "repeat" entry for the
// blocks), calib.npz (16 inputs, key embed.query) and inputs.npz (2 other
// inputs, the firmware's golden cases). --torch-kwt writes the same numbers
// as ID56/Torch-KWT's KWT-1 instead: its tensor names (models/kwt.py), its
// post-norm blocks (the norm on the sub-layer's output, `branch_norm`), no
// bias on to_qkv and no to_out (one head of dim_head == dim), and a spec of
// one line, the `torch_kwt` preset. The weights are pseudo-random from a
// fixed seed, so every build makes the same files: a model to check bytes and
// count instructions with, not a trained one (the firmware needs no accuracy,
// and 12 trained blocks would be ~2.4 MB of float32 to commit).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "converter/base/error.h"
#include "converter/io/file.h"
#include "converter/io/npy.h"
#include "converter/io/safetensors.h"
#include "golden_files.h"

namespace {

using namespace edgeattn::convert;

constexpr int kFrames = 98, kFeatures = 40, kDim = 64, kMlp = 256, kClasses = 12;
constexpr int kCalibSamples = 16, kInputSamples = 2;

// splitmix64 and Box-Muller: the same numbers on every host and compiler.
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  double uniform() {  // in (0, 1)
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (static_cast<double>(z >> 11) + 0.5) / 9007199254740992.0;
  }
  double normal() {
    const double r = std::sqrt(-2.0 * std::log(uniform()));
    return r * std::cos(6.283185307179586 * uniform());
  }

 private:
  uint64_t s_;
};

Array tensor(Rng& rng, std::vector<size_t> shape, double mean, double stddev) {
  Array a;
  a.dtype = "F32";
  a.shape = std::move(shape);
  a.data.resize(a.numel());
  for (double& v : a.data) v = static_cast<double>(static_cast<float>(mean + stddev * rng.normal()));
  return a;
}

using Entries = std::vector<std::pair<std::string, Array>>;

// A projection [out, in] initialised as in training code (std 1/sqrt(in)),
// scaled by `gain` where it writes into the residual stream, so that the
// stream grows slowly over the blocks, as in a trained model.
void linear(Rng& rng, Entries& w, const std::string& name, int out, int in, double gain) {
  w.emplace_back(name + ".weight", tensor(rng, {size_t(out), size_t(in)}, 0.0, gain / std::sqrt(double(in))));
  w.emplace_back(name + ".bias", tensor(rng, {size_t(out)}, 0.0, 0.05));
}

void norm(Rng& rng, Entries& w, const std::string& name) {
  w.emplace_back(name + ".weight", tensor(rng, {size_t(kDim)}, 1.0, 0.1));
  w.emplace_back(name + ".bias", tensor(rng, {size_t(kDim)}, 0.0, 0.05));
}

std::string spec(int blocks) {
  const std::string last = "block" + std::to_string(blocks - 1);
  return R"({"model": "kwt", "layers": [
  {"name": "embed", "kind": "linear", "prefix": "patch_embed.proj.", "max_q_len": 98},
  {"name": "tok", "kind": "positions", "max_q_len": 98, "input": "embed"},
  {"repeat": )" + std::to_string(blocks) + R"(, "name": "block{i}", "kind": "encoder_block", "preset": "vit", "prefix": "blocks.{i}.",
   "embed_dim": 64, "num_heads": 1, "max_q_len": 99, "input": "tok"},
  {"name": "norm", "kind": "layernorm", "prefix": "norm.", "dim": 64, "eps": 1e-6, "max_q_len": 99, "input": ")" +
         last + R"("},
  {"name": "pool", "kind": "row_pool", "mode": "first", "dim": 64, "max_kv_len": 99, "input": "norm"},
  {"name": "head", "kind": "linear", "prefix": "head.", "max_q_len": 1, "input": "pool"}]}
)";
}

// timm's names -> Torch-KWT's (scripts/torch_kwt_from_peers.py maps the
// same); an empty name: a tensor Torch-KWT's KWT-1 does not have.
std::string torch_kwt_name(const std::string& timm) {
  static const std::pair<const char*, const char*> kTop[] = {
      {"patch_embed.proj.", "to_patch_embedding.1."}, {"cls_token", "cls_token"}, {"pos_embed", "pos_embedding"},
      {"norm.", "mlp_head.0."}, {"head.", "mlp_head.1."}};
  for (const auto& t : kTop) {
    if (timm.rfind(t.first, 0) == 0) return t.second + timm.substr(std::string(t.first).size());
  }
  const size_t dot = timm.find('.', 7);  // blocks.<i>.
  const std::string block = "transformer.layers." + timm.substr(7, dot - 7) + ".", rest = timm.substr(dot + 1);
  static const std::pair<const char*, const char*> kBlock[] = {
      {"norm1.", "0.norm."}, {"attn.qkv.weight", "0.fn.to_qkv.weight"}, {"norm2.", "1.norm."},
      {"mlp.fc1.", "1.fn.net.0."}, {"mlp.fc2.", "1.fn.net.3."}};
  for (const auto& t : kBlock) {
    if (rest.rfind(t.first, 0) == 0) return block + t.second + rest.substr(std::string(t.first).size());
  }
  return "";  // attn.qkv.bias, attn.proj.*
}

int run(int argc, char** argv) {
  const bool torch_kwt = argc == 4 && std::string(argv[3]) == "--torch-kwt";
  if (argc != 3 && !torch_kwt) {
    std::fprintf(stderr, "usage: edgeattn-kwt-model OUT_DIR BLOCKS [--torch-kwt]\n");
    return 2;
  }
  const std::string dir = argv[1];
  const int blocks = std::atoi(argv[2]);
  if (blocks < 1 || blocks > 64) fail("BLOCKS must be 1..64, got '", argv[2], "'");

  Rng rng(0x6b7774);  // "kwt"
  Entries w;
  linear(rng, w, "patch_embed.proj", kDim, kFeatures, 1.0);
  w.emplace_back("cls_token", tensor(rng, {1, 1, size_t(kDim)}, 0.0, 0.5));
  w.emplace_back("pos_embed", tensor(rng, {1, size_t(kFrames + 1), size_t(kDim)}, 0.0, 0.5));
  for (int i = 0; i < blocks; ++i) {
    const std::string b = "blocks." + std::to_string(i) + ".";
    norm(rng, w, b + "norm1");
    linear(rng, w, b + "attn.qkv", 3 * kDim, kDim, 1.0);
    linear(rng, w, b + "attn.proj", kDim, kDim, 0.5);
    norm(rng, w, b + "norm2");
    linear(rng, w, b + "mlp.fc1", kMlp, kDim, 1.0);
    linear(rng, w, b + "mlp.fc2", kDim, kMlp, 0.5);
  }
  norm(rng, w, "norm");
  linear(rng, w, "head", kClasses, kDim, 1.0);

  // Inputs: log-mel-like features, each frame a smooth curve over the
  // features plus noise (calibration and golden inputs from separate draws).
  auto features = [&](int samples) {
    Array a = tensor(rng, {size_t(samples), size_t(kFrames), size_t(kFeatures)}, 0.0, 0.3);
    for (int s = 0; s < samples; ++s) {
      for (int t = 0; t < kFrames; ++t) {
        const double level = rng.normal(), slope = 0.5 * rng.normal();
        for (int f = 0; f < kFeatures; ++f) {
          a.data[(size_t(s) * kFrames + t) * kFeatures + f] += level + slope * std::cos(0.15 * f);
        }
      }
    }
    return a;
  };
  Array calib = features(kCalibSamples), inputs = features(kInputSamples);
  calib.dtype = inputs.dtype = "<f4";  // .npy's name of float32

  if (torch_kwt) {
    Entries renamed;
    for (auto& e : w) {
      const std::string name = torch_kwt_name(e.first);
      if (!name.empty()) renamed.emplace_back(name, std::move(e.second));
    }
    w = std::move(renamed);
  }
  save_safetensors(dir + "/weights.safetensors", w);
  const std::string s = torch_kwt ? R"({"model": "torch_kwt", "preset": "torch_kwt", "num_heads": 1, "pre_norm": false,
 "depth": )" + std::to_string(blocks) + "}\n"
                                  : spec(blocks);
  write_file_atomic(dir + "/spec.json", s.data(), s.size());
  save_npz(dir + "/calib.npz", {{"embed.query", calib}});
  save_npz(dir + "/inputs.npz", {{"embed.query", inputs}});
  std::printf("edgeattn-kwt-model: %d %sblocks -> %s/{weights.safetensors,spec.json,calib.npz,inputs.npz}\n", blocks,
              torch_kwt ? "Torch-KWT " : "", dir.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return golden::main("edgeattn-kwt-model", run, argc, argv); }
