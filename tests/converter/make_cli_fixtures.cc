// Writes the inputs of the CLI end-to-end tests into the directory argv[1]:
// a good MHA model (weights, spec, calibration, reference) and one broken
// variant per error the converter must report.
#include <cmath>
#include <cstdio>
#include <string>
#include <sstream>
#include <sys/stat.h>
#include <zip.h>

#include "converter/cli/commands.h"
#include "converter/io/file.h"
#include "converter/io/formats.h"
#include "converter/io/npy.h"
#include "converter/io/safetensors.h"
#include "edgeattn/edgeattn_generated.h"
#include "fixtures.h"

using namespace edgeattn::convert;
using fixtures::Entries;

namespace {

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const size_t p = s.find(from);
  if (p == std::string::npos) throw std::runtime_error("fixture: '" + from + "' not in text");
  return s.replace(p, from.size(), to);
}

Entries without(Entries e, const std::string& name) {
  for (auto it = e.begin(); it != e.end(); ++it) {
    if (it->first == name) {
      e.erase(it);
      return e;
    }
  }
  throw std::runtime_error("fixture: no " + name);
}

Array& find(Entries& e, const std::string& name) {
  for (auto& [k, v] : e) {
    if (k == name) return v;
  }
  throw std::runtime_error("fixture: no " + name);
}

void write_bytes(const std::string& path, const std::vector<uint8_t>& b) {
  write_file_atomic(path, b.data(), b.size());
}

// A zip archive of stored (uncompressed) members, as torch.save writes them.
void write_zip(const std::string& path, const std::vector<std::pair<std::string, std::vector<uint8_t>>>& members) {
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  if (z == nullptr) throw std::runtime_error("fixture: cannot create " + path);
  for (const auto& [name, bytes] : members) {
    zip_source_t* src = zip_source_buffer(z, bytes.data(), bytes.size(), 0);
    const zip_int64_t i = src == nullptr ? -1 : zip_file_add(z, name.c_str(), src, ZIP_FL_OVERWRITE);
    if (i < 0 || zip_set_file_compression(z, static_cast<zip_uint64_t>(i), ZIP_CM_STORE, 0) != 0) {
      throw std::runtime_error("fixture: cannot add " + name + " to " + path);
    }
  }
  if (zip_close(z) != 0) throw std::runtime_error("fixture: cannot write " + path);
}

void write_prefix(const std::string& from, const std::string& to, double fraction) {
  std::vector<uint8_t> b = read_file(from);
  b.resize(static_cast<size_t>(static_cast<double>(b.size()) * fraction));
  write_file_atomic(to, b.data(), b.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const std::string d = argv[1];
  ::mkdir(d.c_str(), 0755);
  try {
    const fixtures::LayerCase c = fixtures::mha_case("key_padding", false, "torch_mha", 7);
    save_safetensors(d + "/mha.safetensors", c.weights);
    {
      Entries npz = c.weights;  // the same state dict as .npz (float64 and float16 members)
      find(npz, "blk.attn.in_proj_weight").dtype = "<f8";
      find(npz, "blk.attn.in_proj_bias").dtype = "<f2";
      find(npz, "blk.attn.out_proj.weight").dtype = "<f4";
      find(npz, "blk.attn.out_proj.bias").dtype = "<f4";
      save_npz(d + "/mha_weights.npz", npz);
    }
    fixtures::write_text(d + "/mha_spec.json", c.spec_json);
    save_npz(d + "/mha_calib.npz", c.calib);
    // Reference set: test inputs + float64 outputs and attention weights.
    std::vector<double> out, w;
    c.reference(c.test, &out, &w);
    Entries ref;
    for (const auto& [k, v] : c.test) ref.emplace_back(k, v);
    const size_t n = c.test.at("attn.query").shape[0], lq = c.test.at("attn.query").shape[1];
    ref.emplace_back("attn.output", fixtures::make("<f4", {n, lq, 20}, out));
    ref.emplace_back("attn.attn_weights", fixtures::make("<f4", {n, 4, lq, lq}, w));
    save_npz(d + "/mha_reference.npz", ref);
    {
      // PyTorch's default: attention weights averaged over the heads, [N, Lq, Lk].
      Entries avg = ref;
      Array& a = find(avg, "attn.attn_weights");
      std::vector<double> mean(n * lq * lq, 0.0);
      for (size_t s = 0; s < n; ++s)
        for (size_t h = 0; h < 4; ++h)
          for (size_t i = 0; i < lq * lq; ++i) mean[s * lq * lq + i] += a.data[(s * 4 + h) * lq * lq + i] / 4;
      a = fixtures::make("<f4", {n, lq, lq}, mean);
      save_npz(d + "/mha_reference_averaged.npz", avg);
    }
    {
      // Outputs only: many PyTorch models do not return attention weights.
      Entries outputs_only;
      for (const auto& e : ref) {
        if (e.first != "attn.attn_weights") outputs_only.push_back(e);
      }
      save_npz(d + "/mha_reference_outputs_only.npz", outputs_only);
    }

    save_safetensors(d + "/mha_no_out_bias.safetensors", without(c.weights, "blk.attn.out_proj.bias"));
    fixtures::write_text(d + "/spec_bad_prefix.json", replace(c.spec_json, "\"blk.attn.\"", "\"blk.atn.\""));
    {
      Entries e = c.weights;
      Array& a = find(e, "blk.attn.in_proj_weight");
      a.shape = {60, 21};
      a.data.resize(60 * 21, 0.1);
      save_safetensors(d + "/mha_bad_shape.safetensors", e);
    }
    fixtures::write_text(d + "/spec_heads.json", replace(c.spec_json, "\"num_heads\": 4", "\"num_heads\": 3"));
    {
      Entries e = c.weights;
      Array& a = find(e, "blk.attn.in_proj_weight");
      a.dtype = "I64";
      for (double& x : a.data) x = std::round(x * 100);
      save_safetensors(d + "/mha_i64.safetensors", e);
    }
    {
      Entries e = c.weights;
      find(e, "blk.attn.out_proj.weight").data[47] = NAN;
      save_safetensors(d + "/mha_nan.safetensors", e);
    }
    {
      Entries e = c.weights;
      find(e, "blk.attn.in_proj_bias").data[5] = -INFINITY;
      save_safetensors(d + "/mha_inf.safetensors", e);
    }
    save_npz(d + "/calib_empty.npz", {{"attn.query", fixtures::make("<f4", {0, 8, 20}, {})}});
    save_npz(d + "/calib_nan.npz", {{"attn.query", fixtures::make("<f4", {2, 8, 20}, std::vector<double>(320, NAN))}});
    save_npz(d + "/calib_missing.npz", {{"attn.kv_valid_len", fixtures::make("<i4", {2}, {3, 4})}});
    write_prefix(d + "/mha.safetensors", d + "/mha_truncated.safetensors", 0.5);
    // Formats are recognised by their bytes, not the name: an upper-case .NPZ,
    // an .npz named .safetensors and the reverse all load.
    write_bytes(d + "/weights.NPZ", read_file(d + "/mha_weights.npz"));
    write_bytes(d + "/npz_inside.safetensors", read_file(d + "/mha_weights.npz"));
    write_bytes(d + "/safetensors_inside.npz", read_file(d + "/mha.safetensors"));
    {
      // PyTorch checkpoints: the zip format of torch.save (archive/data.pkl +
      // storages; the pickle here is an empty state dict "{}", so it is read
      // and the layer's tensors are then missing), the same cut short (no
      // central directory), and, refused with the re-save / export recipe, a
      // legacy torch.save pickle (protocol 2 + torch's magic number) and a
      // plain protocol-4 pickle.
      const std::vector<uint8_t> pkl = {0x80, 0x02, '}', 'q', 0x00, '.'};
      write_zip(d + "/model.pt", {{"archive/data.pkl", pkl},
                                  {"archive/byteorder", {'l', 'i', 't', 't', 'l', 'e'}},
                                  {"archive/data/0", std::vector<uint8_t>(256, 0x3f)},
                                  {"archive/version", {'3', '\n'}}});
      write_prefix(d + "/model.pt", d + "/model_truncated.pt", 0.5);
      write_bytes(d + "/legacy.pth", {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8,
                                      0x50, 0x19, '.'});
      write_bytes(d + "/state.pkl", {0x80, 0x04, 0x95, 0x03, 0, 0, 0, 0, 0, 0, 0, '}', 0x94, '.'});
      fixtures::write_text(d + "/notes.txt", "these are not weights\n");
      write_zip(d + "/other.zip", {{"readme.txt", {'h', 'i', '\n'}}});
      Entries e = c.weights;
      Array bias = find(e, "blk.attn.in_proj_bias");
      bias.dtype = "<f4";
      write_bytes(d + "/one_array.npy", make_npy(bias));
      write_bytes(d + "/empty.bin", {});
    }
    {
      // The PyTorch seq2seq tutorial's decoder: its BahdanauAttention (Wa, Ua,
      // Va with biases) beside an embedding, a GRU and an output head; the
      // spec mapping every bias, the same without b_q, and a reference set
      // computed as the tutorial's forward (fixtures.cc).
      const fixtures::LayerCase t = fixtures::additive_tutorial_case(21);
      save_safetensors(d + "/tutorial.safetensors", t.weights);
      fixtures::write_text(d + "/tutorial_spec.json", t.spec_json);
      fixtures::write_text(d + "/tutorial_spec_no_bq.json", fixtures::spec_without(t.spec_json, "b_q"));
      std::vector<double> tout, tw;
      t.reference(t.test, &tout, &tw);
      Entries tref;
      for (const auto& [k, v] : t.test) tref.emplace_back(k, v);
      const Array& tq = t.test.at("attn.query");
      const size_t tn = tq.shape[0], tlq = tq.shape[1], tlk = t.test.at("attn.key").shape[1];
      tref.emplace_back("attn.output", fixtures::make("<f8", {tn, tlq, 8}, tout));
      tref.emplace_back("attn.attn_weights", fixtures::make("<f8", {tn, 1, tlq, tlk}, tw));
      save_npz(d + "/tutorial_reference.npz", tref);
    }
    write_prefix(d + "/mha_calib.npz", d + "/calib_truncated.npz", 0.6);
    fixtures::write_text(d + "/spec_malformed.json", "{\"layers\": [ {\"name\": \"attn\", ");
    // Misspelled fields (a "masking": "causal" used to convert silently into a non-causal model).
    fixtures::write_text(d + "/spec_masking.json",
                         replace(c.spec_json, "\"mask\": \"key_padding\"", "\"masking\": \"causal\""));
    fixtures::write_text(d + "/spec_num_head.json", replace(c.spec_json, "\"num_heads\"", "\"num_head\""));
    fixtures::write_text(d + "/bad_preset.json", "{\"preset\": \"vit\", \"num_head\": 4}\n");
    fixtures::write_text(d + "/preset_no_heads.json", "{\"preset\": \"vit\"}\n");
    // A repeated key (JSON keeps the last one, so the first "mask" was silently dropped).
    fixtures::write_text(d + "/spec_repeated_key.json",
                         replace(c.spec_json, "\"mask\": \"key_padding\"",
                                 "\"mask\": \"causal\", \"mask\": \"key_padding\""));
    fixtures::write_text(d + "/spec_malformed_lines.json",
                         replace(c.spec_json, "\"kind\": \"mha\",", "\n\n  \"kind\": \"mha\" \"cross\": 1,"));
    fixtures::write_text(d + "/spec_kind.json", replace(c.spec_json, "\"kind\": \"mha\"", "\"kind\": \"transformer\""));
    fixtures::write_text(d + "/spec_preset.json", replace(c.spec_json, "\"torch_mha\"", "\"keras\""));
    {
      // nn.TransformerEncoder: three post-norm layers under layers.{i}.
      // (each the fixture's encoder layer with its own weights), one
      // "repeat" entry in the spec, calibration with the first block's inputs only.
      Entries stack;
      Entries calib;
      for (int i = 0; i < 3; ++i) {
        const fixtures::LayerCase b = fixtures::encoder_block_case(60 + static_cast<unsigned>(i), false);
        for (const auto& [name, a] : b.weights) stack.emplace_back("layers." + std::to_string(i) + "." + name.substr(4), a);
        if (i == 0) calib = {{"block0.query", b.calib[0].second}, {"block0.kv_valid_len", b.calib[1].second}};
      }
      save_safetensors(d + "/stack.safetensors", stack);
      save_npz(d + "/stack_calib.npz", calib);
      // The same samples under a user's own names (--data-key), in a folder
      // of their own so the file's base name, which the model records, is equal.
      ::mkdir((d + "/user_keys").c_str(), 0755);
      save_npz(d + "/user_keys/stack_calib.npz", {{"x", calib[0].second}, {"x_len", calib[1].second}});
      const std::string spec =
          R"({"model": "stack", "layers": [{"repeat": 3, "name": "block{i}", "kind": "encoder_block", "preset": "torch",
              "prefix": "layers.{i}.", "embed_dim": 16, "num_heads": 2, "mask": "key_padding", "max_q_len": 9}]})";
      fixtures::write_text(d + "/stack_spec.json", spec);
      fixtures::write_text(d + "/stack_spec_short.json", replace(spec, "\"repeat\": 3", "\"repeat\": 2"));
      fixtures::write_text(d + "/stack_spec_no_index.json", replace(spec, "\"block{i}\"", "\"block\""));
    }
    {
      // The bundled transformer under PyTorch's translation-tutorial names
      // and its one-line torch_transformer spec.
      const ArrayMap t = fixtures::tutorial_transformer(
          edgeattn::convert::load_weights(std::string(EA_MODELS_DIR) + "/transformer/weights.safetensors"));
      save_safetensors(d + "/seq2seq.safetensors", {t.begin(), t.end()});
      fixtures::write_text(d + "/seq2seq.json",
                           R"({"model": "tutorial", "preset": "torch_transformer", "num_heads": 4, "max_src_len": 12,)"
                           R"( "max_tgt_len": 13, "norm_first": true, "activation": "gelu", "tgt_positions": "tgt_pos"})");
    }
    {
      // A 2-block KWT under Torch-KWT's names (post-norm, one head, no
      // to_out: KWT-1's form) and its one-line torch_kwt spec.
      fixtures::Rng rng(94);
      save_safetensors(d + "/kwt.safetensors", fixtures::torch_kwt_weights(rng, false, 8, 16, 32, 2, 5, 11));
      save_npz(d + "/kwt_calib.npz", {{"embed.query", fixtures::random_normal(rng, {64, 10, 8}, 1.0)}});
      fixtures::write_text(d + "/kwt.json", R"({"model": "kwt", "preset": "torch_kwt", "num_heads": 1, "pre_norm": false})");
    }
    {
      std::vector<uint8_t> junk(200);
      for (size_t i = 0; i < junk.size(); ++i) junk[i] = static_cast<uint8_t>(i * 37 + 11);
      write_file_atomic(d + "/corrupt.eatn", junk.data(), junk.size());
    }
    {
      ConvertOptions o;
      o.weights = d + "/mha.safetensors";
      o.spec = d + "/mha_spec.json";
      o.dtype = "f32";
      o.output = d + "/bad_crc.eatn";
      std::ostringstream sink;
      run_convert(o, sink);
      std::vector<uint8_t> b = read_file(o.output);
      const auto* m = edgeattn::fb::GetModel(b.data());
      const size_t off = static_cast<size_t>(m->data()->data() - b.data());
      b[off + 3] ^= 0x40;
      write_file_atomic(o.output, b.data(), b.size());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_cli_fixtures: %s\n", e.what());
    return 1;
  }
  return 0;
}
