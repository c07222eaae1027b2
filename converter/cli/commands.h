// The convert / inspect / eval subcommands of edgeattn-convert (classify is
// in eval/classify.h), callable from tests. Each throws
// ConvertError with the one-line message main() prints.
#ifndef EDGEATTN_CONVERTER_CLI_COMMANDS_H_
#define EDGEATTN_CONVERTER_CLI_COMMANDS_H_

#include <ostream>
#include <string>
#include <vector>

#include "converter/calibrate/calib_method.h"

namespace edgeattn {
namespace convert {

struct ConvertOptions {
  std::string weights, spec, calib, dtype = "int8", output, report_json;
  std::string emit_c;  // --emit-c PREFIX: also write PREFIX.h / PREFIX.c (converter/write/emit_c.h)
  int workers = 1;     // --workers T: PREFIX.h's _POOL_ARENA_BYTES is the arena for T pool workers
  int max_q_len = 0, max_kv_len = 0;
  // int8 activation ranges (calib_method.h): --calib-method, --calib-percentile.
  std::string calib_method = calib_method_name(CalibOptions().method);
  double calib_percentile = CalibOptions().percentile;
  // --calib-headroom: "auto" (the default: calib_method.h, estimated_ends) or
  // a percentage ("0": the observed ranges as the method chose them). The
  // library's CalibOptions() keeps no headroom for direct build_model() callers.
  std::string calib_headroom = "auto";
  // Held-out evaluation: --heldout FILE.npz (same keys as --calib) or
  // --heldout-split F (the last F of the calibration samples, not calibrated on).
  std::string heldout;
  double heldout_split = 0.0;
  // --data-key FILE_KEY=LAYER.WHAT: the data files' own names for the keys
  // (dataset.h, DataKey), applied to --calib and --heldout.
  std::vector<std::string> data_keys;
  // --heldout-scale S: multiply the held-out inputs by S (e.g. 1.25) to see
  // what int8 gives on inputs beyond the calibrated range.
  double heldout_scale = 1.0;
  // --range-mode static|dynamic|dynamic-pow2: how the runtime runs the
  // held-out evaluation (static: the calibrated scales, saturating beyond
  // them; dynamic: range mode, Interpreter::RunFloat).
  std::string range_mode = "static";
  // Progress lines (layer i of n, calibration samples) on stderr: only when
  // stderr is a terminal and not --quiet.
  bool quiet = false;
  // Leave the tiled attention's scratch out of the plan (smaller arena; every
  // path then runs the attention row by row, same integers).
  bool no_tile_scratch = false;
  // A weights tensor no layer uses, next to a used one (spec.h, UnusedTensor):
  // a warning instead of an error.
  bool allow_unused = false;
  // --smooth-alpha A (< 0: off): SmoothQuant factors folded into the pre-norm
  // blocks' LayerNorms and the projections after them (smooth.h), from the
  // calibration data; --smooth-layers: only these layers.
  double smooth_alpha = -1.0;
  std::vector<std::string> smooth_layers;
  // --residual auto|int8|int16: the int8 encoder blocks' residual stream
  // (spec.h use_residual16; issue 37). auto (the default): int16 where the
  // stream stays inside the model (use_residual16_inside), else int8.
  std::string residual = "auto";
};
// Converts, verifies with the runtime, checks accuracy on the calibration
// inputs (and held-out inputs, if any), then writes the file atomically and
// prints the report to `out`; held-out range warnings also go to stderr
// unless stderr is the same file as stdout (`out` = std::cout).
void run_convert(const ConvertOptions& o, std::ostream& out);

// Prints the model; throws if the runtime rejects it.
void run_inspect(const std::string& path, std::ostream& out);

// `expand`: the spec with its whole-model preset written out as layers
// (spec.h, expand_spec), to `output` (atomically) or, without one, to `out`.
struct ExpandOptions {
  std::string weights, spec, output;
};
void run_expand(const ExpandOptions& o, std::ostream& out);

struct EvalOptions {
  std::string model, reference, svg, svg_layer, json;
  std::vector<std::string> data_keys;  // --data-key FILE_KEY=LAYER.WHAT, as convert's
  int svg_sample = 0, svg_head = 0, repeat = 5;
  // Heatmap axis labels: --tokens VOCAB.txt (one token per line, line i = id i)
  // and the ids L.query_ids / L.key_ids from --token-ids FILE.npz (default: --reference).
  std::string tokens, token_ids;
  double max_rel_l2 = -1.0;  // >= 0: fail (after printing) if a layer's relative L2 error is larger
  double min_cosine = -3.0;  // >= -1: fail if a layer's cosine similarity is smaller
  std::string range_mode = "static";  // --range-mode, as for convert
  // --dump-outputs FILE.npz: the runtime's outputs of every compared layer
  // (L.output, and L.attn_weights for layers with attention maps), float32.
  std::string dump_outputs;
};
void run_eval(const EvalOptions& o, std::ostream& out);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_CLI_COMMANDS_H_
