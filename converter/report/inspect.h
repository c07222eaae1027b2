// `edgeattn-convert inspect`: what a .eatn file holds, layer by layer.
#ifndef EDGEATTN_CONVERTER_REPORT_INSPECT_H_
#define EDGEATTN_CONVERTER_REPORT_INSPECT_H_

#include <ostream>
#include <string>

#include "converter/eval/runner.h"
#include "converter/write/file_contents.h"

namespace edgeattn {
namespace convert {
// The full human-readable dump printed by `edgeattn-convert inspect`.
void print_inspect(const LoadedModel& model, const std::string& path, std::ostream& os);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_REPORT_INSPECT_H_
