// Peak-throughput probes (Google Benchmark): dependent chains of independent
// accumulators so the loop is bound by the execution ports, not latency.
//   fp32_fma_avx2     VFMADD231PS ymm, 12 accumulators: 16 FLOP per instruction
//   fp32_fma_avx512   VFMADD231PS zmm, 12 accumulators: 32 FLOP per instruction
//   int16_madd_avx2   VPMADDWD+VPADDD ymm (what the AVX2 int8 kernels use):
//                     16 multiply-adds = 32 ops per VPMADDWD
//   int8_dpbusd_avxvnni  VPDPBUSD ymm: 32 u8*s8 multiply-adds = 64 ops
//   int8_dpbusd_avx512vnni VPDPBUSD zmm: 128 ops
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
#include <string>

namespace {

#if defined(__x86_64__)
constexpr int kInner = 1000;

struct Isa {
  bool avx2_fma = false, avx512f = false, avx512vnni = false, avxvnni = false;
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

BENCHMARK(BM_Fp32FmaAvx2)->Name("peak/fp32_fma_avx2");
BENCHMARK(BM_Fp32FmaAvx512)->Name("peak/fp32_fma_avx512");
BENCHMARK(BM_Int16MaddAvx2)->Name("peak/int16_madd_avx2");
BENCHMARK(BM_Int8DpbusdAvxVnni)->Name("peak/int8_dpbusd_avxvnni");
BENCHMARK(BM_Int8Dpbusd512)->Name("peak/int8_dpbusd_avx512vnni");
#endif

}  // namespace

BENCHMARK_MAIN();
