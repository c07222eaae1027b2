// `edgeattn-convert expand`: a whole-model preset's layers, to start a
// written-out spec from (docs/workflow.md, "Whole-model presets").
#include "converter/cli/commands.h"
#include "converter/io/file.h"
#include "converter/spec/spec.h"

namespace edgeattn {
namespace convert {

void run_expand(const ExpandOptions& o, std::ostream& out) {
  const std::string text = expand_spec(o.spec, o.weights);
  if (o.output.empty()) {
    out << text;
  } else {
    write_file_atomic(o.output, text.data(), text.size());
  }
}

}  // namespace convert
}  // namespace edgeattn
