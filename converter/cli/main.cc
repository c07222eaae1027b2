// edgeattn-convert: PyTorch weights (+ calibration data) -> .eatn models,
// model inspection, and evaluation against PyTorch reference outputs.
#include <CLI/CLI.hpp>
#include <iostream>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "converter/base/error.h"
#include "converter/cli/commands.h"
#include "converter/eval/classify.h"

int main(int argc, char** argv) {
  using namespace edgeattn::convert;
#if defined(__GLIBC__)
  // The float reference allocates and frees megabyte-sized buffers per layer
  // and sample; glibc serves those with fresh mmap()s, so every one was
  // page-faulted and zeroed again (a third of a large conversion's time).
  // Keep them in the heap and keep freed memory for reuse instead.
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
  CLI::App app{"edgeattn-convert: convert attention layers to .eatn models, inspect and evaluate them"};
  app.require_subcommand(1);

  ConvertOptions c;
  CLI::App* conv = app.add_subcommand("convert", "convert weights + spec (+ calibration) to a .eatn model");
  conv->add_option("--weights", c.weights, "weights: safetensors or .npz (recognised by their bytes, not the extension)")->required();
  conv->add_option("--spec", c.spec, "layer spec (JSON)")->required();
  conv->add_option("--calib", c.calib, "calibration inputs (.npz), required for int8");
  conv->add_option("--dtype", c.dtype, "int8 or f32")->required()->check(CLI::IsMember({"int8", "f32"}));
  conv->add_option("-o,--output", c.output, "output model (.eatn)")->required();
  conv->add_option("--report-json", c.report_json, "also write the report as JSON");
  conv->add_option("--max-q-len", c.max_q_len, "override every layer's max_q_len")->check(CLI::PositiveNumber);
  conv->add_option("--emit-c", c.emit_c,
                   "also write the model as C: PREFIX.h (arena bytes, size) + PREFIX.c (16-byte aligned const array)");
  conv->add_option("--workers", c.workers,
                   "with --emit-c: PREFIX_POOL_ARENA_BYTES is the arena for this many thread-pool workers "
                   "(ea_interpreter_use_executor)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  conv->add_option("--max-kv-len", c.max_kv_len, "override every layer's max_kv_len")->check(CLI::PositiveNumber);
  conv->add_option("--calib-method", c.calib_method,
                   "how int8 activation ranges are chosen from the calibration values: minmax (observed min/max), "
                   "percentile (--calib-percentile), mse (least int8 round-trip error)")
      ->capture_default_str()
      ->check(CLI::IsMember({"minmax", "percentile", "mse"}));
  conv->add_option("--calib-percentile", c.calib_percentile,
                   "percentile method: keep this percentile and its mirror (e.g. 99.99)")
      ->capture_default_str()
      ->check(CLI::Range(50.0, 100.0));
  conv->add_option("--calib-headroom", c.calib_headroom,
                   "auto: extend each end of every range to a 97.5 % prediction bound for the next sample's "
                   "max (min), estimated from each calibration sample's own max (min): wide with few samples "
                   "whose extremes spread, none with many; or P: widen every range by P percent on each side "
                   "(0 to 1000) so inputs that far beyond the calibration data do not saturate (coarser int8 step)")
      ->capture_default_str()
      ->check([](const std::string& v) -> std::string {
        edgeattn::convert::CalibOptions o;
        try {
          edgeattn::convert::parse_calib_headroom(v, &o);
        } catch (const edgeattn::convert::ConvertError&) {
          return "must be auto or a percentage in [0, 1000]";
        }
        return "";
      });
  conv->add_option("--heldout", c.heldout,
                   "held-out inputs (.npz, same keys as --calib): report accuracy on data calibration did not see");
  conv->add_option("--heldout-split", c.heldout_split,
                   "hold out the last F (0 < F < 1) of the calibration samples: calibrate on the rest, report "
                   "accuracy on these")
      ->check(CLI::Range(0.0, 1.0));
  conv->add_option("--heldout-scale", c.heldout_scale,
                   "multiply the held-out inputs by this (e.g. 1.25: how int8 does beyond the calibrated range)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  conv->add_option("--data-key", c.data_keys,
                   "FILE_KEY=LAYER.WHAT (repeatable): read the data files' key FILE_KEY as LAYER.WHAT, e.g. "
                   "x=embed.query for a whole model's inputs stored as 'x'");
  conv->add_option("--range-mode", c.range_mode,
                   "runtime mode of the held-out evaluation: static (calibrated scales, values beyond them "
                   "saturate), dynamic (range mode: float inputs quantized per call at R x the calibrated "
                   "scales, R from their absmax), dynamic-pow2 (R rounded up to a power of two)")
      ->capture_default_str()
      ->check(CLI::IsMember({"static", "dynamic", "dynamic-pow2"}));
  conv->add_flag("--allow-unused", c.allow_unused,
                 "convert even when a weights tensor next to a used one (e.g. attn.Wa.bias beside a used "
                 "attn.Wa.weight) is used by no layer: a warning instead of an error");
  conv->add_option("--smooth-alpha", c.smooth_alpha,
                   "SmoothQuant: fold per-channel factors max|x_j|^A / max|w_j|^(1-A) (from --calib) into each "
                   "pre-norm block's LayerNorm gain and bias and the projections it feeds (same float function, "
                   "no run-time cost); A in [0, 1], 0.5 typical; post-norm blocks are refused")
      ->check(CLI::Range(0.0, 1.0));
  conv->add_option("--smooth-layers", c.smooth_layers,
                   "with --smooth-alpha: only these layers (comma-separated names; default: every block layer)")
      ->delimiter(',');
  conv->add_option("--residual", c.residual,
                   "int8 encoder/decoder blocks' residual stream: int16 (block inputs and outputs int16, "
                   "residual adds and LayerNorms on int16, the GEMMs int8; positions/embedding write it, "
                   "layernorm/row_pool read it), int8, or auto: int16 when the stream stays inside the model "
                   "(no block reads the model's input or gives its output), else int8 (the report says why)")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "int8", "int16"}));
  conv->add_flag("-q,--quiet", c.quiet, "no progress lines (they are shown only when stderr is a terminal)");
  conv->add_flag("--no-tile-scratch", c.no_tile_scratch,
                 "smaller arena for targets that never tile (Cortex-M): leave the tiled int8 attention's "
                 "scratch out of the plan; every path then runs the attention row by row (same integers)");

  std::string inspect_path;
  CLI::App* insp = app.add_subcommand("inspect", "verify a .eatn model with the runtime and print its contents");
  insp->add_option("model", inspect_path, "model file (.eatn)")->required();

  ExpandOptions x;
  CLI::App* exp = app.add_subcommand(
      "expand", "print the spec with its whole-model preset written out as layers (a start for your own spec)");
  exp->add_option("--weights", x.weights, "weights (the preset reads the model's structure from them)")->required();
  exp->add_option("--spec", x.spec, "spec.json with a \"preset\"")->required();
  exp->add_option("-o,--output", x.output, "write the layers here (atomically) instead of to stdout");

  EvalOptions e;
  CLI::App* ev = app.add_subcommand("eval", "run a model through the runtime against PyTorch reference outputs");
  ev->add_option("model", e.model, "model file (.eatn)")->required();
  ev->add_option("--reference", e.reference, "reference .npz: inputs + L.output (+ L.attn_weights [N, H, Lq, Lk], compared when present)")->required();
  ev->add_option("--data-key", e.data_keys,
                 "FILE_KEY=LAYER.WHAT (repeatable): read the reference's key FILE_KEY as LAYER.WHAT, e.g. "
                 "logits=head.output");
  ev->add_option("--svg", e.svg, "write an attention heatmap (SVG)");
  ev->add_option("--svg-layer", e.svg_layer, "layer of the heatmap (default: the first)");
  ev->add_option("--svg-sample", e.svg_sample, "sample of the heatmap")->capture_default_str();
  ev->add_option("--svg-head", e.svg_head, "head of the heatmap")->capture_default_str();
  ev->add_option("--tokens", e.tokens,
                 "label the heatmap's axes with tokens: a vocabulary file, one token per line (line i = id i); "
                 "the ids are L.query_ids [N, Lq] and L.key_ids [N, Lk] (integers) of --token-ids");
  ev->add_option("--token-ids", e.token_ids, ".npz holding the token ids for --tokens (default: --reference)");
  ev->add_option("--json", e.json, "also write the figures as JSON");
  ev->add_option("--dump-outputs", e.dump_outputs,
                 "also write the runtime's outputs as .npz: L.output [N, Lq, Dout] and, for layers with "
                 "attention maps, L.attn_weights [N, H, Lq, Lk] (float32, the reference's key names)");
  ev->add_option("--repeat", e.repeat, "timing repeats")->capture_default_str()->check(CLI::PositiveNumber);
  ev->add_option("--range-mode", e.range_mode,
                 "runtime mode for int8 layers: static, dynamic or dynamic-pow2 (as for convert)")
      ->capture_default_str()
      ->check(CLI::IsMember({"static", "dynamic", "dynamic-pow2"}));
  ev->add_option("--max-rel-l2", e.max_rel_l2,
                 "exit 1 if a layer's relative L2 output error is above this (e.g. 0.05)")
      ->check(CLI::NonNegativeNumber);
  ev->add_option("--min-cosine", e.min_cosine,
                 "exit 1 if a layer's output cosine similarity is below this (e.g. 0.999)")
      ->check(CLI::Range(-1.0, 1.0));

  ClassifyOptions k;
  CLI::App* cls = app.add_subcommand(
      "classify", "task accuracy of a pooling classifier: runtime attention pooling + its float linear head");
  cls->add_option("model", k.model, "model file (.eatn) with the pooling layer")->required();
  cls->add_option("--data", k.data, "held-out .npz: key [N,L,D], kv_valid_len [N], labels [N]")->required();
  cls->add_option("--weights", k.weights, "weights (safetensors or .npz) holding the head")->required();
  cls->add_option("--head", k.head, "name prefix of the linear head")->capture_default_str();
  cls->add_option("--layer", k.layer, "pooling layer (default: the first)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForAllHelp& help) {
    return app.exit(help);
  } catch (const CLI::ParseError& parse_error) {
    // One line, like every other error; --help has the details.
    std::cerr << "edgeattn-convert: error: " << parse_error.what() << " (see --help)\n";
    return 2;
  }
  try {
    if (*conv) run_convert(c, std::cout);
    if (*insp) run_inspect(inspect_path, std::cout);
    if (*exp) run_expand(x, std::cout);
    if (*ev) run_eval(e, std::cout);
    if (*cls) run_classify(k, std::cout);
  } catch (const ConvertError& ex) {
    std::cerr << "edgeattn-convert: error: " << ex.what() << "\n";
    return 1;
  } catch (const std::exception& ex) {
    std::cerr << "edgeattn-convert: error: " << ex.what() << "\n";
    return 1;
  }
  return 0;
}
