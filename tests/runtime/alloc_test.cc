// Proves the runtime allocates nothing: global operator new/delete (all
// forms) and malloc/calloc/realloc/free/aligned variants are replaced here and
// count calls while `g_armed` is set. The model file is read into memory
// before arming; from the start of Model::Load to the end of the last Run
// (every layer, CacheKeys, cached runs, KV-cache steps, attention weights output) the count
// must stay 0. No gtest macro runs while armed (failure messages allocate):
// results are recorded in plain arrays and checked after disarming.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "edgeattn/edgeattn.h"
#include "edgeattn/edgeattn.hpp"
#include "test_models.h"
#ifndef EA_ALLOC_TEST_NO_THREADS
#include "thread_pool.hpp"
#endif
#ifdef EA_TEST_PTHREADPOOL
#include "edgeattn/pthreadpool_executor.h"
#endif

extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void __libc_free(void*);
void* __libc_memalign(size_t, size_t);
}

namespace {
volatile bool g_armed = false;
volatile long g_count = 0;
inline void Note() {
  if (g_armed) g_count = g_count + 1;
}
}  // namespace

// ---- C allocation functions (glibc: the __libc_* entry points are exported)
extern "C" {
void* malloc(size_t n) {
  Note();
  return __libc_malloc(n);
}
void* calloc(size_t n, size_t m) {
  Note();
  return __libc_calloc(n, m);
}
void* realloc(void* p, size_t n) {
  Note();
  return __libc_realloc(p, n);
}
void free(void* p) {
  if (p != nullptr) Note();
  __libc_free(p);
}
void* memalign(size_t a, size_t n) {
  Note();
  return __libc_memalign(a, n);
}
void* aligned_alloc(size_t a, size_t n) {
  Note();
  return __libc_memalign(a, n);
}
int posix_memalign(void** out, size_t a, size_t n) {
  Note();
  void* p = __libc_memalign(a, n);
  if (p == nullptr) return 12;  // ENOMEM
  *out = p;
  return 0;
}
}

// ---- C++ operators (forward to the counted malloc; they count once more, harmless)
void* operator new(size_t n) {
  Note();
  void* p = __libc_malloc(n ? n : 1);
  if (p == nullptr) std::abort();
  return p;
}
void* operator new[](size_t n) { return operator new(n); }
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  Note();
  return __libc_malloc(n ? n : 1);
}
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return operator new(n, std::nothrow); }
void* operator new(size_t n, std::align_val_t a) {
  Note();
  void* p = __libc_memalign(static_cast<size_t>(a), n ? n : 1);
  if (p == nullptr) std::abort();
  return p;
}
void* operator new[](size_t n, std::align_val_t a) { return operator new(n, a); }
void* operator new(size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  Note();
  return __libc_memalign(static_cast<size_t>(a), n ? n : 1);
}
void* operator new[](size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return operator new(n, a, std::nothrow);
}
void operator delete(void* p) noexcept {
  if (p != nullptr) Note();
  __libc_free(p);
}
void operator delete[](void* p) noexcept { operator delete(p); }
void operator delete(void* p, size_t) noexcept { operator delete(p); }
void operator delete[](void* p, size_t) noexcept { operator delete(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { operator delete(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { operator delete(p); }
void operator delete(void* p, std::align_val_t) noexcept { operator delete(p); }
void operator delete[](void* p, std::align_val_t) noexcept { operator delete(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { operator delete(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { operator delete(p); }

namespace {

using edgeattn::Interpreter;
using edgeattn::LayerInfo;
using edgeattn::Model;
using edgeattn::RunArgs;
using edgeattn::Status;

void Arm() {
  g_count = 0;
  g_armed = true;
}
long Disarm() {
  g_armed = false;
  return g_count;
}

// The counter must be able to see allocations, or the zero below means nothing.
int* volatile g_sink_int = nullptr;
void* volatile g_sink_ptr = nullptr;

TEST(AllocCounter, CountsNewAndMalloc) {
  Arm();
  g_sink_int = new int(7);
  const long after_new = g_count;
  delete g_sink_int;
  g_sink_ptr = std::malloc(32);
  std::free(g_sink_ptr);
  g_sink_int = new int[3];
  delete[] g_sink_int;
  const long total = Disarm();
  EXPECT_GE(after_new, 1) << "operator new was not counted";
  EXPECT_GE(total, 6) << "new, delete, malloc, free, new[], delete[] should all count";
}

TEST(AllocCounter, CountsStdContainers) {
  Arm();
  {
    std::vector<int> v(100);
    g_sink_ptr = v.data();
  }
  const long total = Disarm();
  EXPECT_GE(total, 2);
}

constexpr int kMaxRuns = 256;

// Everything the armed section needs, prepared (and allocated) beforehand.
struct Prepared {
  eatest::AlignedBuffer file;
  eatest::AlignedBuffer arena;
  std::vector<eatest::LayerIo> io;      // one per layer
  std::vector<LayerInfo> info;          // filled by a dry load
};

class EveryModelAlloc : public ::testing::TestWithParam<std::string> {};

// XNNPACK backend: operators and packed weights are placed in this much arena
// after the plan's bytes.
constexpr size_t kXnnpackArenaBytes = size_t{4} << 20;

// The whole Load -> Init [-> UseExecutor] [-> UseXnnpack] -> Run sequence of
// one model, armed. With `pool` (created before arming: its threads are
// allocated then) every part is split over its workers (SetMinTaskWork(0)),
// and allocations on the pool's threads count too.
constexpr int kPoolWorkers = 3;
void CheckZeroAllocations(const std::string& name, bool xnnpack, const ea_executor* pool = nullptr) {
  static Model model;  // storage outside the armed section; Load only fills it
  static Interpreter interp;
  Prepared p;
  ASSERT_TRUE(eatest::ReadFile(eatest::ModelPath(name), &p.file));
  {
    // Dry load (unarmed) to size the arena and the layer buffers.
    Model dry;
    ASSERT_EQ(dry.Load(p.file.data(), p.file.size()), Status::kOk) << dry.error();
    p.arena.Reset(dry.ArenaBytesForWorkers(pool != nullptr ? kPoolWorkers : 1) + dry.RangeBytes(0, 0) +
                  (xnnpack ? kXnnpackArenaBytes : 0));
    eatest::Rng rng(42);
    for (int l = 0; l < dry.num_layers(); ++l) {
      LayerInfo info;
      ASSERT_EQ(dry.GetLayerInfo(l, &info), Status::kOk);
      p.info.push_back(info);
      p.io.emplace_back();
      p.io.back().Make(info, info.max_q_len, info.max_kv_len, rng);
    }
  }
  eatest::GraphIo graph;  // a model with a graph: one Invoke as well
  edgeattn::GraphInfo graph_info;
  {
    Model dry;
    ASSERT_EQ(dry.Load(p.file.data(), p.file.size()), Status::kOk);
    if (dry.GetGraphInfo(&graph_info) == Status::kOk) {
      eatest::Rng rng(43);
      graph.Make(graph_info, rng);
    }
  }
  std::vector<RunArgs> args(p.io.size() * 4);
  for (size_t l = 0; l < p.io.size(); ++l) {
    args[4 * l] = p.io[l].Args(-1, true);                              // with weights
    args[4 * l + 1] = p.io[l].Args(p.io[l].kv_len > 1 ? 1 : -1, false);  // padding, no weights
    args[4 * l + 2] = p.io[l].Args(-1, true);                          // cached keys
    args[4 * l + 2].use_cached_keys = 1;  // key/value pointers stay set (ignored): this test is about allocation
  }
  // Range mode's float inputs (N(0, 2): beyond most calibrated ranges).
  std::vector<std::vector<float>> floats(p.io.size() * 4);
  std::vector<RunArgs> float_args(p.io.size());
  {
    eatest::Rng rng(7);
    for (size_t l = 0; l < p.io.size(); ++l) {
      const LayerInfo& info = p.info[l];
      const eatest::LayerIo& io = p.io[l];
      const size_t n[4] = {static_cast<size_t>(io.q_len) * info.query_dim,
                           static_cast<size_t>(io.kv_len) * info.key_dim,
                           static_cast<size_t>(io.kv_len) * info.value_dim,
                           static_cast<size_t>(io.q_len) * info.output_dim};
      for (int t = 0; t < 4; ++t) {
        floats[4 * l + t].resize(n[t]);
        for (float& x : floats[4 * l + t]) x = static_cast<float>(2.0 * rng.normal());
      }
      RunArgs& a = float_args[l];
      a = p.io[l].Args(-1, true);  // q_len, kv_len, Q15 weights as for the int8 run
      a.query = io.query.empty() ? nullptr : floats[4 * l].data();
      a.key = io.key.empty() ? nullptr : floats[4 * l + 1].data();
      a.value = io.value.empty() ? nullptr : floats[4 * l + 2].data();
      a.output = floats[4 * l + 3].data();
    }
  }
  Status statuses[kMaxRuns];
  char first_error[EA_ERROR_MESSAGE_BYTES] = {0};
  int n_status = 0;
  // Records a status; keeps the message of the first failure (no allocation).
  auto record = [&](Status st) {
    if (st != Status::kOk && first_error[0] == 0) {
      std::strncpy(first_error, interp.error()[0] ? interp.error() : model.error(), sizeof(first_error) - 1);
    }
    statuses[n_status++] = st;
  };

  Arm();
  record(model.Load(p.file.data(), p.file.size()));
  record(interp.Init(&model, p.arena.data(), p.arena.size()));
  if (pool != nullptr) {
    interp.SetMinTaskWork(0);
    record(interp.UseExecutor(pool));
  }
  if (xnnpack) record(interp.UseXnnpack());
  for (size_t l = 0; l < p.io.size() && n_status + 4 < kMaxRuns; ++l) {
    const int layer = static_cast<int>(l);
    record(interp.Run(layer, args[4 * l]));
    record(interp.Run(layer, args[4 * l + 1]));
    const LayerInfo& info = p.info[l];
    const bool cacheable = (info.kind == EA_LAYER_MULTI_HEAD_ATTENTION && info.cross) || info.kind == EA_LAYER_ADDITIVE ||
                           info.kind == EA_LAYER_DECODER_BLOCK;
    if (cacheable) {
      record(interp.CacheKeys(layer, p.io[l].key.data(), p.io[l].value.data(), p.io[l].kv_len, -1));
      record(interp.Run(layer, args[4 * l + 2]));
    }
    if (info.coverage) {  // coverage decoding: a new sequence, then two one-row cached steps
      RunArgs step = args[4 * l + 2];
      step.q_len = 1;
      record(interp.BeginSequence(layer));
      for (int t = 0; t < 2 && n_status + 2 < kMaxRuns; ++t) record(interp.Run(layer, step));
    }
    // Range mode is for the attention kinds (the block kinds refuse it).
    const bool attention_kind = info.kind == EA_LAYER_MULTI_HEAD_ATTENTION || info.kind == EA_LAYER_ADDITIVE ||
                                info.kind == EA_LAYER_LUONG || info.kind == EA_LAYER_POOLING;
    if (attention_kind && info.dtype == EA_S8 && n_status + 3 < kMaxRuns) {  // range mode: int8 at R, float in/out
      record(interp.RunScaled(layer, args[4 * l], 3 * Interpreter::kRangeOne / 2));
      record(interp.RunFloat(layer, float_args[l], EA_RANGE_DYNAMIC, nullptr));
      record(interp.RunFloat(layer, float_args[l], EA_RANGE_DYNAMIC_POW2, nullptr));
    }
    if (info.kv_cache) {  // decoding: a new sequence, then two steps with weights
      record(interp.BeginSequence(layer));
      for (int t = 0; t < 2 && n_status + 2 < kMaxRuns; ++t) {
        record(interp.Step(layer, args[4 * l].query, args[4 * l].output, args[4 * l].attn_weights));
      }
    }
  }
  if (model.has_graph()) record(graph.Run(interp));  // Invoke, or Generate for a generating graph
  // Error paths must not allocate either (messages are formatted in place).
  RunArgs bad = {};
  const Status bad_status = interp.Run(1000, bad);
  Model bad_model;
  const Status bad_load = bad_model.Load(p.file.data(), 3);
  const long count = Disarm();

  EXPECT_EQ(count, 0) << name << ": " << count << " heap calls between Model::Load and the last Run";
  for (int i = 0; i < n_status; ++i) {
    EXPECT_EQ(statuses[i], Status::kOk) << name << " call " << i << " (first error: " << first_error << ")";
  }
  EXPECT_EQ(bad_status, Status::kInvalidArgument);
  EXPECT_EQ(bad_load, Status::kInvalidModel);
  if (!graph.input.empty() && !graph.generates()) EXPECT_EQ(graph.out.num_rows, graph_info.max_output_rows) << name;
  if (graph.generates()) EXPECT_EQ(graph.num_tokens, graph_info.max_tokens) << name << ": every token, no EOS";
  if (pool != nullptr) EXPECT_EQ(interp.workers(), kPoolWorkers);
  interp.SetMinTaskWork(Interpreter::kMinTaskWork);
  // The bundled Bahdanau model's projections (64 -> 32) are XNNPACK-eligible:
  // this proves the XNNPACK path really ran inside the armed section.
  if (xnnpack && name == "bahdanau_int8") {
    EXPECT_EQ(interp.xnnpack_ops(), 2);
    EXPECT_GT(interp.xnnpack_bytes(), 0u);
  }
}

TEST_P(EveryModelAlloc, ZeroAllocationsFromLoadToLastRun) { CheckZeroAllocations(GetParam(), false); }

// XnnpackInitialize (once per process: XNNPACK's cpuinfo mallocs its CPU
// tables) runs before arming; from Load on, XNNPACK allocates only from the arena.
TEST_P(EveryModelAlloc, XnnpackZeroAllocationsFromLoadToLastRun) {
  if (!edgeattn::XnnpackBuilt()) GTEST_SKIP() << "built without the XNNPACK backend";
  ASSERT_EQ(edgeattn::XnnpackInitialize(), Status::kOk);
  CheckZeroAllocations(GetParam(), true);
}

// With the caller's thread pool: the std::thread pool of targets/linux and
// pthreadpool (when the build has it), each created before arming.
#ifndef EA_ALLOC_TEST_NO_THREADS
TEST_P(EveryModelAlloc, ThreadPoolZeroAllocationsFromLoadToLastRun) {
  edgeattn_linux::ThreadPool threads(kPoolWorkers);
  const ea_executor ex = threads.executor();
  CheckZeroAllocations(GetParam(), false, &ex);
}
#endif

#ifdef EA_TEST_PTHREADPOOL
TEST_P(EveryModelAlloc, PthreadpoolZeroAllocationsFromLoadToLastRun) {
  pthreadpool_t pp = pthreadpool_create(kPoolWorkers);
  ASSERT_NE(pp, nullptr);
  const ea_executor ex = ea_pthreadpool_executor(pp);
  CheckZeroAllocations(GetParam(), false, &ex);
  pthreadpool_destroy(pp);
}
#endif

TEST_P(EveryModelAlloc, CApiZeroAllocations) {
  eatest::AlignedBuffer file;
  ASSERT_TRUE(eatest::ReadFile(eatest::ModelPath(GetParam()), &file));
  static ea_model model;
  static ea_interpreter interp;
  eatest::AlignedBuffer arena(1 << 20);
  Arm();
  const ea_status s1 = ea_model_load(&model, file.data(), file.size());
  const size_t need = ea_model_arena_bytes(&model);
  const ea_status s2 = need <= arena.size() ? ea_interpreter_init(&interp, &model, arena.data(), need) : EA_ARENA_TOO_SMALL;
  ea_layer_info info;
  const ea_status s3 = ea_model_layer_info(&model, 0, &info);
  const long count = Disarm();
  EXPECT_EQ(count, 0) << GetParam();
  EXPECT_EQ(s1, EA_OK) << ea_model_error(&model);
  EXPECT_EQ(s2, EA_OK) << "arena needs " << need;
  EXPECT_EQ(s3, EA_OK);
}

INSTANTIATE_TEST_SUITE_P(Models, EveryModelAlloc, ::testing::ValuesIn(eatest::AllModels()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
