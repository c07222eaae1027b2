// Hand-written SVG heatmap of one attention-weight matrix.
#ifndef EDGEATTN_CONVERTER_SVG_H_
#define EDGEATTN_CONVERTER_SVG_H_

#include <string>
#include <vector>

namespace edgeattn {
namespace convert {

// weights: rows x cols, values in [0, 1]. Rows are query positions, columns key positions.
std::string heatmap_svg(const std::string& title, int rows, int cols, const std::vector<double>& weights);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_SVG_H_
