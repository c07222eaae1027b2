// The positions kind (ViT / keyword-spotting token preparation): spec fields
// (num_cls, table "learned" | "sinusoidal", tensors cls_token and pos_embed
// with timm's names as defaults), the float64 forward, calibration points
// ("query" = the input rows, "output" = every output row, the class rows
// included), int8 quantization (requant.h's positions contract: the class
// rows' outputs as int8 constants, the table as int16 at the output scale
// with b fraction bits, A for the input) and its Positions table. On the
// int16 stream it writes the stream (positions16), and reads the embedding
// linear's int16 rows when that linear writes them (input16, positions16-in).
#include "converter/kinds/positions.h"

#include <algorithm>
#include <cmath>
#include <ostream>
#include <string>

#include "converter/quantize/quantize.h"
#include "converter/write/file_contents.h"
#include "converter/write/writer.h"
#include "edgeattn/kernels/requant.h"

namespace edgeattn {
namespace convert {

double sinusoidal_position(int p, int k, int dim) {
  const double angle = p / std::pow(10000.0, static_cast<double>(k - k % 2) / dim);
  return k % 2 == 0 ? std::sin(angle) : std::cos(angle);
}

double PositionsParams::pos(int r, int k, int dim) const {
  return sinusoidal ? sinusoidal_position(r, k, dim) : table[static_cast<size_t>(r) * dim + k];
}

namespace {
namespace positions_module {

// A float tensor of rows of `cols` (cols 0: any), as timm stores it: [1, rows, cols],
// [rows, cols] or, for one row, [cols]; or [rows, 1, cols], a sequence-first
// buffer (PyTorch's translation tutorial's pos_embedding). Checked finite;
// counted as used.
const Array& fetch_rows(const SpecWeights& w, const std::string& name, const char* what, int* rows, int* cols) {
  auto it = w.map.find(name);
  if (it == w.map.end()) w.missing(name);
  const Array& a = it->second;
  if (!a.is_float) fail(w.where(), ": tensor '", name, "' has dtype ", a.dtype, ", expected a float type");
  const std::vector<size_t>& s = a.shape;
  size_t r = 0, c = 0;
  if (s.size() == 3 && s[0] == 1) {
    r = s[1];
    c = s[2];
  } else if (s.size() == 3 && s[1] == 1) {
    r = s[0];
    c = s[2];
  } else if (s.size() == 2) {
    r = s[0];
    c = s[1];
  } else if (s.size() == 1) {
    r = 1;
    c = s[0];
  }
  if (r == 0 || c == 0 || r > 65535 || c > 16384 || (*cols != 0 && c != static_cast<size_t>(*cols))) {
    const std::string dim = *cols != 0 ? std::to_string(*cols) : std::string("dim");
    fail(w.where(), ": tensor '", name, "' has shape ", shape_string(s), ", expected [1, rows, ", dim, "], [rows, 1, ",
         dim, "] or [rows, ", dim, "] (", what, ")");
  }
  for (size_t i = 0; i < a.data.size(); ++i) {
    if (!std::isfinite(a.data[i])) fail(w.where(), ": tensor '", name, "' has a non-finite value at index ", i);
  }
  if (w.fetched != nullptr) w.fetched->insert(name);
  *rows = static_cast<int>(r);
  *cols = static_cast<int>(c);
  return a;
}

void resolve(const SpecFields& f, const SpecWeights& w, FloatLayer* L) {
  PositionsParams& P = L->params.emplace<PositionsParams>();
  const std::string prefix = f.string("prefix", "");
  const std::string table = f.string("table", "learned");
  if (table != "learned" && table != "sinusoidal") {
    fail(f.where, ": field 'table' must be \"learned\" (a pos_embed tensor) or \"sinusoidal\", got '", table, "'");
  }
  P.sinusoidal = table == "sinusoidal";
  int D = f.has("dim") ? f.integer("dim") : 0;
  P.cls_name = tensor_or(f, "cls_token", prefix, "cls_token");
  // num_cls: the spec's, else the class tokens' rows when the tensor is there, else 0.
  int num_cls = -1;
  if (f.has("num_cls")) {
    const auto& v = f.j.at("num_cls");
    if (!v.is_number_integer() || v.get<long long>() < 0 || v.get<long long>() > 65535) {
      fail(f.where, ": field 'num_cls' must be an integer in 0..65535, got ", v.dump());
    }
    num_cls = v.get<int>();
  } else {
    num_cls = w.has(P.cls_name) ? -2 : 0;  // -2: as many as the tensor has
  }
  if (!P.sinusoidal) {
    P.table_name = tensor_or(f, "pos_embed", prefix, "pos_embed");
    int cols = D;
    const Array& t = fetch_rows(w, P.table_name, "positional embedding, class rows first", &P.table_rows, &cols);
    D = cols;
    P.table = t.data;
  } else {
    if (!f.tensor_name("pos_embed").empty()) {
      fail(f.where, ": tensors.pos_embed names a table, but \"table\" is \"sinusoidal\" (the converter computes it)");
    }
    P.table_name = "sinusoidal";
  }
  if (num_cls != 0) {
    int rows = 0, cols = D;
    const Array& c = fetch_rows(w, P.cls_name, "class tokens", &rows, &cols);
    if (num_cls >= 0 && rows != num_cls) {
      fail(w.where(), ": tensor '", P.cls_name, "' holds ", rows, " class token", rows == 1 ? "" : "s",
           ", the spec's num_cls is ", num_cls);
    }
    num_cls = rows;
    D = cols;
    P.cls = c.data;
  }
  P.num_cls = num_cls;
  if (D == 0) fail(f.where, ": missing field 'dim' (a sinusoidal table without class tokens has no width to read)");
  if (D > 16384) fail(f.where, ": dim ", D, " is above 16384");
  L->query_dim = L->key_dim = L->value_dim = L->output_dim = D;
  L->added_rows = num_cls;
}

void shell(const LayerInfo&, FloatLayer* L) { L->params.emplace<PositionsParams>(); }

LayerIo io(const FloatLayer&) { return LayerIo{false, 0}; }

// Rows the table must cover for max_q_len input rows.
void check_table(const FloatLayer& L, int rows) {
  const PositionsParams& P = L.as<PositionsParams>();
  if (!P.sinusoidal && rows > P.table_rows) {
    fail("layer '", L.name, "': the positional table '", P.table_name, "' has ", P.table_rows, " rows, ",
         rows - P.num_cls, " input rows + ", P.num_cls, " class rows need ", rows,
         " (lower max_q_len or give a longer table)");
  }
}

void forward_layer(const FloatLayer& L, const SampleInput& in, double* out, double*, RangeMap* ranges) {
  const PositionsParams& P = L.as<PositionsParams>();
  const int D = L.output_dim, nc = P.num_cls;
  const int rows = in.q_len + nc;
  check_table(L, rows);
  const int valid = in.valid >= 0 ? std::min(in.valid, in.q_len) : in.q_len;  // padded rows are not calibrated
  record(ranges, "query", in.query, in.q_len, D, D, valid);
  for (int r = 0; r < rows; ++r) {
    const double* src = r < nc ? P.cls.data() + static_cast<size_t>(r) * D : in.query + static_cast<size_t>(r - nc) * D;
    double* y = out + static_cast<size_t>(r) * D;
    for (int k = 0; k < D; ++k) y[k] = src[k] + P.pos(r, k, D);
  }
  record(ranges, "output", out, rows, D, D, nc + valid);
}

std::vector<std::string> value_points(const FloatLayer&) { return {"query", "output"}; }
std::vector<std::string> minmax_points(const FloatLayer&) { return {}; }

// The table's rows in the file: every output row at max_q_len.
int file_rows(const FloatLayer& L) {
  const int rows = L.max_q_len + L.as<PositionsParams>().num_cls;
  check_table(L, rows);
  return rows;
}

// The table's largest |P| in output steps of `scale`.
double table_peak(const PositionsParams& P, int rows, int D, double scale) {
  double top = 0.0;
  for (int r = 0; r < rows; ++r) {
    for (int k = 0; k < D; ++k) top = std::max(top, std::fabs(P.pos(r, k, D) / scale));
  }
  return top;
}

// The table in output steps of `scale` with `bits` fraction bits.
std::vector<int16_t> table_s16(const PositionsParams& P, int rows, int D, double scale, int bits) {
  std::vector<int16_t> table(static_cast<size_t>(rows) * D);
  for (int r = 0; r < rows; ++r) {
    for (int k = 0; k < D; ++k) {
      table[static_cast<size_t>(r) * D + k] = static_cast<int16_t>(std::nearbyint(P.pos(r, k, D) / scale * std::ldexp(1.0, bits)));
    }
  }
  return table;
}

// The class rows' outputs in output steps of `scale`, rounded half up as the
// contracts' (the caller adds its zero point and saturates).
std::vector<double> class_rows(const PositionsParams& P, int nc, int D, double scale) {
  std::vector<double> y(static_cast<size_t>(nc) * D);
  for (int r = 0; r < nc; ++r) {
    for (int k = 0; k < D; ++k) {
      y[static_cast<size_t>(r) * D + k] = std::floor((P.cls[static_cast<size_t>(r) * D + k] + P.pos(r, k, D)) / scale + 0.5);
    }
  }
  return y;
}

// The positions16 contract (requant.h; --residual int16 with a block after
// this layer): int16 output at the stream's scale, zero point 0; the largest
// shift n in [1, 16] for which A = round(s_in / s_out 2^n) < 2^22 and some
// table fraction bits b in [max(0, n - 13), n] keep every |P| <= 32767.
// input16 (positions16-in, int16 rows in at the stream's scale for "query"):
// n in [1, 30], b in [0, n], in 64-bit integers.
flatbuffers::Offset<void> write_s8_stream16(ModelWriter& w, const FloatLayer& L, const Calibrated& c) {
  const PositionsParams& P = L.as<PositionsParams>();
  const int D = L.output_dim, nc = P.num_cls, rows = file_rows(L);
  const ActQuantParams qi = L.input16 ? c.s16("query") : c("query"), qo = c.s16("output");
  const double top = table_peak(P, rows, D, qo.scale);
  int n = L.input16 ? kernels::kPositions16InMaxShift : kernels::kPositions16MaxShift, bits = -1;
  double a = 0.0;
  for (; n >= kernels::kPositions16MinShift; --n) {
    a = std::nearbyint(qi.scale / qo.scale * std::ldexp(1.0, n));
    if (!(a <= kernels::kPositionsMaxMultiplier)) continue;
    const int min_bits = L.input16 ? 0 : std::max(0, n - kernels::kPositions16MaxTableShift);
    for (int b = n; b >= min_bits; --b) {
      if (std::nearbyint(top * std::ldexp(1.0, b)) <= 32767.0) {
        bits = b;
        break;
      }
    }
    if (bits >= 0) break;
  }
  if (bits < 0) {
    fail(c.where, ": no int16 positions scaling fits: the input's step is ", qi.scale / qo.scale,
         " output steps and the positional table '", P.table_name, "' reaches ", top,
         " output steps (the output range is far narrower than the input's or the table's; check the calibration"
         " data)");
  }
  const std::vector<int16_t> table = table_s16(P, rows, D, qo.scale, bits);
  // The class rows' outputs, rounded half up and saturated as the contract's.
  flatbuffers::Offset<fb::Tensor> cls = 0;
  if (nc > 0) {
    const std::vector<double> y = class_rows(P, nc, D, qo.scale);
    std::vector<int16_t> q(y.size());
    for (size_t i = 0; i < y.size(); ++i) q[i] = static_cast<int16_t>(std::clamp(y[i], -32768.0, 32767.0));
    cls = w.TensorS16(P.cls_name, nc, D, q);
  }
  const auto t = w.TensorS16(P.table_name, rows, D, table);
  const auto fi = L.input16 ? w.Act16(qi) : w.Act(qi), fo = w.Act16(qo);
  return fb::CreatePositions(w.fbb(), static_cast<uint32_t>(D), static_cast<uint32_t>(nc),
                             static_cast<uint32_t>(rows), cls, t, fi, fo, static_cast<int32_t>(a), bits, true, n,
                             L.input16)
      .Union();
}

flatbuffers::Offset<void> write_s8(ModelWriter& w, const FloatLayer& L, const Calibrated& c) {
  if (L.output16) return write_s8_stream16(w, L, c);
  const PositionsParams& P = L.as<PositionsParams>();
  const int D = L.output_dim, nc = P.num_cls, rows = file_rows(L);
  const ActQuantParams qi = c("query"), qo = c("output");
  const double a = std::nearbyint(qi.scale / qo.scale * 65536.0);
  if (!(a <= kernels::kPositionsMaxMultiplier)) {
    fail(c.where, ": the input's step is ", qi.scale / qo.scale, " output steps (at most 64: the output range is",
         " far narrower than the input's; check the calibration data)");
  }
  // b: the most fraction bits (<= 16) that keep every |P| <= 32767.
  const double top = table_peak(P, rows, D, qo.scale);
  int bits = kernels::kPositionsMaxBits;
  while (bits >= kernels::kPositionsMinBits && std::nearbyint(top * std::ldexp(1.0, bits)) > 32767.0) --bits;
  if (bits < kernels::kPositionsMinBits) {
    fail(c.where, ": positional table '", P.table_name, "' reaches ", top,
         " output steps (at most 4095: the output range is far narrower than the table's)");
  }
  const std::vector<int16_t> table = table_s16(P, rows, D, qo.scale, bits);
  // The class rows' outputs, rounded half up and saturated as the contract's.
  flatbuffers::Offset<fb::Tensor> cls = 0;
  if (nc > 0) {
    const std::vector<double> y = class_rows(P, nc, D, qo.scale);
    std::vector<int8_t> q(y.size());
    for (size_t i = 0; i < y.size(); ++i) q[i] = static_cast<int8_t>(std::clamp(y[i] + qo.zero_point, -128.0, 127.0));
    cls = w.TensorS8(P.cls_name, {static_cast<uint32_t>(nc), static_cast<uint32_t>(D)}, nc, D, q.data(),
                     {static_cast<float>(qo.scale)});
  }
  const auto t = w.TensorS16(P.table_name, rows, D, table);
  const auto fi = w.Act(qi), fo = w.Act(qo);
  return fb::CreatePositions(w.fbb(), static_cast<uint32_t>(D), static_cast<uint32_t>(nc),
                             static_cast<uint32_t>(rows), cls, t, fi, fo, static_cast<int32_t>(a), bits)
      .Union();
}

flatbuffers::Offset<void> write_f32(ModelWriter& w, const FloatLayer& L) {
  const PositionsParams& P = L.as<PositionsParams>();
  const int D = L.output_dim, nc = P.num_cls, rows = file_rows(L);
  std::vector<double> table(static_cast<size_t>(rows) * D);
  for (int r = 0; r < rows; ++r) {
    for (int k = 0; k < D; ++k) table[static_cast<size_t>(r) * D + k] = P.pos(r, k, D);
  }
  flatbuffers::Offset<fb::Tensor> cls = 0;
  if (nc > 0) cls = w.TensorF32(P.cls_name, nc, D, P.cls.data());
  const auto t = w.TensorF32(P.table_name, rows, D, table.data());
  return fb::CreatePositions(w.fbb(), static_cast<uint32_t>(D), static_cast<uint32_t>(nc),
                             static_cast<uint32_t>(rows), cls, t)
      .Union();
}

void tensors(const fb::Layer& l, const std::string& name, std::vector<TensorEntry>* out) {
  const auto* p = l.options_as_Positions();
  if (p->cls() != nullptr) add_tensor(out, name, "cls", p->cls());
  add_tensor(out, name, "positions", p->table());
}

void inspect(const fb::Layer& l, const LayerInfo&, std::ostream& os) {
  const auto* p = l.options_as_Positions();
  os << "  " << p->num_cls() << " class row" << (p->num_cls() == 1 ? "" : "s") << " prepended, positional table "
     << p->table_rows() << " x " << p->dim() << " ('"
     << (p->table()->name() != nullptr ? p->table()->name()->c_str() : "") << "')\n";
}

void inspect_quant(const fb::Layer& l, std::ostream& os) {
  const auto* p = l.options_as_Positions();
  print_act(os, "input", p->input(), p->input16());
  print_act(os, "output", p->output(), p->output16());
  const int n = p->output16() ? p->shift() : 16;
  os << "      positions         A " << p->input_multiplier() << " (input step "
     << p->input_multiplier() / std::ldexp(1.0, n) << " output steps" << (p->output16() ? ", shift " : "")
     << (p->output16() ? std::to_string(n) : std::string()) << "), table int16 with " << p->pos_bits()
     << " fraction bits" << (p->output16() ? "; output int16 (the residual stream)" : "")
     << (p->input16() ? "; input int16 (the stream's entry, 64-bit contract)" : "") << "\n";
}

// The kind's traits, by name (the rest keep KindModule's defaults).
KindModule module() {
  KindModule m = kind_identity(EA_LAYER_POSITIONS);
  m.fields = {"dim", "num_cls", "table"};
  m.tensor_fields = {"cls_token", "pos_embed"};
  m.resolve = resolve;
  m.shell = shell;
  m.io = io;
  m.forward = forward_layer;
  m.value_points = value_points;
  m.minmax_points = minmax_points;
  m.write_s8 = write_s8;
  m.write_f32 = write_f32;
  m.tensors = tensors;
  m.inspect = inspect;
  m.inspect_quant = inspect_quant;
  return m;
}

}  // namespace positions_module
}  // namespace

namespace kinds {
const KindModule kind_positions = positions_module::module();
}  // namespace kinds

}  // namespace convert
}  // namespace edgeattn
