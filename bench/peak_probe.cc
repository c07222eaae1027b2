// Peak-throughput probes (Google Benchmark): dependent chains of independent
// accumulators so the loop is bound by the execution ports, not latency.
//   fp32_fma_avx2     VFMADD231PS ymm, 12 accumulators: 16 FLOP per instruction
//   fp32_fma_avx512   VFMADD231PS zmm, 12 accumulators: 32 FLOP per instruction
//   int16_madd_avx2   VPMADDWD+VPADDD ymm (what the AVX2 int8 kernels use):
//                     16 multiply-adds = 32 ops per VPMADDWD
//   int8_dpbusd_avxvnni  VPDPBUSD ymm: 32 u8*s8 multiply-adds = 64 ops
//   int8_dpbusd_avx512vnni VPDPBUSD zmm: 128 ops
//   int8_tdpbssd_amx  TDPBSSD on six 16 x 16 int32 tiles from one A and one
//                     B tile held in tile registers: 16 x 16 x 64 s8*s8
//                     multiply-adds = 32768 ops per instruction (the amx
//                     path's GEMMs; Linux grants the tile state first)
// Each probe runs only if cpuid/xgetbv report its ISA (skipped otherwise, so
// the binary also runs under qemu-x86_64 -cpu max). Functions carry their own
// target attributes; nothing else in the project is built with these flags.
// Counter GOPS = 1e9 (FL)OP/s on one core.
#include <benchmark/benchmark.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#include <cstdint>
#include <cstring>
#include <string>

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace {

#if defined(__x86_64__)
constexpr int kInner = 1000;

struct Isa {
  bool avx2_fma = false, avx512f = false, avx512vnni = false, avxvnni = false, amx = false;
};

Isa Detect() {
  Isa f;
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  if (!((c >> 27) & 1) || !((c >> 28) & 1) || !((c >> 12) & 1)) return f;
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  const uint64_t xcr0 = (static_cast<uint64_t>(hi) << 32) | lo;
  if ((xcr0 & 0x6) != 0x6) return f;
  if (__get_cpuid_max(0, nullptr) < 7) return f;
  __cpuid_count(7, 0, a, b, c, d);
  const unsigned max_sub = a;
  f.avx2_fma = (b >> 5) & 1;
  const bool zmm_os = (xcr0 & 0xE6) == 0xE6;  // opmask + ZMM state
  f.avx512f = zmm_os && ((b >> 16) & 1);
  f.avx512vnni = f.avx512f && ((c >> 11) & 1);
  // AMX-TILE and AMX-INT8 (EDX[24], [25]), the tile state in XCR0 (bits 17,
  // 18) and Linux's permission (arch_prctl ARCH_REQ_XCOMP_PERM, XTILEDATA).
  f.amx = ((d >> 24) & 1) && ((d >> 25) & 1) && (xcr0 & 0x60000) == 0x60000;
#if defined(__linux__) && defined(SYS_arch_prctl)
  f.amx = f.amx && syscall(SYS_arch_prctl, 0x1023, 18) == 0;
#else
  f.amx = false;
#endif
  if (max_sub >= 1) {
    __cpuid_count(7, 1, a, b, c, d);
    f.avxvnni = f.avx2_fma && ((a >> 4) & 1);
  }
  return f;
}

const Isa& Features() {
  static const Isa f = Detect();
  return f;
}

__attribute__((target("avx2,fma"))) float FmaAvx2(int64_t iters) {
  __m256 a[12];
  for (int i = 0; i < 12; ++i) a[i] = _mm256_set1_ps(0.001f * i);
  const __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
  for (int64_t it = 0; it < iters; ++it) {
    for (int k = 0; k < kInner; ++k) {
      for (int i = 0; i < 12; ++i) a[i] = _mm256_fmadd_ps(a[i], m, c);
    }
  }
  __m256 s = a[0];
  for (int i = 1; i < 12; ++i) s = _mm256_add_ps(s, a[i]);
  return _mm256_cvtss_f32(s);
}

__attribute__((target("avx512f"))) float FmaAvx512(int64_t iters) {
  __m512 a[12];
  for (int i = 0; i < 12; ++i) a[i] = _mm512_set1_ps(0.001f * i);
  const __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
  for (int64_t it = 0; it < iters; ++it) {
    for (int k = 0; k < kInner; ++k) {
      for (int i = 0; i < 12; ++i) a[i] = _mm512_fmadd_ps(a[i], m, c);
    }
  }
  __m512 s = a[0];
  for (int i = 1; i < 12; ++i) s = _mm512_add_ps(s, a[i]);
  return _mm512_reduce_add_ps(s);
}

__attribute__((target("avx2"))) int MaddAvx2(int64_t iters) {
  __m256i a[8];
  for (int i = 0; i < 8; ++i) a[i] = _mm256_set1_epi32(i);
  __m256i x = _mm256_set1_epi16(3); const __m256i y = _mm256_set1_epi16(-2);
  for (int64_t it = 0; it < iters; ++it) {
    for (int k = 0; k < kInner; ++k) {
      __asm__ volatile("" : "+x"(x));  // x "changes": the products cannot be hoisted
      for (int i = 0; i < 8; ++i) a[i] = _mm256_add_epi32(a[i], _mm256_madd_epi16(x, y));
    }
  }
  __m256i s = a[0];
  for (int i = 1; i < 8; ++i) s = _mm256_add_epi32(s, a[i]);
  return _mm256_extract_epi32(s, 0);
}

__attribute__((target("avx2,avxvnni"))) int DpbusdAvx(int64_t iters) {
  __m256i a[12];
  for (int i = 0; i < 12; ++i) a[i] = _mm256_set1_epi32(i);
  __m256i x = _mm256_set1_epi8(3), y = _mm256_set1_epi8(-2);
  for (int64_t it = 0; it < iters; ++it) {
    __asm__ volatile("" : "+x"(x), "+x"(y));
    for (int k = 0; k < kInner; ++k) {
      for (int i = 0; i < 12; ++i) a[i] = _mm256_dpbusd_avx_epi32(a[i], x, y);
    }
  }
  __m256i s = a[0];
  for (int i = 1; i < 12; ++i) s = _mm256_add_epi32(s, a[i]);
  return _mm256_extract_epi32(s, 0);
}

__attribute__((target("avx512f,avx512vnni"))) int Dpbusd512(int64_t iters) {
  __m512i a[12];
  for (int i = 0; i < 12; ++i) a[i] = _mm512_set1_epi32(i);
  __m512i x = _mm512_set1_epi8(3), y = _mm512_set1_epi8(-2);
  for (int64_t it = 0; it < iters; ++it) {
    __asm__ volatile("" : "+v"(x), "+v"(y));
    for (int k = 0; k < kInner; ++k) {
      for (int i = 0; i < 12; ++i) a[i] = _mm512_dpbusd_epi32(a[i], x, y);
    }
  }
  __m512i s = a[0];
  for (int i = 1; i < 12; ++i) s = _mm512_add_epi32(s, a[i]);
  return _mm512_reduce_add_epi32(s);
}

__attribute__((target("amx-tile,amx-int8"))) int TdpbssdAmx(int64_t iters) {
  struct alignas(64) {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
  } cfg;
  std::memset(&cfg, 0, sizeof(cfg));
  cfg.palette = 1;
  for (int t = 0; t < 8; ++t) {
    cfg.colsb[t] = 64;
    cfg.rows[t] = 16;
  }
  alignas(64) int8_t ab[16 * 64];
  for (int i = 0; i < 16 * 64; ++i) ab[i] = static_cast<int8_t>(i % 7 - 3);
  _tile_loadconfig(&cfg);
  _tile_loadd(6, ab, 64);
  _tile_loadd(7, ab, 64);
  _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3); _tile_zero(4); _tile_zero(5);
  for (int64_t it = 0; it < iters; ++it) {
    for (int k = 0; k < kInner / 10; ++k) {
      _tile_dpbssd(0, 6, 7); _tile_dpbssd(1, 6, 7); _tile_dpbssd(2, 6, 7);
      _tile_dpbssd(3, 6, 7); _tile_dpbssd(4, 6, 7); _tile_dpbssd(5, 6, 7);
    }
  }
  alignas(64) int32_t out[16 * 16];
  _tile_stored(0, out, 64);
  _tile_release();
  return out[0];
}

template <typename Fn>
void Probe(benchmark::State& state, bool supported, const char* isa, Fn fn, double ops_per_iter) {
  if (!supported) {
    state.SkipWithError((std::string(isa) + " not supported by this CPU/OS").c_str());
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(fn(1));
  state.counters["GOPS"] = benchmark::Counter(ops_per_iter * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Fp32FmaAvx2(benchmark::State& s) { Probe(s, Features().avx2_fma, "AVX2+FMA", FmaAvx2, 12.0 * kInner * 16); }
void BM_Fp32FmaAvx512(benchmark::State& s) { Probe(s, Features().avx512f, "AVX-512F", FmaAvx512, 12.0 * kInner * 32); }
void BM_Int16MaddAvx2(benchmark::State& s) { Probe(s, Features().avx2_fma, "AVX2", MaddAvx2, 8.0 * kInner * 32); }
void BM_Int8DpbusdAvxVnni(benchmark::State& s) { Probe(s, Features().avxvnni, "AVX-VNNI", DpbusdAvx, 12.0 * kInner * 64); }
void BM_Int8Dpbusd512(benchmark::State& s) { Probe(s, Features().avx512vnni, "AVX-512 VNNI", Dpbusd512, 12.0 * kInner * 128); }
void BM_Int8TdpbssdAmx(benchmark::State& s) {
  Probe(s, Features().amx, "AMX-INT8", TdpbssdAmx, 6.0 * (kInner / 10) * 16 * 16 * 64 * 2);
}

BENCHMARK(BM_Fp32FmaAvx2)->Name("peak/fp32_fma_avx2");
BENCHMARK(BM_Fp32FmaAvx512)->Name("peak/fp32_fma_avx512");
BENCHMARK(BM_Int16MaddAvx2)->Name("peak/int16_madd_avx2");
BENCHMARK(BM_Int8DpbusdAvxVnni)->Name("peak/int8_dpbusd_avxvnni");
BENCHMARK(BM_Int8Dpbusd512)->Name("peak/int8_dpbusd_avx512vnni");
BENCHMARK(BM_Int8TdpbssdAmx)->Name("peak/int8_tdpbssd_amx");
#endif

}  // namespace

BENCHMARK_MAIN();
