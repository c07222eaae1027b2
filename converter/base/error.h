// Converter errors: one exception type whose message is the single line
// printed by edgeattn-convert (it names the file and the tensor/layer at fault).
#ifndef EDGEATTN_CONVERTER_BASE_ERROR_H_
#define EDGEATTN_CONVERTER_BASE_ERROR_H_

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace edgeattn {
namespace convert {

class ConvertError : public std::runtime_error {
 public:
  explicit ConvertError(const std::string& message) : std::runtime_error(message) {}
};

// fail("file.safetensors: tensor '", name, "' ...") throws ConvertError.
template <typename... Args>
[[noreturn]] void fail(Args&&... args) {
  std::ostringstream s;
  (s << ... << std::forward<Args>(args));
  throw ConvertError(s.str());
}

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_BASE_ERROR_H_
