#include "converter/report/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "converter/base/error.h"

namespace edgeattn {
namespace convert {
namespace {

const int kMargin = 12;

std::string escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += static_cast<unsigned char>(c) < 0x20 ? '?' : c;  // control bytes are not XML
    }
  }
  return o;
}

// Width of `s` in px at `font` px, estimated (no font metrics here): a
// generous average glyph width per code point, so the layout errs on room.
double text_width(const std::string& s, double font) {
  int chars = 0;
  for (char c : s) chars += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return chars * font * 0.62;
}

double max_width(const std::vector<std::string>& v, double font) {
  double w = 0;
  for (const std::string& s : v) w = std::max(w, text_width(s, font));
  return w;
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

// Greedy word wrap to `width` px at `font` px (a word longer than the line keeps its own line).
std::vector<std::string> wrap(const std::string& text, double width, double font) {
  std::vector<std::string> lines;
  std::istringstream words(text);
  std::string word, line;
  while (words >> word) {
    const std::string longer = line.empty() ? word : line + " " + word;
    if (!line.empty() && text_width(longer, font) > width) {
      lines.push_back(line);
      line = word;
    } else {
      line = longer;
    }
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  std::string s = buf;
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return s;
}

}  // namespace

std::string heatmap_svg(const Heatmap& h) {
  const int rows = h.rows, cols = h.cols;
  if (rows < 1 || cols < 1) fail("heatmap: ", rows, " x ", cols, " cells (need at least 1 x 1)");
  const size_t cells = static_cast<size_t>(rows) * static_cast<size_t>(cols);
  if (h.weights.size() != cells) fail("heatmap: ", h.weights.size(), " weights for ", rows, " x ", cols, " cells");
  if (!h.row_labels.empty() && h.row_labels.size() != static_cast<size_t>(rows)) {
    fail("heatmap: ", h.row_labels.size(), " row labels for ", rows, " rows");
  }
  if (!h.col_labels.empty() && h.col_labels.size() != static_cast<size_t>(cols)) {
    fail("heatmap: ", h.col_labels.size(), " column labels for ", cols, " columns");
  }
  if (!h.masked.empty() && h.masked.size() != cells) fail("heatmap: mask of ", h.masked.size(), " for ", cells, " cells");
  if (!h.padded_rows.empty() && h.padded_rows.size() != static_cast<size_t>(rows)) {
    fail("heatmap: ", h.padded_rows.size(), " padded-row flags for ", rows, " rows");
  }
  auto is_masked = [&](int r, int c) { return !h.masked.empty() && h.masked[static_cast<size_t>(r) * cols + c]; };
  auto is_padded = [&](int r) { return !h.padded_rows.empty() && h.padded_rows[static_cast<size_t>(r)]; };
  bool any_masked = false, any_padded = false;
  for (int r = 0; r < rows; ++r) {
    any_padded = any_padded || is_padded(r);
    for (int c = 0; c < cols && !is_padded(r); ++c) any_masked = any_masked || is_masked(r, c);
  }

  const int cell = std::max(8, std::min(28, 720 / cols));
  const double label_font = std::clamp(cell - 2, 6, 10);  // token labels
  const double pos_font = std::min(9.0, label_font);      // position numbers
  const int grid_w = cols * cell, grid_h = rows * cell;
  // Position labels every `step` cells where they would overlap.
  const int row_step = std::max(1, static_cast<int>(std::ceil((pos_font + 2) / cell)));
  const int col_step =
      std::max(1, static_cast<int>(std::ceil((text_width(std::to_string(cols - 1), pos_font) + 3) / cell)));

  // Horizontal bands, top to bottom.
  const int title_base = kMargin + 13;
  int y = title_base + 8;
  const int col_axis_base = y + 11;
  y += 16;
  const bool col_tokens = !h.col_labels.empty();
  const double col_label_w = max_width(h.col_labels, label_font);
  const bool rotate_cols = col_tokens && col_label_w > cell - 2;
  const int col_band = !col_tokens ? 0 : rotate_cols ? static_cast<int>(std::ceil(col_label_w)) + 4
                                                      : static_cast<int>(label_font) + 4;
  const int col_band_top = y;
  y += col_band;
  const int grid_y = y + 4;

  // Vertical bands, left to right: row axis name, positions, tokens, grid, colour bar.
  // The row axis name runs along the rows, or across them where the map is
  // too short for it (a pooling map's one row).
  const double axis_font = 11;
  const bool rotate_row_axis = text_width(h.row_axis, axis_font) <= grid_h;
  const int axis_x = rotate_row_axis ? kMargin + 11 : kMargin;
  const int axis_band = rotate_row_axis ? 17 : static_cast<int>(std::ceil(text_width(h.row_axis, axis_font))) + 8;
  std::vector<std::string> positions;
  for (int r = 0; r < rows; ++r) positions.push_back(std::to_string(r));
  const int pos_w = static_cast<int>(std::ceil(max_width(positions, pos_font))) + 6;
  const int token_w = h.row_labels.empty() ? 0 : static_cast<int>(std::ceil(max_width(h.row_labels, label_font))) + 6;
  const int grid_x = kMargin + axis_band + pos_w + token_w;
  const int bar_x = grid_x + grid_w + 20, bar_w = 14;
  const int bar_h = std::max(100, std::min(grid_h, 300));
  const double tick_font = 9;
  const int bar_right = bar_x + bar_w + 7 + static_cast<int>(std::ceil(text_width("0.75", tick_font)));
  const double bar_title_font = 10;
  const int content_right =
      std::max(bar_right, bar_x + static_cast<int>(std::ceil(text_width("weight", bar_title_font))));

  const int row_axis_half =
      rotate_row_axis ? static_cast<int>(std::ceil(text_width(h.row_axis, axis_font) / 2)) : 0;
  const int grid_mid = grid_y + grid_h / 2;
  const int body_bottom = std::max({grid_y + grid_h + 14, grid_y + bar_h + 6, grid_mid + row_axis_half + 2});
  const int legend_top = body_bottom + 6;
  std::vector<std::string> legend;
  if (any_masked) legend.push_back("masked key: weight 0 in the runtime (hatched, not drawn as data)");
  if (any_padded) legend.push_back("padding query row: its weights mean nothing (not compared, not drawn as data)");
  const double legend_font = 10, caption_font = 11;
  double legend_right = 0;
  for (const std::string& s : legend) legend_right = std::max(legend_right, kMargin + 18 + text_width(s, legend_font));
  const double title_right = kMargin + text_width(h.title, 14) * 1.08;  // bold
  // Captions wrap to the width the map and legend already take (at least 360 px).
  const double text_room = std::max({static_cast<double>(content_right), legend_right, title_right, 360.0}) - kMargin;
  std::vector<std::string> caption;
  for (const std::string& c : h.caption) {
    for (std::string& l : wrap(c, text_room, caption_font)) caption.push_back(std::move(l));
  }
  const int caption_top = legend_top + static_cast<int>(legend.size()) * 18 + 4;
  double caption_right = 0;
  for (const std::string& s : caption) caption_right = std::max(caption_right, kMargin + text_width(s, caption_font));
  const int width = static_cast<int>(
      std::ceil(std::max({static_cast<double>(content_right), legend_right, title_right, caption_right}))) + kMargin;
  const int height = caption_top + static_cast<int>(caption.size()) * 15 + kMargin;

  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
    << "\" viewBox=\"0 0 " << width << " " << height << "\" font-family=\"sans-serif\">\n";
  s << "<title>" << escape(h.title) << "</title>\n";
  if (!h.desc.empty()) s << "<desc>" << escape(h.desc) << "</desc>\n";
  s << "<defs>\n"
    << "<pattern id=\"ea-masked\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
       "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#ececec\"/>"
       "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#b8b8b8\" stroke-width=\"2\"/></pattern>\n"
    << "<pattern id=\"ea-padded\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
       "patternTransform=\"rotate(-45)\"><rect width=\"6\" height=\"6\" fill=\"#f2f2f2\"/>"
       "<circle cx=\"3\" cy=\"3\" r=\"0.8\" fill=\"#c8c8c8\"/></pattern>\n"
    << "<linearGradient id=\"ea-scale\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">";
  for (int i = 0; i <= 20; ++i) s << "<stop offset=\"" << i / 20.0 << "\" stop-color=\"" << color(i / 20.0) << "\"/>";
  s << "</linearGradient>\n</defs>\n";
  s << "<rect width=\"" << width << "\" height=\"" << height << "\" fill=\"white\"/>\n";
  s << "<text x=\"" << kMargin << "\" y=\"" << title_base << "\" font-size=\"14\" font-weight=\"bold\">"
    << escape(h.title) << "</text>\n";

  // Axis names.
  s << "<text x=\"" << num(grid_x + grid_w / 2.0) << "\" y=\"" << col_axis_base
    << "\" font-size=\"11\" fill=\"#555\" text-anchor=\"middle\">" << escape(h.col_axis) << "</text>\n";
  if (rotate_row_axis) {
    s << "<text x=\"" << axis_x << "\" y=\"" << grid_mid << "\" font-size=\"11\" fill=\"#555\" text-anchor=\"middle\" "
      << "transform=\"rotate(-90 " << axis_x << " " << grid_mid << ")\">" << escape(h.row_axis) << "</text>\n";
  } else {
    s << "<text x=\"" << axis_x << "\" y=\"" << grid_mid + 4 << "\" font-size=\"11\" fill=\"#555\">"
      << escape(h.row_axis) << "</text>\n";
  }

  // Cells.
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      const double v = h.weights[static_cast<size_t>(r) * cols + c];
      const char* fill_ref = is_padded(r) ? "url(#ea-padded)" : is_masked(r, c) ? "url(#ea-masked)" : nullptr;
      s << "<rect x=\"" << grid_x + c * cell << "\" y=\"" << grid_y + r * cell << "\" width=\"" << cell
        << "\" height=\"" << cell << "\" fill=\"" << (fill_ref ? fill_ref : color(v))
        << "\" stroke=\"#ddd\" stroke-width=\"0.5\"><title>q " << r << ", k " << c << ": ";
      if (is_padded(r)) {
        s << "padding row";
      } else if (is_masked(r, c)) {
        s << "masked key";
      } else {
        s << v;
      }
      s << "</title></rect>\n";
    }
    if (is_padded(r) && grid_w >= 60 && cell >= 10) {
      s << "<text x=\"" << num(grid_x + grid_w / 2.0) << "\" y=\"" << num(grid_y + r * cell + cell * 0.5 + 3.5)
        << "\" font-size=\"" << std::min(10, cell - 2) << "\" fill=\"#888\" font-style=\"italic\" "
        << "text-anchor=\"middle\">padding</text>\n";
    }
  }
  // Row labels: token (if any) next to the grid, position further left.
  for (int r = 0; r < rows; ++r) {
    const double base = grid_y + r * cell + cell * 0.5 + pos_font * 0.35;
    const char* shade = is_padded(r) ? "#aaa" : "#000";
    if (!h.row_labels.empty()) {
      s << "<text x=\"" << grid_x - 4 << "\" y=\"" << num(grid_y + r * cell + cell * 0.5 + label_font * 0.35)
        << "\" font-size=\"" << label_font << "\" text-anchor=\"end\" fill=\"" << shade << "\">"
        << escape(h.row_labels[static_cast<size_t>(r)]) << "</text>\n";
    }
    if (r % row_step == 0) {
      s << "<text x=\"" << grid_x - token_w - 4 << "\" y=\"" << num(base) << "\" font-size=\"" << pos_font
        << "\" text-anchor=\"end\" fill=\"" << (h.row_labels.empty() ? shade : "#999") << "\">" << r << "</text>\n";
    }
  }
  // Column labels: tokens above the grid, positions below.
  for (int c = 0; c < cols; ++c) {
    const double cx = grid_x + c * cell + cell / 2.0;
    if (col_tokens) {
      const std::string& t = h.col_labels[static_cast<size_t>(c)];
      if (rotate_cols) {
        const double x = cx + label_font * 0.35, yb = col_band_top + col_band;
        s << "<text x=\"" << num(x) << "\" y=\"" << yb << "\" font-size=\"" << label_font
          << "\" transform=\"rotate(-90 " << num(x) << " " << yb << ")\">" << escape(t) << "</text>\n";
      } else {
        s << "<text x=\"" << num(cx) << "\" y=\"" << col_band_top + col_band - 3 << "\" font-size=\"" << label_font
          << "\" text-anchor=\"middle\">" << escape(t) << "</text>\n";
      }
    }
    if (c % col_step == 0) {
      s << "<text x=\"" << num(cx) << "\" y=\"" << grid_y + grid_h + 11 << "\" font-size=\"" << pos_font
        << "\" text-anchor=\"middle\" fill=\"" << (col_tokens ? "#999" : "#000") << "\">" << c << "</text>\n";
    }
  }

  // Colour bar: the same colours as the cells, continuous, ticks at linear weight values.
  s << "<text x=\"" << bar_x << "\" y=\"" << grid_y - 8 << "\" font-size=\"" << bar_title_font
    << "\" fill=\"#555\">weight</text>\n";
  s << "<rect x=\"" << bar_x << "\" y=\"" << grid_y << "\" width=\"" << bar_w << "\" height=\"" << bar_h
    << "\" fill=\"url(#ea-scale)\" stroke=\"#999\" stroke-width=\"0.5\"/>\n";
  for (const char* tick : {"0", "0.25", "0.5", "0.75", "1"}) {
    const double ty = grid_y + (1.0 - std::atof(tick)) * bar_h;
    s << "<line x1=\"" << bar_x + bar_w << "\" y1=\"" << num(ty) << "\" x2=\"" << bar_x + bar_w + 4 << "\" y2=\""
      << num(ty) << "\" stroke=\"#555\" stroke-width=\"0.75\"/>\n";
    s << "<text x=\"" << bar_x + bar_w + 7 << "\" y=\"" << num(ty + 3) << "\" font-size=\"" << tick_font << "\">"
      << tick << "</text>\n";
  }

  // Legend (only what the map shows), then the caption.
  for (size_t i = 0; i < legend.size(); ++i) {
    const int ly = legend_top + static_cast<int>(i) * 18;
    const bool masked_entry = any_masked && i == 0;
    s << "<rect x=\"" << kMargin << "\" y=\"" << ly << "\" width=\"12\" height=\"12\" fill=\""
      << (masked_entry ? "url(#ea-masked)" : "url(#ea-padded)") << "\" stroke=\"#999\" stroke-width=\"0.5\"/>\n";
    s << "<text x=\"" << kMargin + 18 << "\" y=\"" << ly + 10 << "\" font-size=\"" << legend_font << "\">"
      << escape(legend[i]) << "</text>\n";
  }
  for (size_t i = 0; i < caption.size(); ++i) {
    s << "<text x=\"" << kMargin << "\" y=\"" << caption_top + 11 + static_cast<int>(i) * 15 << "\" font-size=\""
      << caption_font << "\" fill=\"#555\">" << escape(caption[i]) << "</text>\n";
  }
  s << "</svg>\n";
  return s.str();
}

}  // namespace convert
}  // namespace edgeattn
