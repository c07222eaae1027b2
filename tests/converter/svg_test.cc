// Attention heatmaps (converter/report/svg.h, eval --svg): every element inside the
// canvas for any shape (a one-row pooling map included), token labels on both
// axes, masked keys and padded query rows marked and not drawn as data.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "converter/cli/commands.h"
#include "converter/report/svg.h"

namespace edgeattn {
namespace convert {
namespace {

struct Element {
  std::string tag, text;
  std::map<std::string, std::string> attr;
  double num(const std::string& name, double fallback = 0.0) const {
    const auto it = attr.find(name);
    return it == attr.end() ? fallback : std::atof(it->second.c_str());
  }
};

// The drawn elements: <defs> (pattern tiles, gradient) are left out.
std::vector<Element> elements(std::string svg) {
  const size_t d0 = svg.find("<defs>"), d1 = svg.find("</defs>");
  if (d0 != std::string::npos && d1 != std::string::npos) svg.erase(d0, d1 + 7 - d0);
  std::vector<Element> out;
  const std::regex tag(R"re(<(svg|rect|text|line|circle)\b([^>]*)>(?:([^<]*)</text>)?)re");
  const std::regex attr(R"re(([A-Za-z-]+)="([^"]*)")re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), tag); it != std::sregex_iterator(); ++it) {
    Element e;
    e.tag = (*it)[1];
    e.text = (*it)[3];
    const std::string a = (*it)[2];
    for (auto j = std::sregex_iterator(a.begin(), a.end(), attr); j != std::sregex_iterator(); ++j) {
      e.attr[(*j)[1]] = (*j)[2];
    }
    out.push_back(e);
  }
  return out;
}

// Characters as drawn (an entity is one).
int drawn_chars(const std::string& s) {
  int n = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '&') i = s.find(';', i);
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) ++n;
  }
  return n;
}

// Every rect, line and text of `svg` inside its width x height (text by a
// lower bound of its extent: half the font size per character, the part
// above the baseline 0.7 of the font size).
void expect_inside_canvas(const std::string& svg, const std::string& what) {
  const std::vector<Element> els = elements(svg);
  ASSERT_FALSE(els.empty()) << what;
  ASSERT_EQ(els[0].tag, "svg") << what;
  const double W = els[0].num("width"), H = els[0].num("height");
  ASSERT_GT(W, 0) << what;
  ASSERT_GT(H, 0) << what;
  EXPECT_EQ(els[0].attr.at("viewBox"), "0 0 " + els[0].attr.at("width") + " " + els[0].attr.at("height")) << what;
  auto inside = [&](double x0, double y0, double x1, double y1, const Element& e) {
    EXPECT_TRUE(x0 >= 0 && y0 >= 0 && x1 <= W && y1 <= H)
        << what << ": <" << e.tag << "> '" << e.text << "' spans x " << x0 << ".." << x1 << ", y " << y0 << ".."
        << y1 << " outside the " << W << " x " << H << " canvas";
  };
  for (size_t i = 1; i < els.size(); ++i) {
    const Element& e = els[i];
    if (e.tag == "rect") {
      inside(e.num("x"), e.num("y"), e.num("x") + e.num("width"), e.num("y") + e.num("height"), e);
    } else if (e.tag == "line") {
      inside(std::min(e.num("x1"), e.num("x2")), std::min(e.num("y1"), e.num("y2")),
             std::max(e.num("x1"), e.num("x2")), std::max(e.num("y1"), e.num("y2")), e);
    } else if (e.tag == "text") {
      const double font = e.num("font-size", 16), len = drawn_chars(e.text) * font * 0.5;
      const std::string anchor = e.attr.count("text-anchor") ? e.attr.at("text-anchor") : "start";
      const double before = anchor == "end" ? len : anchor == "middle" ? len / 2 : 0, after = len - before;
      const double x = e.num("x"), y = e.num("y");
      if (e.attr.count("transform")) {  // rotate(-90 x y): the text runs upwards from (x, y)
        EXPECT_NE(e.attr.at("transform").find("rotate(-90 "), std::string::npos) << what;
        inside(x - font * 0.7, y - after, x, y + before, e);
      } else {
        inside(x - before, y - font * 0.7, x + after, y, e);
      }
    }
  }
}

Heatmap map(int rows, int cols) {
  Heatmap h;
  h.title = "layer, head 0, sample 0 (int8)";
  h.caption = {"model.eatn: layer attn (mha, 4 heads, key padding mask), attention weights computed by the runtime.",
               "Sample 0 of reference.npz: 3 of 5 keys valid."};
  h.rows = rows;
  h.cols = cols;
  for (int i = 0; i < rows * cols; ++i) h.weights.push_back((i % 7) / 6.0);
  return h;
}

TEST(Heatmap, OneRowFitsItsCanvas) {
  // The pooling layer's shape: one learned query over 32 keys, 9 masked.
  Heatmap h = map(1, 32);
  h.row_axis = "learned query";
  for (int c = 0; c < 32; ++c) h.masked.push_back(c >= 23);
  expect_inside_canvas(heatmap_svg(h), "1 x 32");
}

TEST(Heatmap, EveryShapeFitsItsCanvas) {
  for (int rows : {1, 2, 3, 13, 40}) {
    for (int cols : {1, 2, 5, 32, 200}) {
      Heatmap h = map(rows, cols);
      expect_inside_canvas(heatmap_svg(h), std::to_string(rows) + " x " + std::to_string(cols));
      for (int r = 0; r < rows; ++r) h.row_labels.push_back(r % 2 ? "BOS" : "a-long-wordpiece");
      for (int c = 0; c < cols; ++c) h.col_labels.push_back(c % 2 ? "<eos>" : "##ing");
      for (int r = 0; r < rows; ++r) {
        h.padded_rows.push_back(r > 0 && r % 3 == 0);
        for (int c = 0; c < cols; ++c) h.masked.push_back(c > r);
      }
      expect_inside_canvas(heatmap_svg(h), std::to_string(rows) + " x " + std::to_string(cols) + " with tokens");
    }
  }
}

TEST(Heatmap, ShortTitleSetsNoWidth) {
  // The map, not the title, decides the width: a 5-key map stays narrow.
  Heatmap h = map(5, 5);
  h.desc = std::string(600, 'x');  // details go to <desc>, never drawn
  const std::vector<Element> els = elements(heatmap_svg(h));
  EXPECT_LT(els[0].num("width"), 500);
  for (const Element& e : els) EXPECT_EQ(e.text.find("xxxx"), std::string::npos);
}

TEST(Heatmap, TokenLabelsOnBothAxes) {
  Heatmap h = map(3, 4);
  h.row_labels = {"BOS", "r<1>", "EOS"};
  h.col_labels = {"k0", "PAD", "k&2", "k3"};
  const std::string svg = heatmap_svg(h);
  std::vector<std::string> texts;
  for (const Element& e : elements(svg)) {
    if (e.tag == "text") texts.push_back(e.text);
  }
  for (const char* label : {"BOS", "r&lt;1&gt;", "EOS", "k0", "PAD", "k&amp;2", "k3"}) {
    EXPECT_NE(std::find(texts.begin(), texts.end(), label), texts.end()) << "no label " << label << " in\n" << svg;
  }
  // Positions stay beside the tokens.
  EXPECT_NE(std::find(texts.begin(), texts.end(), "2"), texts.end());
}

TEST(Heatmap, MaskedCellsAndPaddedRowsAreMarkedNotDrawnAsData) {
  Heatmap h = map(3, 4);
  h.weights.assign(12, 0.6);  // even a masked or padded cell's weight is not drawn
  h.masked = {false, false, true, true, false, false, false, true, false, false, true, true};
  h.padded_rows = {false, false, true};
  const std::string svg = heatmap_svg(h);
  std::map<std::pair<int, int>, std::string> fill, title;
  const std::regex cell(R"re(<rect x="[0-9.]+" y="[0-9.]+" width="[0-9]+" height="[0-9]+" fill="([^"]+)"[^>]*><title>q (\d+), k (\d+): ([^<]*)</title>)re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), cell); it != std::sregex_iterator(); ++it) {
    const std::pair<int, int> rc(std::stoi((*it)[2]), std::stoi((*it)[3]));
    fill[rc] = (*it)[1];
    title[rc] = (*it)[4];
  }
  ASSERT_EQ(fill.size(), 12u) << svg;
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 4; ++c) {
      const std::pair<int, int> rc(r, c);
      if (r == 2) {
        EXPECT_EQ(fill[rc], "url(#ea-padded)") << r << "," << c;
        EXPECT_EQ(title[rc], "padding row");
      } else if (h.masked[static_cast<size_t>(r * 4 + c)]) {
        EXPECT_EQ(fill[rc], "url(#ea-masked)") << r << "," << c;
        EXPECT_EQ(title[rc], "masked key");
      } else {
        EXPECT_EQ(fill[rc].substr(0, 1), "#") << r << "," << c;
        EXPECT_EQ(title[rc], "0.6");
      }
    }
  }
  // Named in a legend, and the padded row says so across it.
  EXPECT_NE(svg.find(">masked key: weight 0 in the runtime"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">padding query row: "), std::string::npos) << svg;
  EXPECT_NE(svg.find(">padding</text>"), std::string::npos) << svg;
  // Without masks, no legend.
  const std::string plain = heatmap_svg(map(3, 4));
  EXPECT_EQ(plain.find("url(#ea-masked)"), std::string::npos);
  EXPECT_EQ(plain.find(">masked key"), std::string::npos);
}

TEST(Heatmap, ColourBarIsContinuousWithTicks) {
  const std::string svg = heatmap_svg(map(1, 8));
  EXPECT_NE(svg.find("fill=\"url(#ea-scale)\""), std::string::npos);
  EXPECT_NE(svg.find("<linearGradient id=\"ea-scale\""), std::string::npos);
  for (const char* tick : {">0</text>", ">0.25</text>", ">0.5</text>", ">0.75</text>", ">1</text>"}) {
    EXPECT_NE(svg.find(tick), std::string::npos) << tick;
  }
}

TEST(Heatmap, BadSizesAreRefused) {
  Heatmap h = map(2, 3);
  h.row_labels = {"a"};
  EXPECT_THROW(heatmap_svg(h), std::exception);
  h = map(2, 3);
  h.masked.assign(5, false);
  EXPECT_THROW(heatmap_svg(h), std::exception);
  h = map(2, 3);
  h.weights.pop_back();
  EXPECT_THROW(heatmap_svg(h), std::exception);
}

// The bundled pooling model end to end (convert, eval --svg): its one-row map
// fits, and its 9 padded keys of sample 0 (23 valid of 32) are marked.
TEST(Heatmap, PoolingEvalSvgFitsAndMarksPadding) {
  char dir[] = "/tmp/ea_svg_test_XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string m = EA_MODELS_DIR "/pooling/";
  ConvertOptions c;
  c.weights = m + "weights.safetensors";
  c.spec = m + "spec.json";
  c.calib = m + "calib.npz";
  c.output = std::string(dir) + "/pool.eatn";
  c.quiet = true;
  std::ostringstream log;
  run_convert(c, log);
  EvalOptions e;
  e.model = c.output;
  e.reference = m + "reference.npz";
  e.svg = std::string(dir) + "/pool.svg";
  e.repeat = 1;
  run_eval(e, log);
  std::ifstream f(e.svg);
  const std::string svg((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  expect_inside_canvas(svg, "pool.svg");
  size_t masked = 0;
  for (size_t p = svg.find("masked key</title>"); p != std::string::npos; p = svg.find("masked key</title>", p + 1)) {
    ++masked;
  }
  EXPECT_EQ(masked, 9u);
  EXPECT_NE(svg.find("q 0, k 31: masked key"), std::string::npos);
  EXPECT_NE(svg.find("<title>pool, sample 0 (int8)</title>"), std::string::npos);
  std::remove(c.output.c_str());
  std::remove(e.svg.c_str());
  ::rmdir(dir);
}

}  // namespace
}  // namespace convert
}  // namespace edgeattn
