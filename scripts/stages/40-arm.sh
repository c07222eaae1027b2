# shellcheck shell=bash
# Stage "arm": cross builds for aarch64 and armv7 (Linux, Debian cross GCC),
# GoogleTest suites run under qemu-user, and a bit-exact check of
# edgeattn-bench under qemu against the host reference.
#
#   aarch64: build/aarch64, tests run under QEMU_CPU=cortex-a76 (dotprod:
#            neondot path; the tests comparing paths run neon and ref too),
#            then those comparing paths under QEMU_CPU=cortex-a53 (no
#            dotprod: ref and neon; EA_ARM_PATH_TESTS). Built with the XNNPACK
#            backend (EA_WITH_XNNPACK=ON) from Debian's arm64 packages,
#            unpacked into build/aarch64-xnnpack-root (ea_arm_xnnpack_root).
#   armv7:   build/armv7, qemu-arm -cpu cortex-a15 (from the toolchain file).
# Both builds' ctest includes fuzz_paths_replay: the differential fuzz target
# (tests/fuzz/fuzz_paths.cc) replayed over its seeds, comparing every kernel
# path the emulated CPU has (a53: ref, neon; a76: ref, neon, neondot; armv7
# cortex-a15: ref, neon) byte for byte.
# Needs the host converter (and edgeattn-bench) from the host stage:
# build/host/converter/edgeattn-convert, and the host's generated fuzz_paths
# seeds (build/host/tests/fuzz/paths_seeds).

EA_STAGES+=(arm)

# Optional ctest -E pattern for local runs (empty: every test runs).
EA_ARM_CTEST_EXCLUDE=${EA_ARM_CTEST_EXCLUDE-}
# The tests that run every kernel path this CPU has, one by one: the
# programs (CTest runs each as a few shards, tests/CMakeLists.txt
# EA_CTEST_PER_PROGRAM) and, in them, the GoogleTest cases.
EA_ARM_PATH_TESTS='^simd_test|^threads_test|^bench_paths_agree_|^fuzz_paths_replay$'
EA_ARM_PATH_CASES='Simd*:Models/Threads.*'

ea_arm_deps() {
  local arch changed=0
  for arch in arm64 armhf; do
    if ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
      if [[ $(id -u) -ne 0 ]]; then
        echo "arm: run 'sudo dpkg --add-architecture $arch && sudo apt-get update'" >&2
        return 1
      fi
      dpkg --add-architecture "$arch"
      changed=1
    fi
  done
  if [[ $changed -eq 1 ]]; then ea_apt_update; fi
  # libcpuinfo0:arm64 (Multi-Arch: same, unlike the rest of XNNPACK's
  # packages, see ea_arm_xnnpack_root): libXNNPACK.so.0 needs it.
  ea_deps_ensure_packages g++-aarch64-linux-gnu g++-arm-linux-gnueabihf qemu-user \
    libgtest-dev:arm64 libgmock-dev:arm64 libflatbuffers-dev:arm64 libcpuinfo0:arm64 \
    libgtest-dev:armhf libgmock-dev:armhf libflatbuffers-dev:armhf
}

# XNNPACK for the aarch64 build (docs/performance.md, "XNNPACK on aarch64"). Debian's
# libxnnpack0/-dev and libpthreadpool0/-dev are not Multi-Arch: same:
# installing the :arm64 ones would make apt remove the amd64 XNNPACK and
# everything depending on it. So the four .deb files (0.3 MB; 1.4 MB unpacked) are
# downloaded into build/aarch64-xnnpack-debs (apt-get download needs no root,
# only the arm64 package lists from ea_arm_deps) and unpacked with dpkg-deb -x
# into build/aarch64-xnnpack-root, which the aarch64 configure gets as
# EA_XNNPACK_ROOT (cmake/FindXNNPACK.cmake). Nothing is done when that folder
# is already unpacked. Sets EA_ARM_XNNPACK_ROOT.
EA_ARM_XNNPACK_PKGS=(libxnnpack-dev:arm64 libxnnpack0:arm64 libpthreadpool0:arm64 libpthreadpool-dev:arm64)
ea_arm_xnnpack_root() {
  local dest="$ROOT/build/aarch64-xnnpack-root" debs="$ROOT/build/aarch64-xnnpack-debs"
  local log=${EA_DEPS_LOG:-/tmp/edgeattn-deps.log} deb apt_opts=()
  EA_ARM_XNNPACK_ROOT=$dest
  if [[ -f $dest/.ea-unpacked ]]; then
    echo "arm: XNNPACK arm64 already unpacked in build/aarch64-xnnpack-root"
    return 0
  fi
  header "arm: XNNPACK arm64 packages -> build/aarch64-xnnpack-root"
  # As root, apt downloads as user _apt (and warns when _apt cannot write here).
  if [[ $(id -u) -eq 0 ]]; then apt_opts=(-o APT::Sandbox::User=root); fi
  if ! compgen -G "$debs/*.deb" > /dev/null; then
    rm -rf "$debs.tmp" && mkdir -p "$debs.tmp"
    if ! (cd "$debs.tmp" && apt-get "${apt_opts[@]}" download "${EA_ARM_XNNPACK_PKGS[@]}") >> "$log" 2>&1; then
      echo "arm: apt-get download of XNNPACK arm64 failed (see $log); by hand:" >&2
      echo "  (mkdir -p $debs && cd $debs && apt-get download ${EA_ARM_XNNPACK_PKGS[*]})" >&2
      return 1
    fi
    rm -rf "$debs" && mv "$debs.tmp" "$debs"
  fi
  rm -rf "$dest" "$dest.tmp" && mkdir -p "$dest.tmp"
  for deb in "$debs"/*.deb; do
    dpkg-deb -x "$deb" "$dest.tmp"
    basename "$deb" >> "$dest.tmp/.ea-unpacked"
  done
  mv "$dest.tmp" "$dest"
  echo "arm: unpacked $(wc -l < "$dest/.ea-unpacked") packages into build/aarch64-xnnpack-root"
}

# ea_arm_build <name> <toolchain file> [extra cmake arguments...]
ea_arm_build() {
  local name=$1 toolchain=$2 conv="$ROOT/build/host/converter/edgeattn-convert"
  shift 2
  header "arm: configure build/$name"
  cmake -S "$ROOT" -B "$ROOT/build/$name" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_TOOLCHAIN_FILE="$ROOT/targets/toolchains/$toolchain" \
    "${EA_TEST_TREE_ARGS[@]}" -DEA_BUILD_CONVERTER=OFF -DEA_HOST_CONVERTER="$conv" \
    -DEA_HOST_FIXTURE_DIR="$ROOT/build/host/tests/runtime/models" \
    -DEA_HOST_FUZZ_SEED_DIR="$ROOT/build/host/tests/fuzz/paths_seeds" "$@" > /dev/null
  header "arm: build build/$name (-j$JOBS)"
  cmake --build "$ROOT/build/$name" -j"$JOBS"
}

# ea_arm_bench_check <build name> <cpu:paths...>: every layer's output hash of
# the bundled int8 models, per CPU model and kernel path, equals the host's ref path.
ea_arm_bench_check() {
  local name=$1; shift
  local cpu_paths cpu path
  for cpu_paths in "$@"; do
    cpu=${cpu_paths%%:*}
    for path in ${cpu_paths#*:}; do
      QEMU_CPU=$cpu ea_bench_hashes_match "arm: $name path=$path cpu=$cpu" \
        "${EA_ARM_QEMU[@]}" "$ROOT/build/$name/bench/edgeattn-bench" \
        --path "$path" || return
    done
  done
}

# The instruction-count tools of docs/performance.md (targets/qemu-plugin):
# both plugins built with the host gcc and loaded by qemu-aarch64 on one
# bench run of the converted pooling model; the per-block profile must add up
# to insn_count's total and attribute instructions to the kernels.
ea_arm_plugin_check() {
  local dir="$ROOT/build/aarch64/qemu-plugins" bench="$ROOT/build/aarch64/bench/edgeattn-bench"
  local model="$EA_BENCH_HASH_DIR/pooling_int8.eatn" total
  local run=(qemu-aarch64 -L /usr/aarch64-linux-gnu)
  header "arm: qemu plugins insn_count and tb_profile (targets/qemu-plugin)"
  mkdir -p "$dir"
  gcc -shared -fPIC -O2 -Wall -Wextra -Werror -o "$dir/libinsn_count.so" "$ROOT/targets/qemu-plugin/insn_count.c"
  gcc -shared -fPIC -O2 -Wall -Wextra -Werror -o "$dir/libtb_profile.so" "$ROOT/targets/qemu-plugin/tb_profile.c"
  total=$(QEMU_CPU=cortex-a76 "${run[@]}" -plugin "$dir/libinsn_count.so" -d plugin "$bench" "$model" \
            --path neondot --warmup 0 --iters 1 2>&1 > /dev/null | sed -n 's/^insns: //p')
  [[ $total =~ ^[0-9]+$ ]] || { echo "arm: insn_count printed no count" >&2; return 1; }
  QEMU_CPU=cortex-a76 "${run[@]}" -plugin "$dir/libtb_profile.so" -d plugin "$bench" "$model" \
    --path neondot --warmup 0 --iters 1 2> "$dir/profile.txt" > /dev/null
  python3 "$ROOT/targets/qemu-plugin/profile_by_function.py" "$bench" "$dir/profile.txt" \
    --nm aarch64-linux-gnu-nm --expect-total "$total" --top 40 > "$dir/by_function.txt" ||
    { cat "$dir/by_function.txt" >&2; return 1; }
  grep -q 'edgeattn::kernels::' "$dir/by_function.txt" ||
    { echo "arm: tb_profile attributed nothing to the kernels:" >&2; cat "$dir/by_function.txt" >&2; return 1; }
  echo "arm: insn_count $total instructions; tb_profile agrees, $(head -n 1 "$dir/by_function.txt")"
}

stage_arm() {
  ea_arm_deps
  if [[ ! -x $ROOT/build/host/converter/edgeattn-convert || ! -x $ROOT/build/host/bench/edgeattn-bench ||
        ! -f $ROOT/build/host/tests/runtime/models/fixture_int8.eatn ||
        ! -f $ROOT/build/host/tests/fuzz/paths_seeds/.stamp ]]; then
    header "arm: host converter/bench/fixtures/fuzz seeds missing, building them in build/host"
    cmake -S "$ROOT" -B "$ROOT/build/host" "${EA_HOST_CMAKE_ARGS[@]}" > /dev/null
    cmake --build "$ROOT/build/host" -j"$JOBS" --target edgeattn-convert edgeattn-bench edgeattn_test_models \
      edgeattn_paths_seeds
  fi

  header "arm: the documented one-command cross build (cmake --workflow --preset aarch64)"
  cmake --workflow --preset aarch64 > "$ROOT/build/preset-aarch64.log" 2>&1 ||
    { tail -30 "$ROOT/build/preset-aarch64.log" >&2; return 1; }
  [[ -x $ROOT/build/release-aarch64/bench/edgeattn-bench ]] ||
    { echo "arm: the aarch64 preset did not produce edgeattn-bench" >&2; return 1; }

  # ON, not AUTO: a missing arm64 XNNPACK fails the configure instead of
  # silently building (and skipping the tests of) a build without it.
  ea_arm_xnnpack_root
  ea_arm_build aarch64 aarch64-linux-gnu.cmake -DEA_WITH_XNNPACK=ON -DEA_XNNPACK_ROOT="$EA_ARM_XNNPACK_ROOT"
  # cortex-a76 (dotprod) runs everything but the load-integrity suite: its
  # best path is neondot, and the tests that compare paths (simd_test,
  # bench_paths_agree_*, threads_test, fuzz_paths_replay) run neon and ref
  # there too. IntegrityOf.* (every bit flip outside the weights refused at
  # load) is the verifier alone, the same LP64 code as on x86-64: it runs on
  # the host, under ASan and on 32-bit armv7, not here (50 CPU-seconds of
  # qemu). cortex-a53 (no dotprod)
  # runs the tests that execute the kernels path by path, which prove that
  # neon uses no dotprod instruction and that neondot is refused there
  # (SIGILL would fail them); its whole models run on neon in the bench
  # hashes below.
  header "arm: ctest build/aarch64 under QEMU_CPU=cortex-a76"
  QEMU_CPU=cortex-a76 GTEST_FILTER='-Models/IntegrityOf.*' ctest --test-dir "$ROOT/build/aarch64" \
    --output-on-failure --no-tests=error -j"$JOBS" ${EA_ARM_CTEST_EXCLUDE:+-E "$EA_ARM_CTEST_EXCLUDE"}
  header "arm: ctest build/aarch64 under QEMU_CPU=cortex-a53 (kernel paths)"
  QEMU_CPU=cortex-a53 GTEST_FILTER="$EA_ARM_PATH_CASES" ctest --test-dir "$ROOT/build/aarch64" \
    --output-on-failure --no-tests=error -j"$JOBS" \
    -R "$EA_ARM_PATH_TESTS" ${EA_ARM_CTEST_EXCLUDE:+-E "$EA_ARM_CTEST_EXCLUDE"}
  EA_ARM_QEMU=(qemu-aarch64 -L /usr/aarch64-linux-gnu)
  header "arm: edgeattn-bench aarch64 vs host ref"
  ea_arm_bench_check aarch64 "cortex-a53:ref neon" "cortex-a76:neon neondot"
  ea_arm_plugin_check

  # No XNNPACK for armv7: Debian's armhf XNNPACK was not tried and is not in
  # scope. EA_WITH_XNNPACK stays AUTO, which finds no armhf libXNNPACK (only
  # EA_XNNPACK_ROOT would provide one), so the backend is compiled out there.
  ea_arm_build armv7 arm-linux-gnueabihf.cmake
  header "arm: ctest build/armv7 (qemu-arm -cpu cortex-a15)"
  ctest --test-dir "$ROOT/build/armv7" --output-on-failure --no-tests=error -j"$JOBS" \
    ${EA_ARM_CTEST_EXCLUDE:+-E "$EA_ARM_CTEST_EXCLUDE"}
  EA_ARM_QEMU=(qemu-arm -L /usr/arm-linux-gnueabihf -cpu cortex-a15)
  header "arm: edgeattn-bench armv7 vs host ref"
  ea_arm_bench_check armv7 "cortex-a15:ref neon"
}
