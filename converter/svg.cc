#include "converter/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace edgeattn {
namespace convert {
namespace {

std::string escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

// White (0) -> dark blue (1), with a sqrt ramp so small weights stay visible.
std::string color(double w) {
  const double t = std::sqrt(std::clamp(w, 0.0, 1.0));
  const int r = static_cast<int>(std::lround(255 - t * (255 - 8)));
  const int g = static_cast<int>(std::lround(255 - t * (255 - 48)));
  const int b = static_cast<int>(std::lround(255 - t * (255 - 107)));
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", r, g, b);
  return buf;
}

}  // namespace

std::string heatmap_svg(const std::string& title, int rows, int cols, const std::vector<double>& w) {
  const int cell = std::max(8, std::min(28, 720 / std::max(cols, 1)));
  const int left = 40, top = 56, legend = 60;
  const int width = std::max(left + cols * cell + legend + 20,
                             left + 20 + static_cast<int>(title.size()) * 8);
  const int height = top + rows * cell + 40;
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
    << "\" viewBox=\"0 0 " << width << " " << height << "\" font-family=\"sans-serif\">\n";
  s << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s << "<text x=\"" << left << "\" y=\"20\" font-size=\"14\" font-weight=\"bold\">" << escape(title) << "</text>\n";
  s << "<text x=\"" << left << "\" y=\"38\" font-size=\"11\" fill=\"#555\">rows: query position, columns: key position</text>\n";
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      const double v = w[static_cast<size_t>(r) * cols + c];
      s << "<rect x=\"" << left + c * cell << "\" y=\"" << top + r * cell << "\" width=\"" << cell
        << "\" height=\"" << cell << "\" fill=\"" << color(v) << "\" stroke=\"#ddd\" stroke-width=\"0.5\">"
        << "<title>q " << r << ", k " << c << ": " << v << "</title></rect>\n";
    }
    s << "<text x=\"" << left - 4 << "\" y=\"" << top + r * cell + cell * 0.7 << "\" font-size=\"9\" text-anchor=\"end\">"
      << r << "</text>\n";
  }
  for (int c = 0; c < cols; ++c) {
    s << "<text x=\"" << left + c * cell + cell / 2 << "\" y=\"" << top + rows * cell + 12
      << "\" font-size=\"9\" text-anchor=\"middle\">" << c << "</text>\n";
  }
  const int lx = left + cols * cell + 20;
  for (int i = 0; i < 10; ++i) {
    const double v = 1.0 - i / 9.0;
    s << "<rect x=\"" << lx << "\" y=\"" << top + i * 12 << "\" width=\"14\" height=\"12\" fill=\"" << color(v) << "\"/>\n";
  }
  s << "<text x=\"" << lx + 18 << "\" y=\"" << top + 9 << "\" font-size=\"9\">1.0</text>\n";
  s << "<text x=\"" << lx + 18 << "\" y=\"" << top + 117 << "\" font-size=\"9\">0.0</text>\n";
  s << "</svg>\n";
  return s.str();
}

}  // namespace convert
}  // namespace edgeattn
