// The building blocks of the AVX2 int8 linear (qs8_linear__avx2,
// qs8_linear_res__avx2 and the VNNI paths reuse them). int8 weights are in the packed K4N16 layout
// (packed_weights.h): one 64-byte group holds 16 channels x 4 inputs. AVX2
// has no 8-bit dot product that is exact (vpmaddubsw saturates), so a group is
// widened to int16 16 bytes (4 channels x 4 inputs) at a time and multiplied
// with vpmaddwd against the row's 4 inputs repeated (x0 x1 x2 x3 as int16,
// one 64-bit broadcast): each int32 lane gets w0 x0 + w1 x1 or w2 x2 + w3 x3
// of one channel (a pair of products is at most 2 * 128 * 128 = 32768, exact).
// The two partial sums of a channel are added once, after the whole K loop.
// Requantization is exact and vectorised (avx2_common.h). The accumulation is
// a parameter so the AVX-VNNI path reuses the driver, tails and requantization,
// and the epilogue after the requantization a template parameter, so
// qs8_linear and qs8_linear_res (the residual added, contract 5b) share the
// loops.
#include <cstring>

#include "isa/x86/avx2_common.h"
#include "edgeattn/kernels/packed_weights.h"
#include "edgeattn/kernels/requant.h"

#include "isa/x86/x86.h"

namespace edgeattn {
namespace kernels {

using namespace avx2;  // NOLINT(build/namespaces)

namespace {

// The last, partial group of 4 inputs of a row as one int32 word (bytes past
// in_features are zero), so no load reads past the row.
inline int32_t tail_word(const int8_t* xr, int k0, int in_features) {
  int32_t word = 0;
  std::memcpy(&word, xr + k0, static_cast<size_t>(in_features - k0));
  return word;
}

inline __m256i x4_s16(int32_t word) {  // x0 x1 x2 x3 as int16, repeated 4 times
  return _mm256_set1_epi64x(_mm_cvtsi128_si64(_mm_cvtepi8_epi16(_mm_cvtsi32_si128(word))));
}

// acc[r][0..16) for R rows against one 16-channel block.
template <int R>
void block_avx2(int in_features, const int8_t* x, int x_stride, const int8_t* wb, int32_t* acc,
                int acc_stride) {
  const int groups = in_features / 4;
  __m256i a[R][4];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < 4; ++c) a[r][c] = _mm256_setzero_si256();
  const int8_t* xr[R];
  for (int r = 0; r < R; ++r) xr[r] = x + static_cast<ptrdiff_t>(r) * x_stride;
  // One group: xv[r] = the row's 4 inputs as int16, repeated.
  // One weight vector live at a time: with the 8 accumulators and the rows'
  // inputs, four would need more than the 16 ymm registers. The empty asm
  // keeps each accumulator in its register from step to step: without it GCC
  // 12 re-associated the adds of the four unrolled groups into a tree of 32
  // live products and spilled half of them to the stack (~13 % slower than
  // format 1's row kernel on Zen 5).
  auto step = [&](const int8_t* wg, const __m256i* xv) {
    for (int c = 0; c < 4; ++c) {
      const __m256i wv = load16_s16(wg + 16 * c);
      for (int r = 0; r < R; ++r) {
        a[r][c] = _mm256_add_epi32(a[r][c], _mm256_madd_epi16(xv[r], wv));
        __asm__("" : "+x"(a[r][c]));
      }
    }
  };
  // Four groups per 16-byte input load: widened once, each group's 4 inputs
  // broadcast with one VPERMQ (a per-group scalar load and broadcast took
  // ~10 % of the kernel).
  int g = 0;
  for (; g + 4 <= groups; g += 4) {
    __m256i x16[R], xv[R];
    for (int r = 0; r < R; ++r) x16[r] = load16_s16(xr[r] + 4 * g);
    for (int r = 0; r < R; ++r) xv[r] = _mm256_permute4x64_epi64(x16[r], 0x00);
    step(wb + 64 * g, xv);
    for (int r = 0; r < R; ++r) xv[r] = _mm256_permute4x64_epi64(x16[r], 0x55);
    step(wb + 64 * (g + 1), xv);
    for (int r = 0; r < R; ++r) xv[r] = _mm256_permute4x64_epi64(x16[r], 0xAA);
    step(wb + 64 * (g + 2), xv);
    for (int r = 0; r < R; ++r) xv[r] = _mm256_permute4x64_epi64(x16[r], 0xFF);
    step(wb + 64 * (g + 3), xv);
  }
  for (; g < groups; ++g) {
    __m256i xv[R];
    for (int r = 0; r < R; ++r) {
      int32_t word;
      std::memcpy(&word, xr[r] + 4 * g, 4);
      xv[r] = x4_s16(word);
    }
    step(wb + 64 * g, xv);
  }
  if (4 * groups < in_features) {
    __m256i xv[R];
    for (int r = 0; r < R; ++r) xv[r] = x4_s16(tail_word(xr[r], 4 * groups, in_features));
    step(wb + 64 * groups, xv);
  }
  for (int r = 0; r < R; ++r) {
    // a[r][c] lanes: channel 4c..4c+3, two partial sums each. hadd adds the
    // pairs (within 128-bit halves); the permute puts the channels in order.
    const __m256i lo = _mm256_permute4x64_epi64(_mm256_hadd_epi32(a[r][0], a[r][1]), 0xD8);
    const __m256i hi = _mm256_permute4x64_epi64(_mm256_hadd_epi32(a[r][2], a[r][3]), 0xD8);
    int32_t* ar = acc + static_cast<ptrdiff_t>(r) * acc_stride;
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(ar), lo);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(ar + 8), hi);
  }
}

}  // namespace

void qs8_linear_acc__avx2(int rows, int blocks, int in_features, const int8_t* x, int x_stride,
                          const int8_t* w, int32_t* acc, int acc_stride) {
  const size_t block_bytes = packed_block_bytes(in_features);
  for (int b = 0; b < blocks; ++b) {
    const int8_t* wb = w + static_cast<ptrdiff_t>(b) * static_cast<ptrdiff_t>(block_bytes);
    int r = 0;
    for (; r + 2 <= rows; r += 2) {  // 2 rows x 16 channels: 8 accumulators + 4 weights
      block_avx2<2>(in_features, x + static_cast<ptrdiff_t>(r) * x_stride, x_stride, wb,
                    acc + static_cast<ptrdiff_t>(r) * acc_stride + 16 * b, acc_stride);
    }
    if (r < rows) {
      block_avx2<1>(in_features, x + static_cast<ptrdiff_t>(r) * x_stride, x_stride, wb,
                    acc + static_cast<ptrdiff_t>(r) * acc_stride + 16 * b, acc_stride);
    }
  }
}

namespace {

// The driver's epilogues: what becomes of 8 requantized sums y (requantize()
// of requant.h, int32) of output row m, channels n..n+7: the int8 results,
// in order, in the low 8 bytes. `count` (1..8) of them are real outputs.
// Plain qs8_linear: sat8(clamp(y, -512, 512) + zp).
struct PlainEpilogue {
  __m128i zp16;
  __m128i operator()(__m256i y, int /*m*/, int /*n*/, int /*count*/) const { return add_zp_sat8(y, zp16); }
};

// qs8_linear_res (contract 5b): sat8((clamp(y, -2^29, 2^29) + A a + C) >>
// term.shift) with a the residual's int8 at (m, n). The sum fits int32
// (requant.h), so 32-bit lanes are exact; packing through int16 with
// saturation gives sat8.
struct ResidualEpilogue {
  const int8_t* res;
  int res_stride;
  __m256i mult, offset, lo, hi;
  __m128i shift;
  explicit ResidualEpilogue(const QS8Residual& r)
      : res(r.res),
        res_stride(r.res_stride),
        mult(_mm256_set1_epi32(r.term.mult)),
        offset(_mm256_set1_epi32(residual_offset(r.term))),
        lo(_mm256_set1_epi32(-kResidualClamp)),
        hi(_mm256_set1_epi32(kResidualClamp)),
        shift(_mm_cvtsi32_si128(r.term.shift)) {}
  __m128i operator()(__m256i y, int m, int n, int count) const {
    const int8_t* a = res + static_cast<ptrdiff_t>(m) * res_stride + n;
    __m128i a8;
    if (count >= 8) {
      a8 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(a));
    } else {  // the row's last channels: read none past them
      int64_t word = 0;
      std::memcpy(&word, a, static_cast<size_t>(count));
      a8 = _mm_cvtsi64_si128(word);
    }
    const __m256i t = _mm256_add_epi32(_mm256_max_epi32(_mm256_min_epi32(y, hi), lo),
                                       _mm256_add_epi32(_mm256_mullo_epi32(_mm256_cvtepi8_epi32(a8), mult), offset));
    const __m256i v = _mm256_sra_epi32(t, shift);
    const __m128i v16 = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    return _mm_packs_epi16(v16, v16);
  }
};

// qs8_linear_res16 (contract 5c): sat16((clamp(y, -2^29, 2^29) + A a +
// 2^(n-1)) >> n) with a the residual's int16 at (m, n). A a + 2^(n-1) is one
// VPMADDWD of the pairs (a, 1) and (A, 2^(n-1)) (both pairs int16: A <= 2^13,
// 2^(n-1) <= 2^12; the products are exact and never the -32768 x -32768 x 2
// that VPMADDWD wraps); the sum fits int32 (requant.h); VPACKSSDW is sat16.
// Returns the 8 int16 results in order.
struct Residual16Epilogue {
  const int16_t* res;
  int res_stride;
  __m256i coef, lo, hi;
  __m128i shift, ones;
  explicit Residual16Epilogue(const QS16Residual& r)
      : res(r.res),
        res_stride(r.res_stride),
        coef(_mm256_set1_epi32(static_cast<int32_t>((static_cast<uint32_t>(1u << (r.term.shift - 1)) << 16) |
                                                    static_cast<uint32_t>(r.term.mult)))),
        lo(_mm256_set1_epi32(-kResidual16Clamp)),
        hi(_mm256_set1_epi32(kResidual16Clamp)),
        shift(_mm_cvtsi32_si128(r.term.shift)),
        ones(_mm_set1_epi16(1)) {}
  __m128i operator()(__m256i y, int m, int n, int count) const {
    const int16_t* a = res + static_cast<ptrdiff_t>(m) * res_stride + n;
    __m128i a16;
    if (count >= 8) {
      a16 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a));
    } else {  // the row's last channels: read none past them
      alignas(16) int16_t tmp[8] = {};
      std::memcpy(tmp, a, sizeof(int16_t) * static_cast<size_t>(count));
      a16 = _mm_load_si128(reinterpret_cast<const __m128i*>(tmp));
    }
    const __m256i pairs = _mm256_set_m128i(_mm_unpackhi_epi16(a16, ones), _mm_unpacklo_epi16(a16, ones));
    const __m256i t = _mm256_add_epi32(_mm256_max_epi32(_mm256_min_epi32(y, hi), lo), _mm256_madd_epi16(pairs, coef));
    const __m256i v = _mm256_sra_epi32(t, shift);
    return _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  }
};

// The driver's stores: 8 results in the low 8 (int8) or all 16 (int16)
// bytes of v, or the first count < 8 of them.
inline void store_out8(int8_t* p, __m128i v) { store8(p, v); }
inline void store_out8(int16_t* p, __m128i v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v); }

// Rows in blocks of 4, channels in chunks of 64 (4 packed blocks): the acc
// function fills a 4 x 64 int32 tile, then each row is requantized 8 lanes at
// a time and handed to the epilogue. The last chunk's bias and
// requantization constants are copied into padded arrays so no vector load
// reads past out_features.
template <class Epilogue, class Out>
void linear_driver(Qs8LinearAccFn acc_fn, int rows, int out_features, int in_features,
                   const int8_t* x, int x_stride, const int8_t* w, const int32_t* bias,
                   const int32_t* mult, const int32_t* shift, int per_channel,
                   const Epilogue epilogue, Out* y, int y_stride) {
  constexpr int kChunk = 64;
  constexpr int kRowBlock = kLinearAccMaxRows;
  const size_t block_bytes = packed_block_bytes(in_features);
  const Rq8 rq0 = rq8_uniform(mult[0], shift[0]);
  alignas(32) int32_t acc[kRowBlock][kChunk];
  alignas(32) int32_t tail_bias[kChunk], tail_mult[kChunk], tail_shift[kChunk];
  for (int m = 0; m < rows; m += kRowBlock) {
    const int nr = rows - m >= kRowBlock ? kRowBlock : rows - m;
    const int8_t* xr = x + static_cast<ptrdiff_t>(m) * x_stride;
    for (int n0 = 0; n0 < out_features; n0 += kChunk) {
      const int cnt = out_features - n0 < kChunk ? out_features - n0 : kChunk;
      const int blocks = (cnt + kPackN - 1) / kPackN;
      acc_fn(nr, blocks, in_features, xr, x_stride,
             w + static_cast<ptrdiff_t>(n0 / kPackN) * static_cast<ptrdiff_t>(block_bytes),
             &acc[0][0], kChunk);
      const int32_t* b = bias + n0;
      const int32_t* mu = per_channel ? mult + n0 : mult;
      const int32_t* sh = per_channel ? shift + n0 : shift;
      const int vec = (cnt + 7) / 8 * 8;
      if (vec > cnt) {  // pad the last chunk's constants to whole vectors
        std::memset(tail_bias, 0, sizeof tail_bias);
        std::memcpy(tail_bias, b, sizeof(int32_t) * static_cast<size_t>(cnt));
        b = tail_bias;
        if (per_channel) {
          for (int i = 0; i < vec; ++i) {
            tail_mult[i] = mu[i < cnt ? i : 0];
            tail_shift[i] = sh[i < cnt ? i : 0];
          }
          mu = tail_mult;
          sh = tail_shift;
        }
      }
      for (int r = 0; r < nr; ++r) {
        Out* yr = y + static_cast<ptrdiff_t>(m + r) * y_stride + n0;
        for (int i = 0; i < cnt; i += 8) {
          const __m256i s = _mm256_add_epi32(
              _mm256_load_si256(reinterpret_cast<const __m256i*>(acc[r] + i)),
              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + i)));
          const __m256i yq = per_channel ? requantize_x8(s, rq8_per_lane(mu + i, sh + i))
                                         : requantize_x8(s, rq0);
          const __m128i y8 = epilogue(yq, m + r, n0 + i, cnt - i);
          if (cnt - i >= 8) {
            store_out8(yr + i, y8);
          } else {
            alignas(16) uint8_t tmp[16];
            _mm_store_si128(reinterpret_cast<__m128i*>(tmp), y8);
            std::memcpy(yr + i, tmp, sizeof(Out) * static_cast<size_t>(cnt - i));
          }
        }
      }
    }
  }
}

}  // namespace

void qs8_linear_with__avx2(Qs8LinearAccFn acc_fn, int rows, int out_features, int in_features,
                           const int8_t* x, int x_stride, const int8_t* w, const int32_t* bias,
                           const int32_t* mult, const int32_t* shift, int per_channel,
                           int32_t y_zp, int8_t* y, int y_stride) {
  const PlainEpilogue epilogue = {_mm_set1_epi16(static_cast<int16_t>(y_zp))};
  linear_driver(acc_fn, rows, out_features, in_features, x, x_stride, w, bias, mult, shift, per_channel,
                epilogue, y, y_stride);
}

void qs8_linear_res_with__avx2(Qs8LinearAccFn acc_fn, int rows, int out_features, int in_features,
                               const int8_t* x, int x_stride, const int8_t* w, const int32_t* bias,
                               const int32_t* mult, const int32_t* shift, int per_channel,
                               const QS8Residual& res, int8_t* y, int y_stride) {
  const ResidualEpilogue epilogue(res);
  linear_driver(acc_fn, rows, out_features, in_features, x, x_stride, w, bias, mult, shift, per_channel,
                epilogue, y, y_stride);
}

void qs8_linear_res16_with__avx2(Qs8LinearAccFn acc_fn, int rows, int out_features, int in_features,
                                 const int8_t* x, int x_stride, const int8_t* w, const int32_t* bias,
                                 const int32_t* mult, const int32_t* shift, int per_channel,
                                 const QS16Residual& res, int16_t* y, int y_stride) {
  const Residual16Epilogue epilogue(res);
  linear_driver(acc_fn, rows, out_features, in_features, x, x_stride, w, bias, mult, shift, per_channel,
                epilogue, y, y_stride);
}

}  // namespace kernels
}  // namespace edgeattn
