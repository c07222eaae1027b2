// Runs on the caller's thread pool (ea_executor) give the bytes of a run on
// the caller's thread, for every converted test model, every layer and every
// kernel path this machine has, at T = 2, 3, 4 and 8 workers (oversubscribed
// on small machines), whatever order or thread the pool runs tasks in:
// pools that run the tasks on the calling thread in order, reversed or
// shuffled (every path), the std::thread pool of targets/linux and (when the
// build has it) pthreadpool (the path this CPU runs by default). Every part
// is split as far as the workers allow (SetMinTaskWork(0)), so even the small
// test models take the split paths.
// Also: a pool larger than the arena planned for is refused with the size to
// use, and edgeattn never asks for more tasks than the pool's workers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/kernels/dispatch.h"
#include "loaded_model.h"
#include "test_models.h"
#include "thread_pool.hpp"
#ifdef EA_TEST_PTHREADPOOL
#include "edgeattn/pthreadpool_executor.h"
#endif

namespace {

using edgeattn::Interpreter;
using edgeattn::Model;
using edgeattn::Status;
using eatest::AlignedBuffer;

// A pool that runs every task on the calling thread, in index order,
// reversed, or shuffled by a fixed seed; it records the largest n_tasks it
// was given.
struct OrderPool {
  enum Order { kForward, kReverse, kShuffled };
  int32_t workers;
  Order order;
  uint64_t seed = 1;
  int32_t most_tasks = 0;

  ea_executor executor() {
    ea_executor e;
    e.context = this;
    e.num_threads = [](void* self) { return static_cast<OrderPool*>(self)->workers; };
    e.parallel_for = [](void* self, ea_task_fn task, void* arg, int32_t n) {
      static_cast<OrderPool*>(self)->Run(task, arg, n);
    };
    return e;
  }
  void Run(ea_task_fn task, void* arg, int32_t n) {
    most_tasks = std::max(most_tasks, n);
    std::vector<int32_t> ids(static_cast<size_t>(n));
    for (int32_t i = 0; i < n; ++i) ids[static_cast<size_t>(i)] = order == kReverse ? n - 1 - i : i;
    if (order == kShuffled) {
      eatest::Rng rng(seed++);
      for (size_t i = ids.size(); i > 1; --i) std::swap(ids[i - 1], ids[rng.next() % i]);
    }
    for (int32_t i : ids) task(arg, i);
  }
};

// Everything one layer produces for fixed inputs: a full run (with attention
// weights), a run over a ragged shorter length with padding, a cached-keys
// run (key-cache layers) and a few KV-cache steps (decoding layers).
std::vector<uint8_t> Outputs(Interpreter& interp, const Model& model, int layer, uint64_t seed) {
  edgeattn::LayerInfo info = {};
  EXPECT_EQ(model.GetLayerInfo(layer, &info), Status::kOk);
  std::vector<uint8_t> out;
  auto append = [&](const std::vector<uint8_t>& v) { out.insert(out.end(), v.begin(), v.end()); };
  const int lengths[2] = {info.max_q_len, std::max(1, info.max_q_len - 3)};
  for (int q : lengths) {
    eatest::Rng rng(seed + static_cast<uint64_t>(q));
    eatest::LayerIo io;
    const int kv = info.cross ? std::max(1, info.max_kv_len - (q == info.max_q_len ? 0 : 2)) : q;
    io.Make(info, q, kv, rng);
    const int valid = info.cross && kv > 1 ? kv - 1 : 0;
    if (info.kv_cache) {
      EXPECT_EQ(interp.BeginSequence(layer), Status::kOk) << interp.error();
    }
    EXPECT_EQ(interp.Run(layer, io.Args(valid)), Status::kOk) << interp.error();
    append(io.output);
    append(io.weights);
    // Range mode (int8 attention kinds): biases divided by R once, then split.
    const bool attention_kind = info.kind == EA_LAYER_MULTI_HEAD_ATTENTION || info.kind == EA_LAYER_ADDITIVE ||
                                info.kind == EA_LAYER_LUONG || info.kind == EA_LAYER_POOLING;
    if (attention_kind && info.dtype == EA_S8) {
      EXPECT_EQ(interp.RunScaled(layer, io.Args(valid), 3 * Interpreter::kRangeOne / 2), Status::kOk) << interp.error();
      append(io.output);
    }
    if (info.cross && info.query_dim != 0 && info.kind != EA_LAYER_LUONG) {  // not pooling, row_pool
      EXPECT_EQ(interp.CacheKeys(layer, io.key.data(), io.value.empty() ? nullptr : io.value.data(), kv, valid),
                Status::kOk)
          << interp.error();
      edgeattn::RunArgs a = io.Args(0);
      a.use_cached_keys = 1;
      std::fill(io.output.begin(), io.output.end(), 0xCD);
      EXPECT_EQ(interp.Run(layer, a), Status::kOk) << interp.error();
      append(io.output);
    }
  }
  if (info.kv_cache) {  // prefill 2 rows, then steps
    eatest::Rng rng(seed + 7);
    eatest::LayerIo io;
    io.Make(info, 2, info.cross ? info.max_kv_len : 2, rng);
    EXPECT_EQ(interp.BeginSequence(layer), Status::kOk);
    EXPECT_EQ(interp.Run(layer, io.Args(0)), Status::kOk) << interp.error();
    const size_t row = io.output.size() / 2;
    for (int step = 2; step < std::min(info.max_q_len, 6); ++step) {
      std::vector<uint8_t> q(row), y(row, 0xCD);
      for (uint8_t& b : q) b = static_cast<uint8_t>(rng.next());
      if (info.dtype == EA_F32) {
        for (size_t i = 0; i < row; i += 4) {
          const float f = static_cast<float>(rng.normal());
          std::memcpy(&q[i], &f, 4);
        }
      }
      EXPECT_EQ(interp.Step(layer, q.data(), y.data()), Status::kOk) << interp.error();
      append(y);
    }
  }
  return out;
}

// The whole model's output (Invoke, or Generate's tokens) for a model with a graph, else empty.
std::vector<uint8_t> InvokeOutput(Interpreter& interp, const Model& model, uint64_t seed) {
  edgeattn::GraphInfo g;
  if (model.GetGraphInfo(&g) != Status::kOk) return {};
  eatest::Rng rng(seed);
  eatest::GraphIo io;
  io.Make(g, rng);
  EXPECT_EQ(io.Run(interp), Status::kOk) << interp.error();
  return io.Result();
}

struct PooledModel {
  AlignedBuffer file, arena;
  Model model;
  Interpreter interp;
  // The arena for `workers` (plus range mode's bytes unless exact).
  ::testing::AssertionResult Load(const std::string& name, int workers, bool exact = false) {
    if (!eatest::ReadFile(eatest::ModelPath(name), &file)) return ::testing::AssertionFailure() << name;
    if (model.Load(file.data(), file.size()) != Status::kOk) return ::testing::AssertionFailure() << model.error();
    const size_t bytes = model.ArenaBytesForWorkers(workers) + (exact ? 0 : model.RangeBytes(0, 0));
    arena.Reset(bytes);
    if (interp.Init(&model, arena.data(), bytes) != Status::kOk) return ::testing::AssertionFailure() << interp.error();
    interp.SetMinTaskWork(0);
    return ::testing::AssertionSuccess();
  }
  edgeattn::LayerInfo Info(int layer) {
    edgeattn::LayerInfo info = {};
    EXPECT_EQ(model.GetLayerInfo(layer, &info), Status::kOk);
    return info;
  }
};

// The path the runtime picked for this CPU (before any test forced one).
const char* const kInitialPath = edgeattn::KernelPath();

// Every kernel path here; EA_THREADS_TEST_PATHS=best: only the runtime's own
// choice (the sanitizer builds, where every path would take minutes).
std::vector<const char*> Paths() {
  std::vector<const char*> paths;
  const char* only = std::getenv("EA_THREADS_TEST_PATHS");
  if (only != nullptr && std::strcmp(only, "best") == 0) {
    paths.push_back(kInitialPath);
    return paths;
  }
  for (int i = 0; i < static_cast<int>(edgeattn::kernels::KernelPath::kCount); ++i) {
    const char* p = edgeattn::kernels::kernel_path_name(static_cast<edgeattn::kernels::KernelPath>(i));
    if (edgeattn::SetKernelPath(p) == Status::kOk) paths.push_back(p);
  }
  return paths;
}

class Threads : public ::testing::TestWithParam<std::string> {};

TEST_P(Threads, SameBytesForAnyPoolAndWorkerCount) {
  const std::string name = GetParam();
  const std::vector<const char*> paths = Paths();
  ASSERT_FALSE(paths.empty());
  for (const char* path : paths) {
    ASSERT_EQ(edgeattn::SetKernelPath(path), Status::kOk);
    PooledModel one;
    ASSERT_TRUE(one.Load(name, 1));
    std::vector<std::vector<uint8_t>> want;
    bool splits = false;  // pooling layers (pooling, row_pool) have one output row: nothing to split
    for (int l = 0; l < one.model.num_layers(); ++l) {
      want.push_back(Outputs(one.interp, one.model, l, 100 + l));
      splits = splits || one.Info(l).query_dim != 0;
    }
    const std::vector<uint8_t> want_model = InvokeOutput(one.interp, one.model, 99);

    auto check = [&](const ea_executor& ex, int workers, const std::string& pool) {
      PooledModel s;
      ASSERT_TRUE(s.Load(name, workers));
      ASSERT_EQ(s.interp.UseExecutor(&ex), Status::kOk) << s.interp.error();
      EXPECT_EQ(s.interp.workers(), workers);
      for (int l = 0; l < s.model.num_layers(); ++l) {
        const std::vector<uint8_t> got = Outputs(s.interp, s.model, l, 100 + l);
        ASSERT_EQ(got.size(), want[static_cast<size_t>(l)].size());
        EXPECT_TRUE(got == want[static_cast<size_t>(l)])
            << name << " layer " << l << " path " << path << " pool " << pool << " workers " << workers;
      }
      EXPECT_TRUE(InvokeOutput(s.interp, s.model, 99) == want_model)
          << name << " Invoke path " << path << " pool " << pool << " workers " << workers;
    };
    // Pools that run tasks on the calling thread, in an order that changes
    // with the worker count, then real threads.
    const OrderPool::Order orders[] = {OrderPool::kForward, OrderPool::kReverse, OrderPool::kShuffled,
                                       OrderPool::kShuffled};
    int i = 0;
    for (int workers : {2, 3, 4, 8}) {
      OrderPool pool{workers, orders[i++]};
      check(pool.executor(), workers, "order " + std::to_string(pool.order));
      EXPECT_LE(pool.most_tasks, workers);  // never more tasks than workers
      if (splits) {
        EXPECT_GE(pool.most_tasks, 2) << "nothing was split";
      }
      // Real threads at 2 and 4 workers (also under qemu-user, as guest
      // threads): more would only oversubscribe the 2-core CI machines. Only
      // on the path this CPU runs by default: what real threads add to the
      // ordered pools above is the runtime's own synchronization (task
      // hand-out, per-worker scratch), which is the same code on every path;
      // a kernel that writes outside its share of the rows is caught on every
      // path by the forward and reversed pools.
      if (workers == 3 || workers == 8 || std::strcmp(path, kInitialPath) != 0) continue;
      edgeattn_linux::ThreadPool threads(workers);
      check(threads.executor(), workers, "std::thread");
#ifdef EA_TEST_PTHREADPOOL
      pthreadpool_t pp = pthreadpool_create(static_cast<size_t>(workers));
      ASSERT_NE(pp, nullptr);
      check(ea_pthreadpool_executor(pp), workers, "pthreadpool");
      pthreadpool_destroy(pp);
#endif
    }
  }
  edgeattn::SetKernelPath(kInitialPath);
}

INSTANTIATE_TEST_SUITE_P(Models, Threads, ::testing::ValuesIn(eatest::AllModels()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// A converted model with int8 multi-head attention: the random fixture, or
// (builds without the converter library) the bundled transformer.
std::string AttentionModel() {
  const std::vector<std::string> all = eatest::AllModels();
  return std::find(all.begin(), all.end(), "fixture_int8") != all.end() ? "fixture_int8" : "transformer_int8";
}

// The arena is planned for a number of workers: a pool reporting more is
// refused at UseExecutor with the size to use, and the interpreter stays
// usable on the caller's thread.
TEST(ThreadsArena, MoreWorkersThanPlannedIsRefusedWithTheSize) {
  PooledModel s;
  ASSERT_TRUE(s.Load(AttentionModel(), 2, true));
  ASSERT_GT(s.model.worker_bytes(), 0u);
  EXPECT_EQ(s.model.ArenaBytesForWorkers(4), s.model.arena_bytes() + 3 * s.model.worker_bytes());
  OrderPool pool{4, OrderPool::kForward};
  const ea_executor ex = pool.executor();
  EXPECT_EQ(s.interp.UseExecutor(&ex), Status::kArenaTooSmall);
  const std::string msg = s.interp.error();
  EXPECT_NE(msg.find("a pool of 4 workers needs an arena of " + std::to_string(s.model.ArenaBytesForWorkers(4))),
            std::string::npos)
      << msg;
  EXPECT_EQ(s.interp.workers(), 1);
  OrderPool two{2, OrderPool::kForward};
  const ea_executor ex2 = two.executor();
  EXPECT_EQ(s.interp.UseExecutor(&ex2), Status::kOk) << s.interp.error();
  // Nonsense executors.
  OrderPool zero{0, OrderPool::kForward};
  const ea_executor ex0 = zero.executor();
  EXPECT_EQ(s.interp.UseExecutor(&ex0), Status::kInvalidArgument);
  ea_executor missing = ex2;
  missing.parallel_for = nullptr;
  EXPECT_EQ(s.interp.UseExecutor(&missing), Status::kInvalidArgument);
  EXPECT_EQ(s.interp.UseExecutor(nullptr), Status::kOk);  // back to the caller's thread
  EXPECT_EQ(s.interp.workers(), 1);
}

// The C API: the arena for T workers and ea_interpreter_use_executor.
TEST(ThreadsArena, CApi) {
  AlignedBuffer file;
  ASSERT_TRUE(eatest::ReadFile(eatest::ModelPath(AttentionModel()), &file));
  ea_model model;
  ASSERT_EQ(ea_model_load(&model, file.data(), file.size()), EA_OK);
  const size_t one = ea_model_arena_bytes(&model), per = ea_model_worker_bytes(&model);
  EXPECT_EQ(ea_model_arena_bytes_for_workers(&model, 1, 0, 0), one);
  EXPECT_EQ(ea_model_arena_bytes_for_workers(&model, 3, 0, 0), one + 2 * per);
  EXPECT_LT(ea_model_arena_bytes_for_workers(&model, 3, 4, 4), one + 2 * per);
  AlignedBuffer arena(one + 2 * per);
  ea_interpreter interp;
  ASSERT_EQ(ea_interpreter_init(&interp, &model, arena.data(), arena.size()), EA_OK);
  OrderPool three{3, OrderPool::kReverse};
  const ea_executor ex = three.executor();
  EXPECT_EQ(ea_interpreter_use_executor(&interp, &ex), EA_OK) << ea_interpreter_error(&interp);
  OrderPool four{4, OrderPool::kReverse};
  const ea_executor ex4 = four.executor();
  EXPECT_EQ(ea_interpreter_use_executor(&interp, &ex4), EA_ARENA_TOO_SMALL);
}

}  // namespace
