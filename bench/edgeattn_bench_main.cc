// edgeattn-bench: latency of every layer of a .eatn model on the device it
// runs on. Dependency-free (no Google Benchmark) and heap-free: the model,
// arena and I/O live in static buffers; output is formatted on the stack and
// written with write(2).
//
//   edgeattn-bench MODEL.eatn [--q-len N] [--kv-len N] [--warmup N] [--iters N]
//                  [--layer NAME] [--path NAME|best] [--cached] [--json] [--xnnpack]
//                  [--threads N]
// --threads N runs the layers on a pool of N workers (the std::thread pool of
// targets/linux/thread_pool.hpp, created before anything is timed); the
// output hashes are the one-thread hashes. With N > 1 it also prints the
// pool's hand-over before and after the layers: every pool call of a layer
// pays it, and on shared or virtual machines it drifts for minutes at a
// time (docs/performance.md), so a multi-worker figure is read beside it.
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "bench_core.h"
#include "edgeattn/edgeattn.hpp"
#include "edgeattn/kernels/dispatch.h"
#include "thread_pool.hpp"

namespace {

constexpr size_t kMaxModelBytes = size_t{64} << 20;
constexpr size_t kArenaBytes = size_t{64} << 20;
constexpr size_t kIoBytes = size_t{32} << 20;
constexpr int kMaxSamples = 100000;

alignas(64) uint8_t g_model[kMaxModelBytes];
alignas(64) uint8_t g_arena[kArenaBytes];
alignas(64) uint8_t g_io[kIoBytes];
uint64_t g_samples[kMaxSamples];

void Print(int fd, const char* fmt, ...) {
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  const int n = std::vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  if (n > 0) {
    const size_t len = static_cast<size_t>(n) < sizeof(line) ? static_cast<size_t>(n) : sizeof(line) - 1;
    if (write(fd, line, len) < 0) return;
  }
}

uint64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

void WriteAll(int fd, const char* text) {
  size_t left = std::strlen(text);
  while (left > 0) {
    const ssize_t n = write(fd, text, left);
    if (n <= 0) return;
    text += n;
    left -= static_cast<size_t>(n);
  }
}

// The kernel paths this build and CPU can run, space separated ("ref avx2 ...").
const char* AvailablePaths() {
  static char list[128];
  list[0] = '\0';
  size_t used = 0;
  for (int i = 0; i < static_cast<int>(edgeattn::kernels::KernelPath::kCount); ++i) {
    const auto p = static_cast<edgeattn::kernels::KernelPath>(i);
    if (!edgeattn::kernels::kernel_path_supported(p)) continue;
    const int n = std::snprintf(list + used, sizeof(list) - used, "%s%s", used ? " " : "",
                                edgeattn::kernels::kernel_path_name(p));
    if (n < 0 || static_cast<size_t>(n) >= sizeof(list) - used) break;
    used += static_cast<size_t>(n);
  }
  return list;
}

// Written whole (longer than Print's line buffer).
void Usage(int fd) {
  WriteAll(fd,
           "usage: edgeattn-bench MODEL.eatn [--q-len N] [--kv-len N] [--warmup N] [--iters N]\n"
           "                      [--layer NAME] [--path NAME|best] [--cached] [--json] [--xnnpack]\n"
           "       edgeattn-bench --list-kinds\n"
           "Times each layer on deterministic pseudo-random inputs (lengths default to the\n"
           "layer's declared maxima) and prints min/median/p90/max latency, the arena bytes,\n"
           "the kernel path and an FNV-1a hash of each output (equal hashes = equal outputs).\n"
           "  --q-len N, --kv-len N  lengths to time (default: the layer's maxima)\n"
           "  --warmup N, --iters N  untimed and timed calls per layer\n"
           "  --layer NAME           time this layer only ('model': a graph model's Invoke only)\n"
           "  --path NAME            force a kernel path (also: EA_KERNEL_PATH=NAME); 'best' is\n"
           "                         the runtime's own choice, the fastest path this build and\n"
           "                         CPU support, ignoring EA_KERNEL_PATH\n"
           "  --cached               time decoder steps with cached key projections; on\n"
           "                         KV-cache layers one Step with --kv-len positions cached\n"
           "  --json                 print JSON instead of a table\n"
           "  --list-kinds           print the name of every layer kind, one per line (the\n"
           "                         table's kind column), and exit\n"
           "  --xnnpack              run int8 projections with in_features % 16 == 0 through\n"
           "                         XNNPACK (builds with the backend only); the rest stays on\n"
           "                         the kernel path\n"
           "  --threads N            run on a pool of N workers (N - 1 threads + this one); the\n"
           "                         output hashes do not change with N\n");
  Print(fd, "kernel paths available here: %s\n", AvailablePaths());
}

// A command-line mistake: one line naming it, exit status 2.
int UsageError(const char* fmt, const char* what) {
  char msg[256];
  std::snprintf(msg, sizeof(msg), fmt, what);
  Print(2, "edgeattn-bench: %s (see --help)\n", msg);
  return 2;
}

bool ParseInt(const char* s, int* out) {
  char* end = nullptr;
  const long v = std::strtol(s, &end, 10);
  if (end == s || *end != '\0' || v < 0 || v > 1000000000) return false;
  *out = static_cast<int>(v);
  return true;
}

bool ReadModel(const char* path, size_t* size) {
  const int fd = open(path, O_RDONLY);
  if (fd < 0) return false;
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size <= 0 || static_cast<size_t>(st.st_size) > kMaxModelBytes) {
    close(fd);
    return false;
  }
  size_t done = 0;
  while (done < static_cast<size_t>(st.st_size)) {
    const ssize_t n = read(fd, g_model + done, static_cast<size_t>(st.st_size) - done);
    if (n <= 0) {
      close(fd);
      return false;
    }
    done += static_cast<size_t>(n);
  }
  close(fd);
  *size = done;
  return true;
}

double Us(uint64_t ns) { return static_cast<double>(ns) / 1000.0; }

void NoTask(void*, int32_t) {}

// The median time of one parallel_for of `tasks` empty tasks: publishing
// the call, running one task on each worker and every worker checking in.
uint64_t MedianHandoverNs(const ea_executor& e, int tasks) {
  constexpr int kWarmup = 200, kCalls = 2001;
  static uint64_t times[kCalls];
  for (int i = 0; i < kWarmup; ++i) e.parallel_for(e.context, NoTask, nullptr, tasks);
  for (int i = 0; i < kCalls; ++i) {
    const uint64_t t0 = NowNs();
    e.parallel_for(e.context, NoTask, nullptr, tasks);
    times[i] = NowNs() - t0;
  }
  std::nth_element(times, times + kCalls / 2, times + kCalls);
  return times[kCalls / 2];
}

}  // namespace

int main(int argc, char** argv) {
  using edgeattn::Status;
  const char* model_path = nullptr;
  const char* layer_name = nullptr;
  const char* path_name = nullptr;
  bool json = false;
  bool use_xnnpack = false;
  int threads = 1;
  edgeattn::bench::Options options;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const bool has_value = i + 1 < argc;
    if (std::strcmp(a, "--json") == 0) {
      json = true;
    } else if (std::strcmp(a, "--cached") == 0) {
      options.cached = true;
    } else if (std::strcmp(a, "--help") == 0 || std::strcmp(a, "-h") == 0) {
      Usage(1);
      return 0;
    } else if (std::strcmp(a, "--list-kinds") == 0) {
      for (int k = 0; k < EA_LAYER_KIND_COUNT; ++k) {
        const char* kind = ea_layer_kind_name(static_cast<ea_layer_kind>(k));
        if (std::strcmp(kind, "?") != 0) Print(1, "%s\n", kind);  // values the list skips
      }
      return 0;
    } else if (std::strcmp(a, "--q-len") == 0 || std::strcmp(a, "--kv-len") == 0 ||
               std::strcmp(a, "--warmup") == 0 || std::strcmp(a, "--iters") == 0 ||
               std::strcmp(a, "--layer") == 0 || std::strcmp(a, "--path") == 0 ||
               std::strcmp(a, "--threads") == 0) {
      if (!has_value) return UsageError("option %s needs a value", a);
      const char* v = argv[++i];
      int* target = std::strcmp(a, "--q-len") == 0    ? &options.q_len
                    : std::strcmp(a, "--kv-len") == 0 ? &options.kv_len
                    : std::strcmp(a, "--warmup") == 0 ? &options.warmup
                    : std::strcmp(a, "--iters") == 0  ? &options.iters
                    : std::strcmp(a, "--threads") == 0 ? &threads
                                                      : nullptr;
      if (target != nullptr && !ParseInt(v, target)) {
        char what[160];
        std::snprintf(what, sizeof(what), "%s '%.100s'", a, v);
        return UsageError("%s: expected an integer from 0 to 1000000000", what);
      }
      if (std::strcmp(a, "--layer") == 0) layer_name = v;
      if (std::strcmp(a, "--path") == 0) path_name = v;
    } else if (std::strcmp(a, "--xnnpack") == 0) {
      use_xnnpack = true;
    } else if (a[0] != '-' && model_path == nullptr) {
      model_path = a;
    } else if (a[0] != '-') {
      return UsageError("unexpected argument '%s': one model at a time", a);
    } else {
      return UsageError("unknown option '%s'", a);
    }
  }
  if (model_path == nullptr) {
    Usage(2);
    return 2;
  }
  if (threads < 1 || threads > 1024) return UsageError("%s: expected 1 to 1024 threads", "--threads");
  // XNNPACK's one-time CPU detection allocates; it happens before anything is timed.
  if (use_xnnpack && edgeattn::XnnpackInitialize() != Status::kOk) {
    Print(2, "edgeattn-bench: --xnnpack: this build has no XNNPACK backend\n");
    return 1;
  }
  if (path_name != nullptr && std::strcmp(path_name, "best") == 0) {
    // The path the runtime selects by itself (EA_KERNEL_PATH unset).
    path_name = edgeattn::kernels::kernel_path_name(edgeattn::kernels::best_kernel_path());
  }
  if (path_name != nullptr && edgeattn::SetKernelPath(path_name) != Status::kOk) {
    Print(2, "edgeattn-bench: kernel path '%s' is not available in this build or on this CPU "
          "(available: %s, or best)\n", path_name, AvailablePaths());
    return 1;
  }
  size_t size = 0;
  if (!ReadModel(model_path, &size)) {
    Print(2, "edgeattn-bench: %s: cannot read (missing, empty or over %zu bytes)\n", model_path,
          kMaxModelBytes);
    return 1;
  }
  edgeattn::Model model;
  if (model.Load(g_model, size) != Status::kOk) {
    Print(2, "edgeattn-bench: %s: %s\n", model_path, model.error());
    return 1;
  }
  edgeattn::Interpreter interp;
  if (interp.Init(&model, g_arena, sizeof(g_arena)) != Status::kOk) {
    Print(2, "edgeattn-bench: %s: %s\n", model_path, interp.error());
    return 1;
  }
  // The arena is far larger than the plan: the workers' scratch and XNNPACK's
  // operators go after it.
  edgeattn_linux::ThreadPool pool(threads);
  const ea_executor executor = pool.executor();
  if (threads > 1 && interp.UseExecutor(&executor) != Status::kOk) {
    Print(2, "edgeattn-bench: --threads %d: %s\n", threads, interp.error());
    return 1;
  }
  if (use_xnnpack && interp.UseXnnpack() != Status::kOk) {
    Print(2, "edgeattn-bench: %s: %s\n", model_path, interp.error());
    return 1;
  }
  const char* backend = use_xnnpack ? "+xnnpack" : "";
  // --layer model (a graph model without a layer of that name): the whole
  // model's Invoke alone, as a peer's whole-model figure is timed.
  const bool model_only = layer_name != nullptr && std::strcmp(layer_name, "model") == 0 && model.has_graph() &&
                          model.FindLayer("model") < 0;
  if (layer_name != nullptr && model.FindLayer(layer_name) < 0 && !model_only) {
    Print(2, "edgeattn-bench: %s: no layer named '%s' (layers:", model_path, layer_name);
    for (int l = 0; l < model.num_layers(); ++l) {
      edgeattn::LayerInfo info;
      if (model.GetLayerInfo(l, &info) == Status::kOk) Print(2, " %s", info.name);
    }
    Print(2, ")\n");
    return 1;
  }
  const edgeattn::bench::Workspace ws = {g_io, sizeof(g_io), g_samples, kMaxSamples};
  const uint64_t handover_before = threads > 1 ? MedianHandoverNs(executor, threads) : 0;

  if (json) {
    Print(1, "{\"model\": \"%s\", \"kernel_path\": \"%s%s\", \"threads\": %d, \"arena_bytes\": %zu, "
          "\"xnnpack_bytes\": %zu, \"unit\": \"us\", \"layers\": [",
          model_path, edgeattn::KernelPath(), backend, threads, model.ArenaBytesForWorkers(threads),
          interp.xnnpack_bytes());
  } else {
    Print(1, "edgeattn-bench: %s\n  kernel path %s%s, %d thread%s, arena %zu bytes, %d warm-up + %d timed calls "
          "per layer%s\n",
          model_path, edgeattn::KernelPath(), backend, threads, threads == 1 ? "" : "s",
          model.ArenaBytesForWorkers(threads), options.warmup, options.iters, options.cached ? ", keys cached" : "");
    if (threads > 1) {
      Print(1, "  pool hand-over %.3f us per call before the layers (median of 2001 calls of %d empty tasks)\n",
            Us(handover_before), threads);
    }
    if (use_xnnpack) {
      Print(1, "  XNNPACK: %d int8 projections, %zu arena bytes after the plan\n",
            interp.xnnpack_ops(), interp.xnnpack_bytes());
    }
    Print(1, "\n");
    Print(1, "  %-14s %-13s %-5s %5s %5s %10s %10s %10s %10s  %-10s\n", "layer", "kind", "dtype",
          "q", "kv", "min_us", "median_us", "p90_us", "max_us", "output");
  }
  uint64_t total_median = 0, total_min = 0;
  int printed = 0;
  for (int l = 0; l < model.num_layers() && !model_only; ++l) {
    edgeattn::LayerInfo info;
    if (model.GetLayerInfo(l, &info) != Status::kOk) return 1;
    if (layer_name != nullptr && std::strcmp(layer_name, info.name) != 0) continue;
    edgeattn::bench::LayerResult r;
    const char* why = "";
    const Status s = edgeattn::bench::RunLayer(model, interp, l, options, NowNs, ws, &r, &why);
    if (s != Status::kOk) {
      Print(2, "edgeattn-bench: layer '%s': %s: %s%s\n", info.name, edgeattn::status_string(s),
            why, why[0] != '\0' ? "" : interp.error());
      return 1;
    }
    total_median += r.median;
    total_min += r.min;
    if (json) {
      Print(1,
            "%s\n  {\"name\": \"%s\", \"kind\": \"%s\", \"dtype\": \"%s\", \"q_len\": %d, \"kv_len\": %d, "
            "\"min\": %.3f, \"median\": %.3f, \"p90\": %.3f, \"max\": %.3f, \"arena_bytes\": %zu, "
            "\"output_hash\": \"%08x\"}",
            printed ? "," : "", r.name, ea_layer_kind_name(r.kind),
            r.dtype == EA_S8 ? "int8" : "f32", r.q_len, r.kv_len, Us(r.min), Us(r.median), Us(r.p90),
            Us(r.max), r.arena_bytes, r.output_hash);
    } else {
      Print(1, "  %-14s %-13s %-5s %5d %5d %10.2f %10.2f %10.2f %10.2f  %08x\n", r.name,
            ea_layer_kind_name(r.kind), r.dtype == EA_S8 ? "int8" : "f32", r.q_len, r.kv_len,
            Us(r.min), Us(r.median), Us(r.p90), Us(r.max), r.output_hash);
    }
    ++printed;
  }
  if (printed == 0 && !model_only) {
    Print(2, "edgeattn-bench: no layer named '%s'\n", layer_name != nullptr ? layer_name : "");
    return 1;
  }
  // A model with a graph: the whole model in one Invoke too (kind column
  // "graph"; its hash compares across targets like the layers').
  if (model.has_graph() && (layer_name == nullptr || model_only) && !options.cached) {
    edgeattn::bench::LayerResult r;
    const char* why = "";
    const Status s = edgeattn::bench::RunModel(model, interp, options, NowNs, ws, &r, &why);
    if (s != Status::kOk) {
      Print(2, "edgeattn-bench: the model's Invoke: %s: %s%s\n", edgeattn::status_string(s), why,
            why[0] != '\0' ? "" : interp.error());
      return 1;
    }
    if (json) {
      Print(1,
            "%s\n  {\"name\": \"model\", \"kind\": \"graph\", \"dtype\": \"%s\", \"q_len\": %d, \"kv_len\": %d, "
            "\"min\": %.3f, \"median\": %.3f, \"p90\": %.3f, \"max\": %.3f, \"arena_bytes\": %zu, "
            "\"output_hash\": \"%08x\"}",
            printed ? "," : "", r.dtype == EA_S8 ? "int8" : "f32", r.q_len, r.kv_len, Us(r.min), Us(r.median), Us(r.p90), Us(r.max),
            r.arena_bytes, r.output_hash);
    } else {
      Print(1, "  %-14s %-13s %-5s %5d %5d %10.2f %10.2f %10.2f %10.2f  %08x\n", "model", "graph",
            r.dtype == EA_S8 ? "int8" : "f32", r.q_len, r.kv_len, Us(r.min), Us(r.median), Us(r.p90), Us(r.max),
            r.output_hash);
    }
  }
  const uint64_t handover_after = threads > 1 ? MedianHandoverNs(executor, threads) : 0;
  if (json) {
    Print(1, "\n], \"total_median\": %.3f, \"total_min\": %.3f", Us(total_median), Us(total_min));
    if (threads > 1) {
      Print(1, ", \"pool_handover_us\": [%.3f, %.3f]", Us(handover_before), Us(handover_after));
    }
    Print(1, "}\n");
  } else {
    if (threads > 1) Print(1, "  pool hand-over %.3f us per call after the layers\n", Us(handover_after));
    if (!model_only) {
      Print(1, "  %-14s %-13s %-5s %5s %5s %10.2f %10.2f\n", "total", "", "", "", "", Us(total_min),
            Us(total_median));
    }
  }
  return 0;
}
