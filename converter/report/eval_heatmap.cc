#include "converter/report/eval_heatmap.h"

#include <sstream>

#include "converter/base/error.h"
#include "converter/io/file.h"
#include "converter/kinds/kind.h"
#include "converter/report/tokens.h"

namespace edgeattn {
namespace convert {

Heatmap eval_heatmap(const HeatmapSource& src, const FloatLayer& shell, const std::string& dtype,
                     const LayerData& d, const RunResult& run, int sample_index, int head) {
  if (shell.heads() == 0) {
    fail(src.model_path, ": layer '", shell.name, "' (", shell.kind->name,
         ") has no attention weights to draw (--svg-layer)");
  }
  if (sample_index < 0 || sample_index >= d.n) {
    fail(src.reference_path, ": --svg-sample ", sample_index, " is outside 0..", d.n - 1);
  }
  if (head < 0 || head >= shell.heads()) {
    fail(src.model_path, ": layer '", shell.name, "': --svg-head ", head, " is outside 0..", shell.heads() - 1);
  }
  const int lq = shell.learned_query() ? 1 : d.lq;
  const size_t base = (static_cast<size_t>(sample_index) * shell.heads() + head) * lq * d.lk;
  Heatmap hm;
  hm.rows = lq;
  hm.cols = d.lk;
  hm.weights.assign(run.weights.begin() + static_cast<long>(base),
                    run.weights.begin() + static_cast<long>(base + static_cast<size_t>(lq) * d.lk));
  // Masked cells and padded rows as the runtime sees them (padded rows:
  // self-attention with key padding, the rows eval does not compare).
  const int valid = d.valid[static_cast<size_t>(sample_index)];
  for (int r = 0; r < lq; ++r) {
    hm.padded_rows.push_back(shell.self_attention() && shell.mask == MaskKind::kKeyPadding && valid >= 0 &&
                             r >= valid);
    const int limit = row_limit(shell, r, lq, d.lk, valid);
    for (int c = 0; c < d.lk; ++c) hm.masked.push_back(c >= limit);
  }
  if (!src.vocab->empty()) {
    if (!shell.learned_query()) {  // a learned query has no token
      hm.row_labels = token_labels(*src.ids, src.ids_path, shell.name + ".query_ids", d.n, lq, sample_index,
                                   *src.vocab, src.tokens_path);
    }
    hm.col_labels = token_labels(*src.ids, src.ids_path, shell.name + ".key_ids", d.n, d.lk, sample_index,
                                 *src.vocab, src.tokens_path);
    if (hm.col_labels.empty() && shell.self_attention()) hm.col_labels = hm.row_labels;
    if (hm.row_labels.empty() && hm.col_labels.empty()) {
      fail(src.ids_path, ": no token ids for layer '", shell.name, "' (--tokens): give ",
           shell.learned_query() ? "" : "'" + shell.name + ".query_ids' [N, Lq] and/or ", "'",
           shell.name, ".key_ids' [N, Lk], integer ids into ", src.tokens_path);
    }
  }
  const bool pooling = shell.learned_query();
  hm.row_axis = pooling ? "learned query" : hm.row_labels.empty() ? "query position" : "query token";
  hm.col_axis = hm.col_labels.empty() ? "key position" : "key token";
  std::ostringstream title, what, sample;
  title << shell.name;
  if (shell.heads() > 1) title << ", head " << head;
  title << ", sample " << sample_index << " (" << dtype << ")";
  hm.title = title.str();
  const char* mask = shell.mask == MaskKind::kCausal       ? ", causal mask"
                     : shell.mask == MaskKind::kKeyPadding ? ", key padding mask"
                                                           : "";
  what << base_name(src.model_path) << ": layer " << shell.name << " (" << shell.kind->name;
  if (shell.heads() > 1) what << ", " << shell.heads() << " heads";
  what << mask << "), attention weights computed by the runtime.";
  sample << "Sample " << sample_index << " of " << base_name(src.reference_path) << ": ";
  if (valid >= 0) {
    sample << valid << " of " << d.lk << " keys valid.";
  } else {
    sample << "all " << d.lk << " keys valid.";
  }
  hm.caption = {what.str(), sample.str()};
  if (!src.vocab->empty()) {
    hm.caption.push_back("Tokens: " + base_name(src.tokens_path) + ", ids from " + base_name(src.ids_path) + ".");
  }
  hm.caption.push_back("Colour: square-root ramp, so small weights stay visible; a cell's tooltip has its value.");
  hm.desc = "model " + src.model_path + "; producer: " + src.producer +
            "; reference " + src.reference_path +
            (src.vocab->empty() ? "" : "; tokens " + src.tokens_path + ", ids " + src.ids_path);
  return hm;
}

}  // namespace convert
}  // namespace edgeattn
