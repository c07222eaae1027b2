// `edgeattn-convert inspect`: the runtime verifies the file, report/inspect.h prints it.
#include "converter/cli/commands.h"
#include "converter/io/file.h"
#include "converter/report/inspect.h"

namespace edgeattn {
namespace convert {

void run_inspect(const std::string& path, std::ostream& out) {
  const std::vector<uint8_t> bytes = read_file(path);
  const LoadedModel lm(bytes, path);
  print_inspect(lm, path, out);
}

}  // namespace convert
}  // namespace edgeattn
