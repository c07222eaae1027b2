# shellcheck shell=bash
# Stage "arm": cross builds for aarch64 and armv7 (Linux, Debian cross GCC),
# GoogleTest suites run under qemu-user, and a bit-exact check of
# edgeattn-bench under qemu against the host reference.
#
#   aarch64: build/aarch64, tests run twice: QEMU_CPU=cortex-a53 (no dotprod:
#            neon path) and QEMU_CPU=cortex-a76 (dotprod: neondot path; the
#            SIMD tests then also compare neon).
#   armv7:   build/armv7, qemu-arm -cpu cortex-a15 (from the toolchain file).
# Needs the host converter (and edgeattn-bench) from the host stage:
# build/host/converter/edgeattn-convert.

EA_STAGES+=(arm)

# Optional ctest -E pattern for local runs (empty: every test runs).
EA_ARM_CTEST_EXCLUDE=${EA_ARM_CTEST_EXCLUDE-}

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
  ea_deps_ensure_packages g++-aarch64-linux-gnu g++-arm-linux-gnueabihf qemu-user \
    libgtest-dev:arm64 libgmock-dev:arm64 libflatbuffers-dev:arm64 \
    libgtest-dev:armhf libgmock-dev:armhf libflatbuffers-dev:armhf
}

# ea_arm_build <name> <toolchain file>
ea_arm_build() {
  local name=$1 toolchain=$2 conv="$ROOT/build/host/converter/edgeattn-convert"
  header "arm: configure build/$name"
  cmake -S "$ROOT" -B "$ROOT/build/$name" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_TOOLCHAIN_FILE="$ROOT/targets/toolchains/$toolchain" \
    -DEA_BUILD_TESTS=ON -DEA_BUILD_CONVERTER=OFF -DEA_HOST_CONVERTER="$conv" \
    -DEA_HOST_FIXTURE_DIR="$ROOT/build/host/tests/runtime/models" > /dev/null
  header "arm: build build/$name (-j$JOBS)"
  cmake --build "$ROOT/build/$name" -j"$JOBS"
}

# ea_arm_bench_check <build name> <cpu:paths...>: every layer's output hash of
# the bundled int8 models, per kernel path, equals the host's ref path. (Float
# models are not compared: libm's expf/tanhf differ in the last bit between
# architectures, so float results match within a tolerance, not bit for bit.)
ea_arm_bench_check() {
  local name=$1; shift
  local bench="$ROOT/build/$name/bench/edgeattn-bench" host_bench="$ROOT/build/host/bench/edgeattn-bench"
  local dir="$ROOT/build/$name/arm-bench" model want got path cpu paths
  mkdir -p "$dir"
  for model in transformer_int8 bahdanau_int8 pooling_int8; do
    local src=${model%_*} dtype=${model##*_}
    "$ROOT/build/host/converter/edgeattn-convert" convert \
      --weights "$ROOT/models/$src/weights.safetensors" --spec "$ROOT/models/$src/spec.json" \
      --calib "$ROOT/models/$src/calib.npz" --dtype "$dtype" -o "$dir/$model.eatn" > /dev/null
    want=$("$host_bench" "$dir/$model.eatn" --path ref --warmup 0 --iters 1 | ea_arm_hashes)
    [[ -n $want ]] || { echo "arm: no hashes from host bench" >&2; return 1; }
    for cpu_paths in "$@"; do
      cpu=${cpu_paths%%:*}
      for path in ${cpu_paths#*:}; do
        got=$(QEMU_CPU=$cpu "${EA_ARM_QEMU[@]}" "$bench" "$dir/$model.eatn" --path "$path" \
                --warmup 0 --iters 1 | ea_arm_hashes)
        if [[ $got != "$want" ]]; then
          echo "arm: $name $model path $path (cpu $cpu) differs from host ref:" >&2
          diff <(echo "$want") <(echo "$got") >&2 || true
          return 1
        fi
        echo "arm: $name $model path=$path cpu=$cpu: hashes equal host ref"
      done
    done
  done
}

# "layer hash" lines of edgeattn-bench's table (last column = output hash).
ea_arm_hashes() {
  awk '$2 ~ /^(mha|additive|pooling)$/ { print $1, $NF }'
}

stage_arm() {
  ea_arm_deps
  if [[ ! -x $ROOT/build/host/converter/edgeattn-convert || ! -x $ROOT/build/host/bench/edgeattn-bench ||
        ! -f $ROOT/build/host/tests/runtime/models/fixture_int8.eatn ]]; then
    header "arm: host converter/bench/fixtures missing, building them in build/host"
    cmake -S "$ROOT" -B "$ROOT/build/host" -DCMAKE_BUILD_TYPE=Release -DEA_BUILD_TESTS=ON > /dev/null
    cmake --build "$ROOT/build/host" -j"$JOBS" --target edgeattn-convert edgeattn-bench edgeattn_test_models
  fi

  header "arm: the documented one-command cross build (cmake --workflow --preset aarch64)"
  cmake --workflow --preset aarch64 > "$ROOT/build/preset-aarch64.log" 2>&1 ||
    { tail -30 "$ROOT/build/preset-aarch64.log" >&2; return 1; }
  [[ -x $ROOT/build/release-aarch64/bench/edgeattn-bench ]] ||
    { echo "arm: the aarch64 preset did not produce edgeattn-bench" >&2; return 1; }

  ea_arm_build aarch64 aarch64-linux-gnu.cmake
  local cpu
  for cpu in cortex-a53 cortex-a76; do
    header "arm: ctest build/aarch64 under QEMU_CPU=$cpu"
    QEMU_CPU=$cpu ctest --test-dir "$ROOT/build/aarch64" --output-on-failure --no-tests=error -j"$JOBS" \
      ${EA_ARM_CTEST_EXCLUDE:+-E "$EA_ARM_CTEST_EXCLUDE"}
  done
  EA_ARM_QEMU=(qemu-aarch64 -L /usr/aarch64-linux-gnu)
  header "arm: edgeattn-bench aarch64 vs host ref"
  ea_arm_bench_check aarch64 "cortex-a53:ref neon" "cortex-a76:neon neondot"

  ea_arm_build armv7 arm-linux-gnueabihf.cmake
  header "arm: ctest build/armv7 (qemu-arm -cpu cortex-a15)"
  ctest --test-dir "$ROOT/build/armv7" --output-on-failure --no-tests=error -j"$JOBS" \
    ${EA_ARM_CTEST_EXCLUDE:+-E "$EA_ARM_CTEST_EXCLUDE"}
  EA_ARM_QEMU=(qemu-arm -L /usr/arm-linux-gnueabihf -cpu cortex-a15)
  header "arm: edgeattn-bench armv7 vs host ref"
  ea_arm_bench_check armv7 "cortex-a15:ref neon"
}
