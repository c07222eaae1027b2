#!/usr/bin/env bash
# Builds and tests edgeattn. Used by CI (.ci/run) and by developers.
#
#   scripts/test.sh            run every stage in EA_STAGES order
#   scripts/test.sh host       run only the named stage(s)
#
# Each stage is a function `stage_<name>`; a new target (aarch64 under qemu,
# armv7, Cortex-M, sanitizers, ...) is one more function plus its name in
# EA_STAGES. Stages stop at the first failure and the script exits non-zero.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=scripts/deps.sh
source "$ROOT/scripts/deps.sh"
# shellcheck source=scripts/kinds.sh
source "$ROOT/scripts/kinds.sh"

JOBS=${EA_JOBS:-2}
# build/host's configuration (the host stage's, and the other stages' when they
# need build/host first). EA_UNITY_BUILD: the converter library and the tests
# compile in batches (CMakeLists.txt; about 40 % less compile time for them).
EA_HOST_CMAKE_ARGS=(-DCMAKE_BUILD_TYPE=Release -DEA_BUILD_TESTS=ON -DEA_UNITY_BUILD=ON)
# Every other test tree's (sanitizers, Arm): also CTest per GoogleTest program,
# in shards, not per case (tests/CMakeLists.txt, EA_CTEST_PER_PROGRAM: a
# process start costs ~0.12 CPU-s under ASan or qemu-user).
EA_TEST_TREE_ARGS=(-DEA_BUILD_TESTS=ON -DEA_UNITY_BUILD=ON -DEA_CTEST_PER_PROGRAM=ON)
EA_STAGES=(deps host)

header() {
  printf '\n=== %s ===\n' "$*"
}

# Shared by the x86 and arm stages: edgeattn-bench output hashes of the
# bundled int8 models on another machine (qemu) against build/host's ref path.
# (Float models are not compared: libm's expf/tanhf differ in the last bit
# between architectures, so float results match within a tolerance only.)
#
#   ea_bench_hashes_match <label> <bench command...>
#
# runs `<bench command...> MODEL --warmup 0 --iters 1` on each model of
# EA_BENCH_HASH_MODELS and compares its "layer hash" lines (ea_bench_hash_lines,
# scripts/kinds.sh: every kind's rows) with `build/host/bench/edgeattn-bench
# MODEL --path ref`. The models (converted by build/host's converter) and the
# reference lines are made once per converter build in build/host/bench-hashes/.
# <model>_out16: models/<model> with --residual int16 (its mha outputs int16, contract 5c-out).
EA_BENCH_HASH_MODELS=(transformer bahdanau pooling coverage encoder_block decoder_chain digits_vit transformer_out16)
EA_BENCH_HASH_DIR="$ROOT/build/host/bench-hashes"
ea_bench_hash_reference() {
  local model=$1 eatn="$EA_BENCH_HASH_DIR/$1_int8.eatn" want="$EA_BENCH_HASH_DIR/$1_int8.want"
  local convert="$ROOT/build/host/converter/edgeattn-convert" bench="$ROOT/build/host/bench/edgeattn-bench"
  local src=${model%_out16} args=()
  [[ $model == *_out16 ]] && args=(--residual int16)
  if [[ -s $want && $want -nt $convert && $want -nt $bench ]]; then return 0; fi
  mkdir -p "$EA_BENCH_HASH_DIR"
  "$convert" convert --weights "$ROOT/models/$src/weights.safetensors" --spec "$ROOT/models/$src/spec.json" \
    --calib "$ROOT/models/$src/calib.npz" --dtype int8 "${args[@]}" -o "$eatn" > /dev/null
  "$bench" "$eatn" --path ref --warmup 0 --iters 1 | ea_bench_hash_lines > "$want.tmp"
  [[ -s $want.tmp ]] || { echo "no hashes from the host bench for $model" >&2; return 1; }
  mv "$want.tmp" "$want"
}
ea_bench_hashes_match() {
  local label=$1; shift
  local model got
  for model in "${EA_BENCH_HASH_MODELS[@]}"; do
    ea_bench_hash_reference "$model" || return
    got=$("$@" "$EA_BENCH_HASH_DIR/${model}_int8.eatn" --warmup 0 --iters 1 | ea_bench_hash_lines)
    if [[ $got != "$(cat "$EA_BENCH_HASH_DIR/${model}_int8.want")" ]]; then
      echo "$label: ${model}_int8 differs from the host ref path:" >&2
      diff "$EA_BENCH_HASH_DIR/${model}_int8.want" <(echo "$got") >&2 || true
      return 1
    fi
    echo "$label: ${model}_int8: hashes equal the host ref path"
  done
}

# Debian packages for every stage that will run.
stage_deps() {
  header "deps: Debian packages"
  ea_deps_ensure_set host
}

# Native x86-64 Linux, Release, portable reference kernels, full CTest suite
# (includes tests/consumer: install + find_package from a separate project).
stage_host() {
  header "host: configure build/host (Release, tests on)"
  cmake -S "$ROOT" -B "$ROOT/build/host" "${EA_HOST_CMAKE_ARGS[@]}"
  header "host: build (-j$JOBS)"
  cmake --build "$ROOT/build/host" -j"$JOBS"
  header "host: ctest"
  ctest --test-dir "$ROOT/build/host" --output-on-failure --no-tests=error -j"$JOBS"
}

# Further targets (sanitizers, fuzzing, aarch64/armv7 under qemu-user,
# Cortex-M under qemu-system-arm) live in scripts/stages/NN-name.sh: each file
# defines stage_<name> (installing its own packages with ea_deps_ensure_*)
# and appends its name to EA_STAGES. They run in file-name order after host.
for stage_file in "$ROOT"/scripts/stages/*.sh; do
  [[ -e $stage_file ]] || continue
  # shellcheck source=/dev/null
  source "$stage_file"
done

on_exit() {
  local status=$?
  if [[ $status -ne 0 ]]; then
    echo >&2
    echo "test.sh: FAILED in stage ${EA_CURRENT_STAGE:-?} (exit $status)" >&2
  fi
}

main() {
  local stages=("$@") stage start results=()
  if [[ ${#stages[@]} -eq 0 ]]; then stages=("${EA_STAGES[@]}"); fi
  for stage in "${stages[@]}"; do
    if ! declare -F "stage_$stage" > /dev/null; then
      echo "test.sh: unknown stage '$stage' (known: ${EA_STAGES[*]})" >&2
      exit 2
    fi
  done
  trap on_exit EXIT
  for stage in "${stages[@]}"; do
    start=$SECONDS
    EA_CURRENT_STAGE=$stage
    "stage_$stage"
    results+=("$(printf '  %-10s ok  %4ds' "$stage" $((SECONDS - start)))")
  done
  header "summary"
  printf '%s\n' "${results[@]}"
  echo "test.sh: all stages passed"
  echo "stages: ${#stages[@]} passed, 0 failed"
}

main "$@"
