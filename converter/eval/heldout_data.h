// The held-out inputs of a conversion (convert --heldout, --heldout-split,
// --heldout-scale, --range-mode): which samples, and a sentence saying so for
// the report.
#ifndef EDGEATTN_CONVERTER_EVAL_HELDOUT_DATA_H_
#define EDGEATTN_CONVERTER_EVAL_HELDOUT_DATA_H_

#include <string>
#include <vector>

#include "converter/model/dataset.h"
#include "edgeattn/edgeattn.h"

namespace edgeattn {
namespace convert {

struct HeldoutChoice {
  std::string path;     // --heldout FILE.npz ("": none)
  double split = 0.0;   // --heldout-split F: the last F of the calibration samples
  double scale = 1.0;   // --heldout-scale S: inputs multiplied by S
  ea_range_policy policy = EA_RANGE_STATIC;  // --range-mode
  std::string calib_path;                    // the calibration file (for the split's description)
  std::vector<DataKey> data_keys;            // --data-key
};

struct HeldoutData {
  std::vector<LayerData> layers;  // [i] for layer i; empty: no held-out evaluation
  std::string what;               // "the last 8 of the 16 samples of calib.npz (--heldout-split 0.5)", ...
};

// Reads --heldout's file, or splits the last samples off `calib` (which keeps
// the rest), then scales the inputs. The options' combinations are checked by
// the caller (cli/convert_options.cc).
HeldoutData take_heldout(const HeldoutChoice& c, const std::vector<FloatLayer>& layers,
                         std::vector<LayerData>* calib);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_EVAL_HELDOUT_DATA_H_
