# shellcheck shell=bash
# Stage "x86": the x86-64 SIMD paths (kernels/avx2: avx2, avxvnni, avx512vnni), on top of
# the host stage's build/host.
#
#  1. (The host stage ran the suite on this CPU's best path; simd_test and
#     bench_paths_agree_* compare every supported path with ref bit for bit.)
#  2. simd_test, runtime_test and e2e_test under `qemu-x86_64 -cpu max` (TCG: AVX2+FMA, no
#     AVX-512, no AVX-VNNI): proves the avx2 path executes no AVX-512/VNNI
#     instruction (that would be SIGILL, exit 132) and that avxvnni reports
#     unsupported there instead of crashing. Also `-cpu qemu64` (no AVX2): the
#     reference fallback.
#  3. tests/kernels/vnni_emu_check: the avxvnni int8 linear path with
#     VPDPBUSD emulated exactly in AVX2, bit-exact against ref (covers the
#     VNNI code on CPUs without AVX-VNNI, natively and under qemu).
#  4. edgeattn-bench output hashes of the int8 models under qemu (--path avx2)
#     equal the native ref path.

EA_STAGES+=(x86)

EA_X86_QEMU=(qemu-x86_64 -cpu max)

# ea_x86_has_path NAME: this CPU runs kernel path NAME (avxvnni: CPUID.(7,1):EAX[4];
# avx512vnni: AVX512F/VL/VNNI + ZMM state; amx: that plus AMX-INT8, the tile state and
# Linux's permission), as the kernels see it: ask simd_test.
ea_x86_has_path() {
  "$ROOT/build/host/tests/kernels/simd_test" --gtest_filter=SimdTest.ListsPaths 2>/dev/null |
    grep -q "paths under test:.* $1\b"
}

stage_x86() {
  [[ $(uname -m) == x86_64 ]] || { echo "x86: not an x86-64 host, skipped"; return 0; }
  ea_deps_ensure_packages qemu-user
  local b="$ROOT/build/host" path t paths=(ref avx2)
  if [[ ! -x $b/tests/kernels/simd_test ]]; then
    header "x86: build/host missing, building it"
    cmake -S "$ROOT" -B "$b" "${EA_HOST_CMAKE_ARGS[@]}" > /dev/null
    cmake --build "$b" -j"$JOBS"
  fi
  for path in avxvnni avx512vnni amx; do
    if ea_x86_has_path "$path"; then paths+=("$path"); else echo "x86: this CPU cannot run $path (checked by emulation only)"; fi
  done

  # The host stage already ran the whole suite on the best path of this CPU,
  # and bench_paths_agree_* / simd_test compare every supported path with ref.
  echo "x86: kernel paths on this CPU: ${paths[*]}"

  header "x86: gtest binaries under ${EA_X86_QEMU[*]}"
  local out
  out=$("${EA_X86_QEMU[@]}" "$b/tests/kernels/simd_test" --gtest_brief=1)
  echo "$out" | grep -E 'paths under test|PASSED|FAILED'
  echo "$out" | grep -q 'paths under test: avx2 (best: avx2)' ||
    { echo "x86: under qemu -cpu max expected exactly the avx2 path" >&2; return 1; }
  for t in runtime/runtime_test e2e/e2e_test; do
    [[ -x $b/tests/$t ]] || continue
    echo "x86: qemu -cpu max $t"
    "${EA_X86_QEMU[@]}" "$b/tests/$t" --gtest_brief=1 > /dev/null
  done
  for path in avxvnni avx512vnni amx; do
    echo "x86: qemu -cpu max, EA_KERNEL_PATH=$path falls back instead of crashing"
    EA_KERNEL_PATH=$path "${EA_X86_QEMU[@]}" "$b/tests/runtime/runtime_test" --gtest_brief=1 \
      --gtest_filter='Models/*' > /dev/null
  done
  echo "x86: qemu -cpu qemu64 (no AVX2) simd_test + runtime_test"
  qemu-x86_64 -cpu qemu64 "$b/tests/kernels/simd_test" --gtest_brief=1 > /dev/null
  qemu-x86_64 -cpu qemu64 "$b/tests/runtime/runtime_test" --gtest_brief=1 > /dev/null

  header "x86: avxvnni linear with emulated VPDPBUSD vs ref"
  # (natively it runs in the host stage's ctest)
  "${EA_X86_QEMU[@]}" "$b/tests/kernels/vnni_emu_check"

  header "x86: edgeattn-bench int8 hashes, avx2 under qemu vs native ref"
  ea_bench_hashes_match "x86: avx2 under qemu -cpu max" \
    "${EA_X86_QEMU[@]}" "$b/bench/edgeattn-bench" --path avx2
}
