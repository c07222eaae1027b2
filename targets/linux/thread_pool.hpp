// A plain std::thread pool for Linux boards (Raspberry Pi, RK3588, x86
// gateways) as an edgeattn executor: the shape to copy when a program has no
// pool of its own. Threads are created in the constructor; ParallelFor
// allocates nothing (atomics, a mutex and two condition variables).
//
//   edgeattn_linux::ThreadPool pool(4);          // 3 threads + the caller
//   const ea_executor ex = pool.executor();
//   interp.Init(&model, arena, model.ArenaBytesForWorkers(4));
//   interp.UseExecutor(&ex);
#ifndef EDGEATTN_TARGETS_LINUX_THREAD_POOL_HPP_
#define EDGEATTN_TARGETS_LINUX_THREAD_POOL_HPP_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "edgeattn/edgeattn.h"

namespace edgeattn_linux {

class ThreadPool {
 public:
  // `threads` >= 1 workers in all: the calling thread plus threads - 1 others.
  explicit ThreadPool(int threads) : threads_(threads < 1 ? 1 : threads) {
    for (int i = 1; i < threads_; ++i) others_.emplace_back([this] { Work(); });
  }
  ~ThreadPool() {
    {
      const std::lock_guard<std::mutex> hold(lock_);
      stop_.store(true);
    }
    start_.notify_all();
    for (std::thread& t : others_) t.join();
  }
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  ea_executor executor() {
    ea_executor e;
    e.context = this;
    e.num_threads = [](void* self) { return static_cast<int32_t>(static_cast<ThreadPool*>(self)->threads_); };
    e.parallel_for = [](void* self, ea_task_fn task, void* arg, int32_t n) {
      static_cast<ThreadPool*>(self)->ParallelFor(task, arg, n);
    };
    return e;
  }

  // Runs task(arg, i) for i in 0..n-1 on the pool and the calling thread;
  // returns when all are done. One call at a time (one interpreter per pool,
  // or callers that take turns). Every thread checks in for every call, so
  // none can still be in the previous one when the next is published; idle
  // threads spin briefly before they sleep, because a call is often only
  // tens of microseconds of work.
  void ParallelFor(ea_task_fn task, void* arg, int32_t n) {
    if (threads_ == 1 || n <= 1) {
      for (int32_t i = 0; i < n; ++i) task(arg, i);
      return;
    }
    task_ = task;
    arg_ = arg;
    n_ = n;
    next_.store(0, std::memory_order_relaxed);
    pending_.store(threads_ - 1, std::memory_order_relaxed);
    {
      const std::lock_guard<std::mutex> hold(lock_);
      generation_.store(generation_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    }
    start_.notify_all();
    RunTasks(task, arg, n);
    for (int spin = 0; spin < kSpins; ++spin) {
      if (pending_.load(std::memory_order_acquire) == 0) return;
      Relax();
    }
    std::unique_lock<std::mutex> hold(lock_);
    done_.wait(hold, [&] { return pending_.load(std::memory_order_acquire) == 0; });
  }

 private:
  static constexpr int kSpins = 50000;  // about 1 ms: calls come back to back within a run

  static void Relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    __asm__ __volatile__("yield");
#endif
  }

  // Takes task indices until none are left.
  void RunTasks(ea_task_fn task, void* arg, int32_t n) {
    for (int32_t i = next_.fetch_add(1); i < n; i = next_.fetch_add(1)) task(arg, i);
  }

  void Work() {
    uint64_t seen = 0;
    for (;;) {
      uint64_t g = generation_.load(std::memory_order_acquire);
      for (int spin = 0; g == seen && spin < kSpins && !stop_.load(); ++spin) {
        Relax();
        g = generation_.load(std::memory_order_acquire);
      }
      if (g == seen) {
        std::unique_lock<std::mutex> hold(lock_);
        start_.wait(hold, [&] { return stop_.load() || generation_.load(std::memory_order_acquire) != seen; });
        g = generation_.load(std::memory_order_acquire);
      }
      if (stop_.load()) return;
      seen = g;
      // The call's fields were written before generation_ (release/acquire),
      // and stay until every thread has checked in below.
      RunTasks(task_, arg_, n_);
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        { const std::lock_guard<std::mutex> hold(lock_); }
        done_.notify_one();
      }
    }
  }

  const int threads_;
  std::vector<std::thread> others_;
  std::mutex lock_;
  std::condition_variable start_, done_;
  ea_task_fn task_ = nullptr;
  void* arg_ = nullptr;
  int32_t n_ = 0;
  std::atomic<int32_t> next_{0};         // the next task index of the current call
  std::atomic<int> pending_{0};          // threads that have not checked in for the current call
  std::atomic<uint64_t> generation_{0};  // calls published so far
  std::atomic<bool> stop_{false};
};

}  // namespace edgeattn_linux

#endif  // EDGEATTN_TARGETS_LINUX_THREAD_POOL_HPP_
