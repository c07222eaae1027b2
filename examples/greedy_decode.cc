// edgeattn-greedy-decode: the bundled digit-reversal transformer
// (models/transformer) decoding greedily, token by token. With
// --generate-model the whole model is one file and one runtime call,
// Interpreter::Generate (embeddings, encoder, decoder steps on their KV
// caches, head and argmax in the runtime; the host only pads the source's
// digits and reads the tokens). The older paths, kept for the KV-cache study
// (cached Step against a re-run of the prefix): the attention layers in the
// runtime and everything else in float64, or (with --encoder-model /
// --decoder-model) the blocks in the runtime but the embedding lookup and the
// argmax over the logits.
//
//   edgeattn-greedy-decode --generate-model out/transformer_generate_int8.eatn
//       [--float-generate-model out/transformer_generate_f32.eatn]
//       --data models/transformer/heldout.npz [--source 31415 ...]
//
//   edgeattn-greedy-decode --model out/transformer_int8.eatn
//       --float-model out/transformer_f32.eatn
//       [--encoder-model out/transformer_encoder_int8.eatn --float-encoder-model out/transformer_encoder_f32.eatn]
//       [--decoder-model out/transformer_decoder_int8.eatn --float-decoder-model out/transformer_decoder_f32.eatn]
//       --weights models/transformer/weights.safetensors
//       --data models/transformer/heldout.npz [--source 31415 ...]
//
// Every source is decoded twice per model: dec_self through the KV cache
// (one Step per token) and by re-running dec_self over the whole prefix at
// every step; both must give the same tokens. Prints example decodes, how
// many sources are reversed exactly (int8, f32, PyTorch's float greedy output
// stored in the data file), the agreement between them, and the per-step
// latency of the cached step against the re-run.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "examples/greedy.h"
#include "examples/runtime_generate.h"
#include "converter/base/error.h"
#include "converter/io/formats.h"
#include "edgeattn/edgeattn.hpp"

namespace {

using edgeattn::demo::Decoded;
using edgeattn::demo::kEos;
using edgeattn::convert::fail;

struct Sequence {
  std::vector<int> digits;
  std::vector<int> torch;  // PyTorch's greedy output up to its first EOS; empty if unknown
};

std::vector<int> Reversal(const std::vector<int>& digits) {
  std::vector<int> r(digits.rbegin(), digits.rend());
  r.push_back(kEos);
  return r;
}

std::string Text(const std::vector<int>& tokens) {
  std::string s;
  for (int t : tokens) {
    if (!s.empty()) s += ' ';
    s += t == kEos ? std::string("EOS") : t < 10 ? std::to_string(t) : "<" + std::to_string(t) + ">";
  }
  return s;
}

std::vector<Sequence> LoadData(const std::string& path, int limit) {
  const edgeattn::convert::ArrayMap m = edgeattn::convert::load_data_npz(path, "held-out sources (--data)");
  auto get = [&](const char* k) -> const edgeattn::convert::Array& {
    const auto it = m.find(k);
    if (it == m.end()) fail(path, ": missing '", k, "'");
    return it->second;
  };
  const auto& src = get("src");
  const auto& lens = get("src_len");
  if (src.shape.size() != 2 || lens.numel() != src.shape[0]) fail(path, ": 'src' must be [N, L] with N 'src_len'");
  const auto it = m.find("torch_greedy");
  const edgeattn::convert::Array* torch = it == m.end() ? nullptr : &it->second;
  if (torch != nullptr && (torch->shape.size() != 2 || torch->shape[0] != src.shape[0])) {
    fail(path, ": 'torch_greedy' must be [N, T]");
  }
  const size_t n = std::min<size_t>(src.shape[0], limit > 0 ? static_cast<size_t>(limit) : src.shape[0]);
  std::vector<Sequence> out(n);
  for (size_t i = 0; i < n; ++i) {
    const size_t len = static_cast<size_t>(lens.data[i]);
    if (len < 1 || len > src.shape[1]) fail(path, ": src_len[", i, "] = ", len, " is out of range");
    for (size_t j = 0; j < len; ++j) out[i].digits.push_back(static_cast<int>(src.data[i * src.shape[1] + j]));
    for (size_t j = 0; torch != nullptr && j < torch->shape[1]; ++j) {
      out[i].torch.push_back(static_cast<int>(torch->data[i * torch->shape[1] + j]));
      if (out[i].torch.back() == kEos) break;
    }
  }
  return out;
}

std::vector<int> ParseDigits(const std::string& s) {
  std::vector<int> d;
  for (char c : s) {
    if (c < '0' || c > '9') fail("--source '", s, "': digits 0-9 only");
    d.push_back(c - '0');
  }
  return d;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// One model's decodes of every source, both dec_self modes.
struct Run {
  std::vector<Decoded> cached, rerun;
};

Run DecodeAll(const edgeattn::demo::TransformerFloat& m, edgeattn::demo::RuntimeAttention& rt,
              edgeattn::demo::RuntimeEncoder* encoder, edgeattn::demo::RuntimeDecoder* decoder,
              const std::vector<Sequence>& seqs) {
  Run r;
  for (const Sequence& s : seqs) {
    r.cached.push_back(GreedyDecode(m, rt, s.digits, edgeattn::demo::SelfMode::kCached, encoder, decoder));
    r.rerun.push_back(GreedyDecode(m, rt, s.digits, edgeattn::demo::SelfMode::kRerun, encoder, decoder));
  }
  return r;
}

// Accuracy of one model's cached decodes over sources [first, end).
void PrintAccuracy(const char* label, const edgeattn::demo::RuntimeAttention& rt, const Run& r,
                   const std::vector<Sequence>& seqs, size_t first) {
  int reversed = 0, same_as_rerun = 0, same_as_torch = 0, torch_known = 0;
  for (size_t i = first; i < seqs.size(); ++i) {
    const std::vector<int>& got = r.cached[i].tokens;
    reversed += got == Reversal(seqs[i].digits);
    same_as_rerun += got == r.rerun[i].tokens;
    if (!seqs[i].torch.empty()) {
      ++torch_known;
      same_as_torch += got == seqs[i].torch;
    }
  }
  const size_t n = seqs.size() - first;
  std::printf("%-5s %s: %d of %zu reversed exactly (%.4f); cached steps = full re-run tokens on %d of %zu",
              label, rt.path().c_str(), reversed, n, static_cast<double>(reversed) / n, same_as_rerun, n);
  if (torch_known > 0) std::printf("; = PyTorch greedy on %d of %d", same_as_torch, torch_known);
  std::printf("\n");
}

// How often the largest logit was shared (int8 logits are 256 levels), and
// what the tie-break (the lower token id) cost.
void PrintTies(const char* label, const Run& r, const std::vector<Sequence>& seqs, size_t first) {
  int steps = 0, tied = 0, seq_tied = 0, seq_tied_wrong = 0;
  for (size_t i = first; i < seqs.size(); ++i) {
    const Decoded& c = r.cached[i];
    steps += static_cast<int>(c.tokens.size());
    tied += c.tied_steps;
    if (c.tied_steps == 0) continue;
    ++seq_tied;
    seq_tied_wrong += c.tokens != Reversal(seqs[i].digits);
  }
  std::printf("%-5s head: largest logit tied at %d of %d steps (argmax takes the lower token id, as "
              "torch.argmax), in %d sequences, %d of them not reversed\n",
              label, tied, steps, seq_tied, seq_tied_wrong);
}

// Median latency per prefix length (tokens in dec_self after the step);
// `positions` empty: every length.
void PrintLatency(const char* label, const Run& r, const std::vector<int>& positions) {
  std::map<int, std::vector<double>> self_c, self_r, step_c, step_r;
  std::vector<double> all_c, all_r;
  for (size_t i = 0; i < r.cached.size(); ++i) {
    const Decoded& c = r.cached[i];
    const Decoded& f = r.rerun[i];
    for (size_t s = 0; s < c.self_us.size() && s < f.self_us.size(); ++s) {
      const int pos = static_cast<int>(s) + 1;
      self_c[pos].push_back(c.self_us[s]);
      self_r[pos].push_back(f.self_us[s]);
      step_c[pos].push_back(c.step_us[s]);
      step_r[pos].push_back(f.step_us[s]);
      all_c.push_back(c.step_us[s]);
      all_r.push_back(f.step_us[s]);
    }
  }
  std::printf("%s per-step latency, median us (tokens = prefix length incl. the new token):\n", label);
  std::printf("  %6s %7s %12s %12s %7s %14s %14s\n", "tokens", "steps", "dec_self", "dec_self", "ratio",
              "decoder step", "decoder step");
  std::printf("  %6s %7s %12s %12s %7s %14s %14s\n", "", "", "cached Step", "re-run", "", "cached", "re-run");
  for (const auto& [pos, v] : self_c) {
    if (!positions.empty() && std::find(positions.begin(), positions.end(), pos) == positions.end()) continue;
    const double sc = Median(v), sr = Median(self_r[pos]);
    std::printf("  %6d %7zu %12.2f %12.2f %6.1fx %14.2f %14.2f\n", pos, v.size(), sc, sr, sr / sc,
                Median(step_c[pos]), Median(step_r[pos]));
  }
  std::printf("  all steps: decoder step median %.2f us cached, %.2f us re-run\n", Median(all_c), Median(all_r));
}

// Every source through Interpreter::Generate on each generating model:
// examples, accuracy against the reversal and PyTorch's greedy tokens, the
// models' agreement and the latency of one Generate call.
int RunGenerate(const std::vector<std::string>& paths, const std::vector<Sequence>& seqs, size_t n_cli,
                int show) {
  using edgeattn::demo::kBos;
  using edgeattn::demo::kPad;
  std::vector<std::unique_ptr<edgeattn::demo::RuntimeGenerator>> gens;
  for (const std::string& p : paths) gens.push_back(std::make_unique<edgeattn::demo::RuntimeGenerator>(p));
  std::vector<std::vector<std::vector<int>>> out(gens.size());
  std::vector<std::vector<double>> us(gens.size());
  for (const Sequence& s : seqs) {  // interleaved: the models' latencies see the same machine state
    for (size_t k = 0; k < gens.size(); ++k) {
      out[k].push_back(gens[k]->Generate(s.digits, kPad, kBos, kEos));
      us[k].push_back(gens[k]->last_us());
    }
  }
  std::printf("kernel path: %s; %zu source%s (%zu from the command line)\n", edgeattn::KernelPath(), seqs.size(),
              seqs.size() == 1 ? "" : "s", n_cli);
  for (size_t k = 0; k < gens.size(); ++k) {
    std::printf("%s: the whole model in the runtime, one Generate call per source (%s, arena %zu bytes)\n",
                gens[k]->int8() ? "int8" : "f32", gens[k]->path().c_str(), gens[k]->arena_bytes());
  }
  const char* label0 = gens[0]->int8() ? "int8" : "f32";
  std::printf("examples (%s, Generate):\n", label0);
  const size_t n_show = std::min(seqs.size(), std::max(n_cli, static_cast<size_t>(std::max(show, 0))));
  for (size_t i = 0; i < n_show; ++i) {
    const std::vector<int>& got = out[0][i];
    std::printf("  %-24s -> %-28s %s\n", Text(seqs[i].digits).c_str(), Text(got).c_str(),
                got == Reversal(seqs[i].digits) ? "reversed" : "WRONG");
  }
  const size_t n = seqs.size() - n_cli;
  for (size_t k = 0; k < gens.size() && n > 0; ++k) {
    int reversed = 0, same_as_torch = 0, torch_known = 0;
    for (size_t i = n_cli; i < seqs.size(); ++i) {
      reversed += out[k][i] == Reversal(seqs[i].digits);
      if (seqs[i].torch.empty()) continue;
      ++torch_known;
      same_as_torch += out[k][i] == seqs[i].torch;
    }
    std::printf("%-5s Generate: %d of %zu reversed exactly (%.4f)", gens[k]->int8() ? "int8" : "f32", reversed, n,
                static_cast<double>(reversed) / n);
    if (torch_known > 0) std::printf("; = PyTorch greedy on %d of %d", same_as_torch, torch_known);
    std::printf("\n");
  }
  if (gens.size() == 2 && n > 0) {
    int same = 0;
    for (size_t i = n_cli; i < seqs.size(); ++i) same += out[0][i] == out[1][i];
    std::printf("%s tokens = %s tokens on %d of %zu\n", label0, gens[1]->int8() ? "int8" : "f32", same, n);
  }
  for (size_t k = 0; k < gens.size(); ++k) {
    size_t tokens = 0;
    for (const auto& t : out[k]) tokens += t.size();
    double total = 0.0;
    for (double u : us[k]) total += u;
    std::printf("%-5s Generate latency: median %.2f us per source, %.2f us per token on average\n",
                gens[k]->int8() ? "int8" : "f32", Median(us[k]), tokens > 0 ? total / tokens : 0.0);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"edgeattn-greedy-decode: greedy decoding of models/transformer with the runtime's attention"};
  std::string generate_model, float_generate_model;
  std::string model, float_model, weights, data, encoder_model, float_encoder_model, decoder_model,
      float_decoder_model;
  std::vector<std::string> sources;
  int show = 5, limit = 0;
  std::vector<int> positions;
  app.add_option("--generate-model", generate_model,
                 "the whole transformer as one generating .eatn (models/transformer/generate.spec.json): "
                 "Interpreter::Generate, nothing on the host but the source's token ids");
  app.add_option("--float-generate-model", float_generate_model, "a second one (f32) to compare with it");
  app.add_option("--model", model, "the transformer's attention layers as .eatn (int8 or f32; the older paths)");
  app.add_option("--float-model", float_model, "a second .eatn (f32) to compare with --model");
  app.add_option("--encoder-model", encoder_model,
                 "the encoder as block kinds (.eatn of models/transformer/encoder_block.spec.json, the dtype of "
                 "--model): the whole encoder layer runs in the runtime");
  app.add_option("--float-encoder-model", float_encoder_model, "the same for --float-model");
  app.add_option("--decoder-model", decoder_model,
                 "the decoder as block kinds (.eatn of models/transformer/decoder_block.spec.json, the dtype of "
                 "--model): the whole decoder layer, its final LayerNorm and the output head run in the runtime "
                 "(the embedding and the argmax in host code)");
  app.add_option("--float-decoder-model", float_decoder_model, "the same for --float-model");
  app.add_option("--weights", weights, "models/transformer/weights.safetensors (non-attention weights; with --model)");
  app.add_option("--data", data, "held-out sources: .npz with src [N, L], src_len [N] (+ torch_greedy [N, T])");
  app.add_option("--source", sources,
                 "digits to reverse, e.g. 31415 (repeatable); the bundled model was trained on 4 to 12 "
                 "digits: shorter sources may decode wrongly, longer ones are refused");
  app.add_option("--show", show, "example decodes to print: the --source sequences first (all of them), then --data's")
      ->capture_default_str();
  app.add_option("--positions", positions, "latency rows to print, e.g. 1,4,8,13 (default: all)")
      ->delimiter(',');
  app.add_option("--limit", limit, "decode only the first N sequences of --data (0 = all)");
  CLI11_PARSE(app, argc, argv);
  try {
    std::vector<Sequence> seqs;
    for (const std::string& s : sources) seqs.push_back({ParseDigits(s), {}});
    const size_t n_cli = seqs.size();
    if (!data.empty()) {
      const std::vector<Sequence> held = LoadData(data, limit);
      seqs.insert(seqs.end(), held.begin(), held.end());
    }
    if (seqs.empty()) fail("nothing to decode: give --data and/or --source");
    if (model.empty() && generate_model.empty()) fail("give --generate-model (or --model, the older paths)");
    if (!float_generate_model.empty() && generate_model.empty()) fail("--float-generate-model needs --generate-model");
    if (!generate_model.empty()) {
      std::vector<std::string> paths = {generate_model};
      if (!float_generate_model.empty()) paths.push_back(float_generate_model);
      const int status = RunGenerate(paths, seqs, n_cli, show);
      if (status != 0 || model.empty()) return status;
    }
    if (weights.empty()) fail("--model needs --weights");
    const auto m = edgeattn::demo::TransformerFloat::Load(weights);

    std::vector<std::unique_ptr<edgeattn::demo::RuntimeAttention>> rts;
    rts.push_back(std::make_unique<edgeattn::demo::RuntimeAttention>(model, m.d_model));
    if (!float_model.empty()) {
      rts.push_back(std::make_unique<edgeattn::demo::RuntimeAttention>(float_model, m.d_model));
    }
    std::vector<std::unique_ptr<edgeattn::demo::RuntimeEncoder>> encoders;
    for (const std::string* path : {&encoder_model, &float_encoder_model}) {
      encoders.push_back(path->empty() ? nullptr : std::make_unique<edgeattn::demo::RuntimeEncoder>(*path, m.d_model));
    }
    if (encoders[1] != nullptr && rts.size() < 2) fail("--float-encoder-model needs --float-model");
    std::vector<std::unique_ptr<edgeattn::demo::RuntimeDecoder>> decoders;
    for (const std::string* path : {&decoder_model, &float_decoder_model}) {
      decoders.push_back(path->empty() ? nullptr
                                       : std::make_unique<edgeattn::demo::RuntimeDecoder>(*path, m.d_model, m.vocab));
    }
    if (decoders[1] != nullptr && rts.size() < 2) fail("--float-decoder-model needs --float-model");
    std::vector<Run> runs;
    for (size_t k = 0; k < rts.size(); ++k) {
      runs.push_back(DecodeAll(m, *rts[k], encoders[k].get(), decoders[k].get(), seqs));
    }
    for (size_t k = 0; k < rts.size(); ++k) {
      std::printf("%s encoder: %s\n", rts[k]->int8() ? "int8" : "f32",
                  encoders[k] != nullptr
                      ? ("encoder_block + layernorm in the runtime (" + encoders[k]->path() + ")").c_str()
                      : "enc_self in the runtime, its LayerNorms and FFN in float64");
    }
    for (size_t k = 0; k < rts.size(); ++k) {
      std::printf("%s decoder: %s\n", rts[k]->int8() ? "int8" : "f32",
                  decoders[k] != nullptr
                      ? ("decoder_block + layernorm + linear head in the runtime (" + decoders[k]->path() + ")").c_str()
                      : "dec_self and dec_cross in the runtime, its LayerNorms, FFN and head in float64");
    }
    const char* label0 = rts[0]->int8() ? "int8" : "f32";

    std::printf("kernel path: %s; %zu source%s (%zu from the command line)\n", edgeattn::KernelPath(),
                seqs.size(), seqs.size() == 1 ? "" : "s", n_cli);
    std::printf("examples (%s, KV-cached decoding):\n", label0);
    // --show N prints N examples, at least every --source.
    const size_t n_show = std::min(seqs.size(), std::max(n_cli, static_cast<size_t>(std::max(show, 0))));
    for (size_t i = 0; i < n_show; ++i) {
      const std::vector<int>& got = runs[0].cached[i].tokens;
      std::printf("  %-24s -> %-28s %s\n", Text(seqs[i].digits).c_str(), Text(got).c_str(),
                  got == Reversal(seqs[i].digits) ? "reversed" : "WRONG");
    }
    // Accuracy over the held-out set only (command-line sources are examples).
    const size_t n = seqs.size() - n_cli;
    if (n > 0) {
      for (size_t k = 0; k < rts.size(); ++k) {
        PrintAccuracy(rts[k]->int8() ? "int8" : "f32", *rts[k], runs[k], seqs, n_cli);
      }
      for (size_t k = 0; k < rts.size(); ++k) {
        if (decoders[k] != nullptr) PrintTies(rts[k]->int8() ? "int8" : "f32", runs[k], seqs, n_cli);
      }
      int torch_reversed = 0, torch_known = 0;
      for (size_t i = n_cli; i < seqs.size(); ++i) {
        if (seqs[i].torch.empty()) continue;
        ++torch_known;
        torch_reversed += seqs[i].torch == Reversal(seqs[i].digits);
      }
      if (torch_known > 0) {
        std::printf("PyTorch float greedy (%s): %d of %d reversed exactly (%.4f)\n", data.c_str(), torch_reversed,
                    torch_known, static_cast<double>(torch_reversed) / torch_known);
      }
      if (rts.size() == 2) {
        int same = 0;
        for (size_t i = n_cli; i < seqs.size(); ++i) same += runs[0].cached[i].tokens == runs[1].cached[i].tokens;
        std::printf("%s output = %s output on %d of %zu\n", label0, rts[1]->int8() ? "int8" : "f32", same, n);
      }
    }
    PrintLatency(label0, runs[0], positions);
    if (decoders[0] != nullptr) {
      std::printf("(dec_self column = the decoder_block call alone: Interpreter::Step with the prefix in its KV\n"
                  " cache vs Interpreter::Run over all tokens so far, both on the cached memory keys; decoder\n"
                  " step = embedding, the block, dec_norm and head in the runtime, argmax)\n");
    } else {
      std::printf("(dec_self = the runtime call alone: Interpreter::Step with the prefix in the KV cache vs\n"
                  " Interpreter::Run over all tokens so far; decoder step = embedding, LayerNorms, dec_self,\n"
                  " dec_cross on cached memory keys, FFN, head and argmax, float parts in float64)\n");
    }
    // Exit status: the two dec_self modes must agree on every source.
    for (size_t k = 0; k < runs.size(); ++k) {
      for (size_t i = 0; i < seqs.size(); ++i) {
        if (runs[k].cached[i].tokens == runs[k].rerun[i].tokens) continue;
        std::fprintf(stderr, "edgeattn-greedy-decode: %s: source %s: cached steps give %s, the re-run %s\n",
                     rts[k]->path().c_str(), Text(seqs[i].digits).c_str(), Text(runs[k].cached[i].tokens).c_str(),
                     Text(runs[k].rerun[i].tokens).c_str());
        return 2;
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "edgeattn-greedy-decode: %s\n", e.what());
    return 1;
  }
  return 0;
}
