#include "converter/model/float_reference.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "converter/kinds/kind.h"

namespace edgeattn {
namespace convert {
namespace {

// ---------------------------------------------------------------------------
// Numerics. Every sum of products here is the plain loop
//   acc = start (a bias, or 0.0); for k in 0..depth-1: acc += a[k] * b[k]
// in that order, each product rounded to double and then added (no fused
// multiply-add: the converter is built with -ffp-contract=off, see
// converter/CMakeLists.txt, so `acc += w * x` stays a multiply and an add),
// so results are bit for bit those of the plain loop on every machine
// (tests/converter/float_reference_test.cc checks it). What makes it fast is
// only which independent sums advance together: a tile of R rows x C blocks of
// 8 outputs is kept in vector registers while k runs. A vector lane is one
// IEEE double operation whatever instruction carries it (2 doubles a register
// on SSE2 and NEON, 4 on AVX2, 8 on AVX-512), and no sum is split or
// reordered, so the tile shape and width chosen per instruction set change
// speed, never bits.
// ---------------------------------------------------------------------------

// Vectors of 2, 4 and 8 doubles (GCC/Clang vector extension); each kernel
// below uses the machine's own width (a wider generic vector is split by the
// compiler through memory, which is slow).
typedef double v2d __attribute__((vector_size(16)));
typedef double v4d __attribute__((vector_size(32)));
typedef double v8d __attribute__((vector_size(64)));

#define EA_ALWAYS_INLINE inline __attribute__((always_inline))

// (By pointer: a vector returned by value is an ABI question, -Wpsabi.)
template <class V>
EA_ALWAYS_INLINE void load(V* v, const double* p) {
  std::memcpy(v, p, sizeof *v);
}

// y[r][n] = start[n] + sum over k in order of x[r][k] * w(k, n) for r < rows
// and n < 8 * blocks, where w(k, n) = w[(n / 8) * w_block + k * w_stride + n % 8]:
// W in column blocks of 8 (a transposed weight matrix in stripes of 8 outputs,
// or a row-major matrix with w_block = 8).
struct Gemm {
  int rows = 0, depth = 0, blocks = 0;
  const double* x = nullptr;
  size_t x_stride = 0;
  const double* w = nullptr;
  size_t w_stride = 0, w_block = 0;
  const double* start = nullptr;  // [8 * blocks], or null: every sum starts at 0.0
  double* y = nullptr;
  size_t y_stride = 0;
};

// Rows r0..r0+R-1 x column blocks b0..b0+C-1, each row as N vectors V of L
// doubles.
template <class V, int R, int C>
EA_ALWAYS_INLINE void gemm_tile(const Gemm& g, int r0, int b0) {
  constexpr int L = static_cast<int>(sizeof(V) / sizeof(double));
  constexpr int N = C * 8 / L;
  static_assert(8 % L == 0, "a block of 8 is whole vectors");
  V acc[R][N];
  for (int n = 0; n < N; ++n) {
    V s = {};
    if (g.start != nullptr) load(&s, g.start + static_cast<size_t>(b0) * 8 + n * L);
    for (int r = 0; r < R; ++r) acc[r][n] = s;
  }
  const double* x = g.x + static_cast<size_t>(r0) * g.x_stride;
  const double* w = g.w + static_cast<size_t>(b0) * g.w_block;
  for (int k = 0; k < g.depth; ++k) {
    V wk[N];
    for (int n = 0; n < N; ++n) {
      load(&wk[n], w + static_cast<size_t>(n * L / 8) * g.w_block + static_cast<size_t>(k) * g.w_stride + n * L % 8);
    }
    for (int r = 0; r < R; ++r) {
      // x[r][k] in every lane (x - 0.0 is x exactly, -0.0 included).
      const V xb = x[static_cast<size_t>(r) * g.x_stride + k] - V{};
      for (int n = 0; n < N; ++n) acc[r][n] += wk[n] * xb;
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int n = 0; n < N; ++n) {
      std::memcpy(g.y + static_cast<size_t>(r0 + r) * g.y_stride + static_cast<size_t>(b0) * 8 + n * L, &acc[r][n],
                  sizeof(V));
    }
  }
}

// The whole product in R x C tiles; rows left over in 1 x C1 tiles. Rows are
// taken 64 at a time so that their x stays in cache while W's blocks pass.
template <class V, int R, int C, int C1>
EA_ALWAYS_INLINE void gemm_tiles(const Gemm& g) {
  constexpr int kRowBlock = 64;
  static_assert(kRowBlock % R == 0, "row block holds whole tiles");
  for (int rb = 0; rb < g.rows; rb += kRowBlock) {
    const int re = std::min(g.rows, rb + kRowBlock);
    const int full = rb + (re - rb) / R * R;
    int b = 0;
    for (; b + C <= g.blocks; b += C) {
      for (int r = rb; r < full; r += R) gemm_tile<V, R, C>(g, r, b);
    }
    for (; b < g.blocks; ++b) {
      for (int r = rb; r < full; r += R) gemm_tile<V, R, 1>(g, r, b);
    }
    for (int r = full; r < re; ++r) {
      b = 0;
      for (; b + C1 <= g.blocks; b += C1) gemm_tile<V, 1, C1>(g, r, b);
      for (; b < g.blocks; ++b) gemm_tile<V, 1, 1>(g, r, b);
    }
  }
}

// Tile shapes per instruction set: 8 vector accumulators of the machine's
// width plus W's loads fit in its registers (AVX-512 4 rows x 16 outputs,
// AVX2 4 x 8, SSE2 / NEON 2 x 8).
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("avx512f"))) void gemm_avx512(const Gemm& g) { gemm_tiles<v8d, 4, 2, 4>(g); }
__attribute__((target("avx2"))) void gemm_avx2(const Gemm& g) { gemm_tiles<v4d, 4, 1, 2>(g); }
void gemm_baseline(const Gemm& g) { gemm_tiles<v2d, 2, 1, 1>(g); }
// The widest the machine has. EA_CONVERT_GEMM=baseline|avx2|avx512 picks one
// the machine has instead (anything else is ignored): the tests run each,
// since the bits must not depend on which ran.
using GemmFn = void (*)(const Gemm&);
GemmFn pick_gemm() {
  const bool avx512 = __builtin_cpu_supports("avx512f"), avx2 = __builtin_cpu_supports("avx2");
  if (const char* forced = std::getenv("EA_CONVERT_GEMM")) {
    if (std::strcmp(forced, "baseline") == 0) return gemm_baseline;
    if (std::strcmp(forced, "avx2") == 0 && avx2) return gemm_avx2;
    if (std::strcmp(forced, "avx512") == 0 && avx512) return gemm_avx512;
  }
  return avx512 ? gemm_avx512 : avx2 ? gemm_avx2 : gemm_baseline;
}
void gemm(const Gemm& g) {
  static const GemmFn run = pick_gemm();
  run(g);
}
#else
void gemm(const Gemm& g) { gemm_tiles<v2d, 2, 1, 1>(g); }
#endif

}  // namespace

// y[r][c] = sum over k in order of x[r][k] * w[k][c] from 0.0, for r < rows,
// c < width; w row-major with row stride w_stride.
void matmul(int rows, int depth, const double* x, size_t x_stride, const double* w, size_t w_stride, int width,
            double* y, size_t y_stride) {
  Gemm g;
  g.rows = rows;
  g.depth = depth;
  g.blocks = width / 8;
  g.x = x;
  g.x_stride = x_stride;
  g.w = w;
  g.w_stride = w_stride;
  g.w_block = 8;
  g.y = y;
  g.y_stride = y_stride;
  gemm(g);
  for (int r = 0; r < rows; ++r) {  // columns outside the blocks of 8: the plain loop
    const double* xr = x + static_cast<size_t>(r) * x_stride;
    for (int c = g.blocks * 8; c < width; ++c) {
      double acc = 0.0;
      for (int k = 0; k < depth; ++k) acc += xr[k] * w[static_cast<size_t>(k) * w_stride + c];
      y[static_cast<size_t>(r) * y_stride + c] = acc;
    }
  }
}

// y [rows][out] = x [rows][in] W^T + b: y[r][n] = b[n] (or 0.0) + sum over k
// in order of w[n][k] * x[r][k], from W transposed into stripes of 8 outputs
// ([out/8][in][8], made once per layer: FloatLinear::stripes).
void linear(const FloatLinear& l, const double* x, int rows, double* y) {
  const int in = l.in, out = l.out, out8 = out / 8 * 8;
  std::vector<double>& wt = l.stripes;
  if (wt.size() != static_cast<size_t>(out8) * in) {
    wt.assign(static_cast<size_t>(out8) * in, 0.0);
    for (int n = 0; n < out8; ++n) {
      double* stripe = wt.data() + static_cast<size_t>(n / 8) * in * 8 + n % 8;
      for (int k = 0; k < in; ++k) stripe[static_cast<size_t>(k) * 8] = l.w[static_cast<size_t>(n) * in + k];
    }
  }
  Gemm g;
  g.rows = rows;
  g.depth = in;
  g.blocks = out8 / 8;
  g.x = x;
  g.x_stride = static_cast<size_t>(in);
  g.w = wt.data();
  g.w_stride = 8;
  g.w_block = static_cast<size_t>(in) * 8;
  g.start = l.b.empty() ? nullptr : l.b.data();
  g.y = y;
  g.y_stride = static_cast<size_t>(out);
  gemm(g);
  for (int r = 0; r < rows; ++r) {  // outputs outside the stripes: the plain loop
    const double* xr = x + static_cast<size_t>(r) * in;
    for (int n = out8; n < out; ++n) {
      const double* wr = l.w.data() + static_cast<size_t>(n) * in;
      double acc = l.b.empty() ? 0.0 : l.b[static_cast<size_t>(n)];
      for (int k = 0; k < in; ++k) acc += wr[k] * xr[k];
      y[static_cast<size_t>(r) * out + n] = acc;
    }
  }
}

std::vector<double> linear(const FloatLinear& l, const double* x, int rows) {
  std::vector<double> y(static_cast<size_t>(rows) * l.out);
  linear(l, x, rows, y.data());
  return y;
}

void record(RangeMap* ranges, const char* key, const double* x, int rows, int cols, int stride,
            int first_row_excluded) {
  if (ranges == nullptr) return;
  Range& r = (*ranges)[key];
  const int n = std::min(rows, first_row_excluded);
  for (int i = 0; i < n; ++i) {
    for (int c = 0; c < cols; ++c) r.add(x[static_cast<size_t>(i) * stride + c]);
  }
  if (r.keep_columns) {
    if (r.column_absmax.size() < static_cast<size_t>(cols)) r.column_absmax.resize(static_cast<size_t>(cols), 0.0);
    for (int i = 0; i < n; ++i) {
      for (int c = 0; c < cols; ++c) {
        const double a = std::fabs(x[static_cast<size_t>(i) * stride + c]);
        if (a > r.column_absmax[c]) r.column_absmax[c] = a;  // NaN never compares greater
      }
    }
  }
}

// out[c] = sum over j = 0..n-1, in order, of coeff[j] * rows[j * stride + c]
// for c < width, each sum from 0.0.
void weighted_row_sum(int n, const double* coeff, const double* rows, size_t stride, int width,
                      double* out) {
  matmul(1, n, coeff, 0, rows, stride, width, out, 0);
}

// Softmax over s[0..n) in place.
void softmax(double* s, int n) {
  if (n <= 0) return;
  double m = s[0];
  for (int j = 1; j < n; ++j) m = std::max(m, s[j]);
  double sum = 0.0;
  for (int j = 0; j < n; ++j) sum += (s[j] = std::exp(s[j] - m));
  for (int j = 0; j < n; ++j) s[j] /= sum;
}

int row_limit(const FloatLayer& layer, int row, int q_len, int kv_len, int valid) {
  int limit = valid >= 0 && valid < kv_len ? valid : kv_len;
  if (layer.mask == MaskKind::kCausal) {
    const int c = row + 1 + (kv_len - q_len);
    if (c < limit) limit = std::max(c, 0);
  }
  return limit;
}

size_t output_size(const FloatLayer& L, const SampleInput& in) {
  return static_cast<size_t>(L.output_rows(in.q_len)) * L.output_dim;
}

size_t weights_size(const FloatLayer& L, const SampleInput& in) {
  const LayerIo io = L.io();
  const int lq = L.learned_query() ? 1 : in.q_len;
  const int lk = io.keys ? in.kv_len : in.q_len;
  return static_cast<size_t>(io.heads) * lq * lk;
}

void forward(const FloatLayer& L, const SampleInput& in, std::vector<double>* out,
             std::vector<double>* weights, RangeMap* ranges) {
  out->resize(output_size(L, in));
  if (weights != nullptr) weights->resize(weights_size(L, in));
  forward(L, in, out->data(), weights != nullptr ? weights->data() : nullptr, ranges);
}

void forward(const FloatLayer& L, const SampleInput& in, double* out, double* weights, RangeMap* ranges) {
  L.kind->forward(L, in, out, weights, ranges);
}

AttentionFrame::AttentionFrame(const FloatLayer& layer, const SampleInput& in, double* w, RangeMap* r)
    : L(layer), weights(w), ranges(r) {
  const bool learned = L.learned_query();
  const bool self = !L.io().keys;
  lq = learned ? 1 : in.q_len;
  key = self ? in.query : in.key;
  lk = self ? in.q_len : in.kv_len;
  value = self ? in.query : (in.value != nullptr ? in.value : key);
  valid = in.valid >= 0 ? std::min(in.valid, lk) : lk;
  // Query-side rows to record: self-attention with key padding skips padded rows.
  q_rec = (self && L.mask == MaskKind::kKeyPadding) ? valid : lq;
  s.assign(static_cast<size_t>(std::max(lk, 1)), 0.0);
  if (!learned) record(ranges, "query", in.query, lq, L.query_dim, L.query_dim, q_rec);
  if (!self) {
    record(ranges, "key", key, lk, L.key_dim, L.key_dim, valid);
    if (in.value != nullptr) record(ranges, "value", value, lk, L.value_dim, L.value_dim, valid);
  }
}

void AttentionFrame::store_weights(int h, int r, const double* p, int limit) const {
  if (weights == nullptr) return;
  double* row = weights + (static_cast<size_t>(h) * lq + r) * lk;
  std::memcpy(row, p, static_cast<size_t>(limit) * sizeof(double));
  std::fill(row + limit, row + lk, 0.0);
}

void AttentionFrame::attend(int h, int r, int limit, const double* vals, int v_stride, int v_dim, double* ctx_row) {
  softmax(s.data(), limit);
  // ctx_row[c] = sum over j in order of s[j] * v[j][c].
  weighted_row_sum(limit, s.data(), vals, static_cast<size_t>(v_stride), v_dim, ctx_row);
  store_weights(h, r, s.data(), limit);
}

}  // namespace convert
}  // namespace edgeattn
