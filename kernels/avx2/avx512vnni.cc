// The avxvnni.cc kernels with EVEX-encoded VPDPBUSD ymm (AVX512-VNNI +
// AVX512VL): compiled with -mavx512vnni -mavx512vl, reached only after
// cpu_supports(KernelPath::kAvx512Vnni). See avxvnni.cc for the arithmetic.
#define EA_VNNI_EVEX 1
#include "avxvnni.cc"
