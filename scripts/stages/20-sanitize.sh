# shellcheck shell=bash
# Stage "sanitize": the whole host test suite under AddressSanitizer +
# UndefinedBehaviorSanitizer in one clang tree (build/asan, -O1 -g1) that also
# holds the libFuzzer targets the fuzz stage runs, then the thread pool tests
# (threads_test: the std::thread pool running the layers; Debian's pthreadpool
# is not instrumented) under ThreadSanitizer (build/tsan, GCC, models converted
# by the host stage's converter). Any report fails the stage
# (-fno-sanitize-recover=all makes UBSan fatal, ASan and TSan always are).
#
# Why one clang tree: clang compiles this code base with ASan in about half
# GCC's time (27 s against 14 s for the largest test file), and the fuzz
# stage no longer builds the runtime, kernels and converter a second time.
# The libraries carry libFuzzer's coverage instrumentation
# (-fsanitize=fuzzer-no-link, tests/fuzz/CMakeLists.txt); in the tests the
# sanitizer runtime's no-op hooks take it. GCC keeps the host, x86, arm and
# TSan builds. -O1 with line tables only (-g1): reports keep file:line stacks.
# Sourced by scripts/test.sh.

EA_SANITIZE_FLAGS=(-DCMAKE_BUILD_TYPE=RelWithDebInfo
                   "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
                   "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG")

# ea_asan_configure: configures build/asan (clang, ASan + UBSan, tests and
# fuzzers) and sets EA_ASAN_DIR; shared by the sanitize and fuzz stages.
ea_asan_configure() {
  ea_deps_ensure_set host
  ea_deps_ensure_packages clang libclang-rt-14-dev llvm
  EA_ASAN_DIR="$ROOT/build/asan"
  header "configure $EA_ASAN_DIR (clang, -O1 -g1, -fsanitize=address,undefined, tests + fuzzers)"
  CC=clang CXX=clang++ cmake -S "$ROOT" -B "$EA_ASAN_DIR" "${EA_SANITIZE_FLAGS[@]}" \
        "${EA_TEST_TREE_ARGS[@]}" -DEA_BUILD_BENCH=OFF -DEA_BUILD_FUZZERS=ON \
        -DEA_SANITIZE=address,undefined -DEA_FUZZ_SKIP_KNOWN_BUGS="${EA_FUZZ_SKIP_KNOWN_BUGS:-OFF}"
}

stage_sanitize() {
  header "sanitize: Debian packages"
  ea_asan_configure
  local dir=$EA_ASAN_DIR
  header "sanitize: build (-j$JOBS)"
  cmake --build "$dir" -j"$JOBS"
  header "sanitize: ctest"
  # alloc_test (replaces malloc with glibc's entry points) and the consumer
  # install test (links without the sanitizer runtime) are not built with
  # EA_SANITIZE; both run in the host stage.
  # detect_leaks: the converter and tests allocate; the runtime must not leak either.
  ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1} \
  UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
    ctest --test-dir "$dir" --output-on-failure --no-tests=error -j"$JOBS"

  local tsan="$ROOT/build/tsan" convert="$ROOT/build/host/converter/edgeattn-convert"
  if [[ ! -x $convert ]]; then
    echo "sanitize: ThreadSanitizer needs the host stage's $convert (scripts/test.sh host first)" >&2
    return 1
  fi
  header "sanitize: configure $tsan (-O1 -g1, -fsanitize=thread, host converter)"
  cmake -S "$ROOT" -B "$tsan" "${EA_SANITIZE_FLAGS[@]}" "${EA_TEST_TREE_ARGS[@]}" -DEA_BUILD_BENCH=OFF \
        -DEA_BUILD_CONVERTER=OFF -DEA_HOST_CONVERTER="$convert" -DEA_SANITIZE=thread
  header "sanitize: build threads_test (-j$JOBS)"
  cmake --build "$tsan" -j"$JOBS" --target threads_test
  header "sanitize: threads_test under ThreadSanitizer"
  TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1} \
    ctest --test-dir "$tsan" --output-on-failure --no-tests=error -j"$JOBS" -L threads
}

EA_STAGES+=(sanitize)
