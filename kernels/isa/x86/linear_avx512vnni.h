// int8 linear with AVX512-VNNI on zmm: a GEMM microkernel over the packed
// K4N16 weights (packed_weights.h). Compiled with -mavx512f -mavx512bw
// -mavx512vl -mavx512vnni; reached only after cpu_supports(kAvx512Vnni).
//
// Register tile: up to 8 rows x 32 output channels (two 16-channel blocks),
// 16 zmm accumulators whose lanes are output channels. One step of 4 inputs:
// two 64-byte weight loads (16 channels x 4 inputs each) and, per row, one
// VPDPBUSD per block with the row's 4 input bytes broadcast from memory
// ({1to16}). VPDPBUSD multiplies unsigned by signed bytes, so the weights are
// the unsigned operand, offset by 128 (w ^ 0x80 = w + 128):
//   sum_k (w_k + 128) x_k = sum_k w_k x_k + 128 sum_k x_k,
// and 128 times the row's input sum is subtracted before requantization. No
// horizontal sums, no repacking. VPDPBUSD wraps (no saturation), like the
// reference's int32 sum, so the result is exact whenever that sum fits int32
// (which Model::Load guarantees for every bias and in_features).
//
// Requantization is requantize() of requant.h on 16 lanes (avx512_common.h),
// followed by an epilogue (a template parameter, so qs8_linear and
// qs8_linear_res share the loops): requantize_s8()'s zero point, or the
// residual of contract 5b. Channel tails use masks.
//
// Header-only, for the variants (qs8-linear*-avx512vnni.cc, and the AMX ones
// through linear_amx.h, same flags plus AMX): internal linkage, as every x86
// helper header, so no copy can reach a file compiled with other flags.
#ifndef EDGEATTN_KERNELS_ISA_X86_LINEAR_AVX512VNNI_H_
#define EDGEATTN_KERNELS_ISA_X86_LINEAR_AVX512VNNI_H_

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "isa/x86/avx512_common.h"
#include "edgeattn/kernels/packed_weights.h"
#include "edgeattn/kernels/ref.h"

namespace edgeattn {
namespace kernels {
namespace {

using avx512::bcast_word;
using avx512::make_rq16;
using avx512::requantize_clamp_x16;
using avx512::requantize_s8_x16;
using avx512::Rq16;

constexpr int kMaxRows = 8;

struct Job {
  int out_features, in_features;
  const int8_t* x; int x_stride;
  const int32_t* bias; const int32_t* mult; const int32_t* shift; int per_channel;
  int8_t* y; int y_stride;
};

// The epilogues: the int8 outputs of 16 sums s (bias added) of row m,
// channels n0.. (lanes in `mask` are real outputs). Passed by value, so
// their vectors stay in registers across the tile's stores.
// Plain qs8_linear: requantize_s8() of requant.h.
struct PlainEpilogue {
  static constexpr bool kInt16Out = false;
  __m512i zp;
  __m128i operator()(__m512i s, const Rq16& q, int /*m*/, int /*n0*/, __mmask16 /*mask*/) const {
    return requantize_s8_x16(s, q, zp);
  }
};

// qs8_linear_res (contract 5b): sat8((clamp(requantize(s), -2^29, 2^29) +
// A a + C) >> term.shift), a = the residual's int8 at (m, n0 + lane). The sum
// fits int32 (requant.h), VPMOVSDB saturates to int8.
struct ResidualEpilogue {
  static constexpr bool kInt16Out = false;
  const int8_t* res;
  int res_stride;
  __m512i mult, offset;
  __m128i shift;
  __m128i operator()(__m512i s, const Rq16& q, int m, int n0, __mmask16 mask) const {
    const int8_t* ar = res + static_cast<ptrdiff_t>(m) * res_stride + n0;
    const __m512i a = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(mask, ar));
    const __m512i t = _mm512_add_epi32(requantize_clamp_x16(s, q, kResidualClamp),
                                       _mm512_add_epi32(_mm512_mullo_epi32(a, mult), offset));
    return _mm512_cvtsepi32_epi8(_mm512_sra_epi32(t, shift));
  }
};

// qs8_linear_res16 (contract 5c): sat16((clamp(requantize(s), -2^29, 2^29) +
// A a + 2^(n-1)) >> n), a = the residual's int16 at (m, n0 + lane), the
// int16 results stored by the tile through y/y_stride here (the Job's int8
// y is unused). A a + 2^(n-1) is one VPMADDWD of the pairs (a, 1) and
// (A, 2^(n-1)), both int16 (requant.h); the sum fits int32, VPMOVSDW
// saturates to int16.
struct Residual16Epilogue {
  static constexpr bool kInt16Out = true;  // stores through y / y_stride below
  const int16_t* res;
  int res_stride;
  __m512i coef;
  __m128i shift;
  int16_t* y;
  int y_stride;
  __m256i operator()(__m512i s, const Rq16& q, int m, int n0, __mmask16 mask) const {
    const int16_t* ar = res + static_cast<ptrdiff_t>(m) * res_stride + n0;
    const __m512i pairs = _mm512_or_si512(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(mask, ar)),
                                          _mm512_set1_epi32(0x10000));
    const __m512i t = _mm512_add_epi32(requantize_clamp_x16(s, q, kResidual16Clamp), _mm512_madd_epi16(pairs, coef));
    return _mm512_cvtsepi32_epi16(_mm512_sra_epi32(t, shift));
  }
};

// What the epilogue of channel block b needs: its lanes, bias and
// requantization parameters.
struct BlockParams {
  int n0;
  __mmask16 mask;  // lanes that are real output channels
  __m512i bias;
  Rq16 q;
};
inline BlockParams block_params(const Job& j, int b) {
  const int n0 = kPackN * b;
  const int cnt = j.out_features - n0 < kPackN ? j.out_features - n0 : kPackN;
  const __mmask16 mask = static_cast<__mmask16>((1u << cnt) - 1u);
  const __m512i bias = _mm512_maskz_loadu_epi32(mask, j.bias + n0);
  const Rq16 q = j.per_channel
                     ? make_rq16(_mm512_maskz_loadu_epi32(mask, j.mult + n0),
                                 _mm512_maskz_loadu_epi32(mask, j.shift + n0))
                     : make_rq16(_mm512_set1_epi32(j.mult[0]), _mm512_set1_epi32(j.shift[0]));
  return {n0, mask, bias, q};
}

// Row m of block p: the epilogue of the 16 sums s (bias added), stored.
template <class Epilogue>
inline void store_out(const Job& j, const Epilogue& epilogue, const BlockParams& p, int m, __m512i s) {
  const auto out = epilogue(s, p.q, m, p.n0, p.mask);
  if constexpr (Epilogue::kInt16Out) {
    _mm256_mask_storeu_epi16(epilogue.y + static_cast<ptrdiff_t>(m) * epilogue.y_stride + p.n0, p.mask, out);
  } else {
    _mm_mask_storeu_epi8(j.y + static_cast<ptrdiff_t>(m) * j.y_stride + p.n0, p.mask, out);
  }
}

// The residual epilogues of a call's term (what every zmm variant of
// qs8_linear_res / qs8_linear_res16 sets up).
inline ResidualEpilogue residual_epilogue(const QS8Residual& res) {
  return {res.res, res.res_stride, _mm512_set1_epi32(res.term.mult), _mm512_set1_epi32(residual_offset(res.term)),
          _mm_cvtsi32_si128(res.term.shift)};
}
inline Residual16Epilogue residual16_epilogue(const QS16Residual& res, int16_t* y, int y_stride) {
  const uint32_t coef =
      (static_cast<uint32_t>(1u << (res.term.shift - 1)) << 16) | static_cast<uint32_t>(res.term.mult);
  return {res.res, res.res_stride, _mm512_set1_epi32(static_cast<int32_t>(coef)), _mm_cvtsi32_si128(res.term.shift),
          y, y_stride};
}

// MR rows (from row m) x NB blocks (from block b): accumulate, correct,
// requantize, store.
// The K loop of the full 8 x 32 tile with 16 named accumulators. GCC 12
// compiles the same loop over an accumulator array (tile<> below) with two
// register copies per accumulator and step plus spills: 36 moves and 4 stores
// around 16 VPDPBUSD; named variables keep each accumulator in its register.
#define EA_ACC_ZERO(r) __m512i a##r##0 = _mm512_setzero_si512(), a##r##1 = _mm512_setzero_si512();
#define EA_ACC_ROW(r)                                       \
  {                                                         \
    const __m512i xv = bcast_word(x[r] + 4 * g);            \
    a##r##0 = _mm512_dpbusd_epi32(a##r##0, v0, xv);         \
    a##r##1 = _mm512_dpbusd_epi32(a##r##1, v1, xv);         \
  }
#define EA_ACC_OUT(r) \
  out[r][0] = a##r##0; \
  out[r][1] = a##r##1;
__attribute__((noinline)) void acc_8x32(const int8_t* const* xr, const int8_t* w0, const int8_t* w1, int groups,
                                        __m512i (*out)[2]) {
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  const int8_t* x[8];
  for (int r = 0; r < 8; ++r) x[r] = xr[r];
  EA_ACC_ZERO(0) EA_ACC_ZERO(1) EA_ACC_ZERO(2) EA_ACC_ZERO(3)
  EA_ACC_ZERO(4) EA_ACC_ZERO(5) EA_ACC_ZERO(6) EA_ACC_ZERO(7)
  for (int g = 0; g < groups; ++g) {
    const __m512i v0 = _mm512_xor_si512(_mm512_loadu_si512(w0 + 64 * static_cast<ptrdiff_t>(g)), flip);
    const __m512i v1 = _mm512_xor_si512(_mm512_loadu_si512(w1 + 64 * static_cast<ptrdiff_t>(g)), flip);
    EA_ACC_ROW(0) EA_ACC_ROW(1) EA_ACC_ROW(2) EA_ACC_ROW(3)
    EA_ACC_ROW(4) EA_ACC_ROW(5) EA_ACC_ROW(6) EA_ACC_ROW(7)
  }
  EA_ACC_OUT(0) EA_ACC_OUT(1) EA_ACC_OUT(2) EA_ACC_OUT(3)
  EA_ACC_OUT(4) EA_ACC_OUT(5) EA_ACC_OUT(6) EA_ACC_OUT(7)
}
#undef EA_ACC_ZERO
#undef EA_ACC_ROW
#undef EA_ACC_OUT

// One row (a decoder step's projections) against 2 blocks: the 2
// accumulators of the plain loop make each VPDPBUSD wait for the previous
// one on its chain; even and odd groups go to separate accumulators (4
// chains, same loads in the same order), added at the end (wrapping int32,
// so the sums are the same integers).
__attribute__((noinline)) void acc_1x32(const int8_t* x, const int8_t* w0, const int8_t* w1, int groups,
                                        __m512i (*out)[2]) {
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  __m512i a0 = _mm512_setzero_si512(), a1 = a0, b0 = a0, b1 = a0;
  int g = 0;
  for (; g + 2 <= groups; g += 2) {
    const __m512i xa = bcast_word(x + 4 * g), xb = bcast_word(x + 4 * g + 4);
    a0 = _mm512_dpbusd_epi32(a0, _mm512_xor_si512(_mm512_loadu_si512(w0 + 64 * static_cast<ptrdiff_t>(g)), flip), xa);
    a1 = _mm512_dpbusd_epi32(a1, _mm512_xor_si512(_mm512_loadu_si512(w1 + 64 * static_cast<ptrdiff_t>(g)), flip), xa);
    b0 = _mm512_dpbusd_epi32(b0, _mm512_xor_si512(_mm512_loadu_si512(w0 + 64 * static_cast<ptrdiff_t>(g) + 64), flip), xb);
    b1 = _mm512_dpbusd_epi32(b1, _mm512_xor_si512(_mm512_loadu_si512(w1 + 64 * static_cast<ptrdiff_t>(g) + 64), flip), xb);
  }
  if (g < groups) {
    const __m512i xa = bcast_word(x + 4 * g);
    a0 = _mm512_dpbusd_epi32(a0, _mm512_xor_si512(_mm512_loadu_si512(w0 + 64 * static_cast<ptrdiff_t>(g)), flip), xa);
    a1 = _mm512_dpbusd_epi32(a1, _mm512_xor_si512(_mm512_loadu_si512(w1 + 64 * static_cast<ptrdiff_t>(g)), flip), xa);
  }
  out[0][0] = _mm512_add_epi32(a0, b0);
  out[0][1] = _mm512_add_epi32(a1, b1);
}

template <int MR, int NB, class Epilogue>
void tile(const Job& j, const Epilogue epilogue, int m, int b, const int8_t* w, const uint32_t* corr,
          const int32_t* tail) {
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  const size_t block_bytes = packed_block_bytes(j.in_features);
  const int groups = j.in_features / 4;
  const int8_t* xr[MR];
  for (int r = 0; r < MR; ++r) xr[r] = j.x + static_cast<ptrdiff_t>(m + r) * j.x_stride;
  const int8_t* wb[NB];
  for (int c = 0; c < NB; ++c) wb[c] = w + static_cast<ptrdiff_t>(b + c) * static_cast<ptrdiff_t>(block_bytes);
  __m512i acc[MR][NB];
  if constexpr (MR == 8 && NB == 2) {
    acc_8x32(xr, wb[0], wb[1], groups, acc);
  } else if constexpr (MR == 1 && NB == 2) {
    acc_1x32(xr[0], wb[0], wb[1], groups, acc);
  } else {
    for (int r = 0; r < MR; ++r)
      for (int c = 0; c < NB; ++c) acc[r][c] = _mm512_setzero_si512();
  }
  constexpr bool kNamed = (MR == 8 && NB == 2) || (MR == 1 && NB == 2);
  for (int g = 0; !kNamed && g < groups; ++g) {
    __m512i wv[NB];
    for (int c = 0; c < NB; ++c) {
      wv[c] = _mm512_xor_si512(_mm512_loadu_si512(wb[c] + 64 * static_cast<ptrdiff_t>(g)), flip);
    }
    for (int r = 0; r < MR; ++r) {
      const __m512i xv = bcast_word(xr[r] + 4 * static_cast<ptrdiff_t>(g));
      for (int c = 0; c < NB; ++c) acc[r][c] = _mm512_dpbusd_epi32(acc[r][c], wv[c], xv);
    }
  }
  if (4 * groups < j.in_features) {  // the partial last group, from the zero-padded words
    __m512i wv[NB];
    for (int c = 0; c < NB; ++c) {
      wv[c] = _mm512_xor_si512(_mm512_loadu_si512(wb[c] + 64 * static_cast<ptrdiff_t>(groups)), flip);
    }
    for (int r = 0; r < MR; ++r) {
      const __m512i xv = _mm512_set1_epi32(tail[r]);
      for (int c = 0; c < NB; ++c) acc[r][c] = _mm512_dpbusd_epi32(acc[r][c], wv[c], xv);
    }
  }
  for (int c = 0; c < NB; ++c) {
    const BlockParams p = block_params(j, b + c);
    for (int r = 0; r < MR; ++r) {
      const __m512i s = _mm512_add_epi32(
          _mm512_sub_epi32(acc[r][c], _mm512_set1_epi32(static_cast<int32_t>(corr[r]))), p.bias);
      store_out(j, epilogue, p, m + r, s);
    }
  }
}

template <int MR, class Epilogue>
void row_tile(const Job& j, const Epilogue& epilogue, int m, const int8_t* w, const uint32_t* corr,
              const int32_t* tail) {
  const int blocks = packed_n(j.out_features) / kPackN;
  int b = 0;
  for (; b + 2 <= blocks; b += 2) tile<MR, 2>(j, epilogue, m, b, w, corr, tail);
  if (b < blocks) tile<MR, 1>(j, epilogue, m, b, w, corr, tail);
}

// 128 * sum of a row's inputs (wrapping) with VPSADBW on the offset bytes:
// sum_k x_k = sum_k (x_k ^ 0x80) - 128 * in. The masked load of the last
// chunk reads nothing past in_features.
inline uint32_t row_correction(const int8_t* xr, int in_features) {
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  __m512i s = _mm512_setzero_si512();
  int k = 0;
  for (; k + 64 <= in_features; k += 64) {
    s = _mm512_add_epi64(s, _mm512_sad_epu8(_mm512_xor_si512(_mm512_loadu_si512(xr + k), flip),
                                            _mm512_setzero_si512()));
  }
  if (k < in_features) {
    const __mmask64 mask = (~uint64_t{0}) >> (64 - (in_features - k));
    const __m512i v = _mm512_maskz_loadu_epi8(mask, xr + k);
    // flip only the loaded bytes (the masked-off ones stay 0 and add nothing)
    const __m512i flipped = _mm512_xor_si512(v, _mm512_maskz_mov_epi8(mask, flip));
    s = _mm512_add_epi64(s, _mm512_sad_epu8(flipped, _mm512_setzero_si512()));
  }
  const uint64_t offset_sum = static_cast<uint64_t>(_mm512_reduce_add_epi64(s));
  const uint32_t sum = static_cast<uint32_t>(offset_sum) - 128u * static_cast<uint32_t>(in_features);
  return 128u * sum;
}

// Rows first_row.. rows-1 in tiles of up to 8: each tile's input sums (the
// +128 correction) and zero-padded last words once, then every channel block.
template <class Epilogue>
void linear(const Job& j, const Epilogue& epilogue, int rows, const int8_t* w, int first_row = 0) {
  const int groups = j.in_features / 4;
  for (int m = first_row; m < rows; m += kMaxRows) {
    const int mr = rows - m < kMaxRows ? rows - m : kMaxRows;
    uint32_t corr[kMaxRows];
    int32_t tail[kMaxRows] = {};
    for (int r = 0; r < mr; ++r) {
      const int8_t* xr = j.x + static_cast<ptrdiff_t>(m + r) * j.x_stride;
      corr[r] = row_correction(xr, j.in_features);
      std::memcpy(&tail[r], xr + 4 * groups, static_cast<size_t>(j.in_features - 4 * groups));
    }
    switch (mr) {
      case 8: row_tile<8>(j, epilogue, m, w, corr, tail); break;
      case 7: row_tile<7>(j, epilogue, m, w, corr, tail); break;
      case 6: row_tile<6>(j, epilogue, m, w, corr, tail); break;
      case 5: row_tile<5>(j, epilogue, m, w, corr, tail); break;
      case 4: row_tile<4>(j, epilogue, m, w, corr, tail); break;
      case 3: row_tile<3>(j, epilogue, m, w, corr, tail); break;
      case 2: row_tile<2>(j, epilogue, m, w, corr, tail); break;
      default: row_tile<1>(j, epilogue, m, w, corr, tail); break;
    }
  }
}

}  // namespace

}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_ISA_X86_LINEAR_AVX512VNNI_H_
