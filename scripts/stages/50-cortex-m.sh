# shellcheck shell=bash
# Stage cortex-m: bare-metal Cortex-M firmware under qemu-system-arm on two
# boards, mps2-an386 (Cortex-M4F) and mps3-an547 (Cortex-M55 + Helium).
# See targets/cortex-m/README.md. Per board: build/cortex-m/<board>, CTest:
#   - the heap is forbidden: firmware calling malloc / new / throw must fail to link
#   - the firmware example: bundled int8 models as --emit-c arrays, outputs
#     bit-exact with the host reference path (golden vectors), arenas of exactly
#     the converter's size; a build one arena byte short reports EA_ARENA_TOO_SMALL
#   - the whole-model firmware: a KWT-shaped keyword spotter (edgeattn-kwt-model)
#     run with one ea_interpreter_invoke per input, linked with only its layer
#     kinds, its logits bit-exact with the host's Invoke on the reference path
#   - the generation firmware: the bundled seq2seq transformer as one file, one
#     ea_interpreter_generate per source, its tokens equal to the host's Generate
#     on the reference path (edgeattn-golden-generate)
#   - edgeattn-bench on the board (deterministic instruction counts)
#   - the fuzz_paths corpus replay: int8 inputs of tests/fuzz/corpus/paths and
#     of the generated seeds on ref and the board's path against the host ref
#     path (paths_replay/)
# Host tools: edgeattn-convert from build/host when the host stage built it,
# else from build/cortex-m/host; edgeattn-golden, edgeattn-golden-graph,
# edgeattn-golden-generate, edgeattn-kwt-model, edgeattn-paths-seeds and edgeattn-paths-cases from
# build/cortex-m/host (linking build/host's libraries
# when it exists).
EA_STAGES+=(cortex-m)

stage_cortex-m() {
  header "cortex-m: packages"
  ea_deps_ensure_set host
  ea_deps_ensure_packages gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-dev \
    qemu-system-arm

  local host_dir="$ROOT/build/cortex-m/host" converter reuse=()
  if [[ -f $ROOT/build/host/CMakeCache.txt ]]; then
    header "cortex-m: host converter (build/host)"
    cmake --build "$ROOT/build/host" -j"$JOBS" --target edgeattn-convert
    converter="$ROOT/build/host/converter/edgeattn-convert"
    reuse=(-DEA_HOST_BUILD_DIR="$ROOT/build/host")
  else
    converter="$host_dir/edgeattn/converter/edgeattn-convert"
  fi
  header "cortex-m: host golden-vector generator"
  cmake -S "$ROOT/targets/cortex-m/golden" -B "$host_dir" -DCMAKE_BUILD_TYPE=Release "${reuse[@]}"
  cmake --build "$host_dir" -j"$JOBS"

  local board dir
  for board in mps2-an386 mps3-an547; do
    dir="$ROOT/build/cortex-m/$board"
    header "cortex-m: $board configure + build"
    cmake -S "$ROOT/targets/cortex-m" -B "$dir" \
      -DCMAKE_TOOLCHAIN_FILE="$ROOT/targets/cortex-m/toolchain-arm-none-eabi.cmake" \
      -DEA_CM_BOARD="$board" -DEA_HOST_CONVERTER="$converter" \
      -DEA_HOST_GOLDEN="$host_dir/edgeattn-golden" \
      -DEA_HOST_PATHS_CASES="$host_dir/edgeattn-paths-cases" \
      -DEA_HOST_PATHS_SEEDS="$host_dir/edgeattn-paths-seeds"
    cmake --build "$dir" -j"$JOBS"
    header "cortex-m: $board ctest (qemu-system-arm -icount shift=0)"
    ctest --test-dir "$dir" --output-on-failure --no-tests=error
    arm-none-eabi-size "$dir/example/ea_cm_example" "$dir/example/ea_cm_model" "$dir/example/ea_cm_generate" \
      "$dir/paths_replay/ea_cm_paths_replay"
  done
}
