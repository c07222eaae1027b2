// Hand-written SVG heatmap of one attention-weight matrix.
#ifndef EDGEATTN_CONVERTER_REPORT_SVG_H_
#define EDGEATTN_CONVERTER_REPORT_SVG_H_

#include <string>
#include <vector>

namespace edgeattn {
namespace convert {

struct Heatmap {
  std::string title;                 // one short line on top (layer, head, sample, dtype)
  std::vector<std::string> caption;  // detail lines under the map (wrapped to the map's width)
  std::string desc;                  // <desc>: longer details not drawn (producer, paths)
  std::string row_axis = "query", col_axis = "key";
  int rows = 0, cols = 0;
  std::vector<double> weights;  // rows x cols, values in [0, 1]
  // Tokens at the query rows / key columns (empty: positions only); drawn next
  // to the grid, the positions beside them.
  std::vector<std::string> row_labels, col_labels;
  std::vector<bool> masked;       // rows x cols: key masked for this row (empty: none)
  std::vector<bool> padded_rows;  // rows: padding query row, its weights meaningless (empty: none)
};

// A self-contained SVG whose every element lies inside its canvas. Masked
// cells and padded rows are hatched grey (not coloured as data) and named in a
// legend; the colour bar is a continuous gradient with ticks 0 .. 1.
// Throws ConvertError if the sizes of the vectors do not match rows x cols.
std::string heatmap_svg(const Heatmap& h);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_REPORT_SVG_H_
