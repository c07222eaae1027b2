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

#include <sched.h>

#include <atomic>
#include <chrono>
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
  explicit ThreadPool(int threads)
      : threads_(threads < 1 ? 1 : threads), oversubscribed_(threads_ > CpusAllowed()),
        done_(threads_ > 1 ? threads_ - 1 : 0) {
    for (int i = 1; i < threads_; ++i) others_.emplace_back([this, i] { Work(i); });
  }
  ~ThreadPool() {
    stop_.store(true);
    {
      const std::lock_guard<std::mutex> hold(lock_);
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
  // or callers that take turns). Thread k runs tasks k, k + threads, ...
  // (the runtime asks for at most one task per worker), so the hand-over is
  // one cache line out (the call) and one back per thread (its check-in),
  // nothing shared is written by two threads; every thread checks in for
  // every call, so none can still be in the previous one when the next is
  // published. Waiting threads poll without PAUSE for a while (calls come
  // back to back within a run, and under a hypervisor a PAUSE loop can exit
  // to it), then with it, then sleep. With more threads than the CPUs the
  // process may use, they poll briefly and then yield the core between polls
  // instead: the thread a waiter waits for may be waiting for its core.
  void ParallelFor(ea_task_fn task, void* arg, int32_t n) {
    if (threads_ == 1 || n <= 1) {
      for (int32_t i = 0; i < n; ++i) task(arg, i);
      return;
    }
    call_.task = task;
    call_.arg = arg;
    call_.n = n;
    const uint64_t g = call_.generation.load(std::memory_order_relaxed) + 1;
    call_.generation.store(g);  // seq_cst: ordered before the read of sleeping_ (see Work)
    if (sleeping_.load() > 0) {
      { const std::lock_guard<std::mutex> hold(lock_); }
      start_.notify_all();
    }
    for (int32_t i = 0; i < n; i += threads_) task(arg, i);
    for (CheckIn& c : done_) {
      Wait([&] { return c.generation.load() == g; }, finished_, caller_sleeping_);
    }
  }

 private:
  static constexpr int kPolls = 1 << 14;  // plain polls, some microseconds
  static constexpr int kSpins = 50000;    // then with PAUSE (about 1 ms), then sleep
  // More threads than CPUs: fewer plain polls, then yields for about 1 ms.
  static constexpr int kOversubscribedPolls = 1 << 10;
  static constexpr std::chrono::milliseconds kYieldFor{1};

  // The CPUs this process may run on (its affinity mask: taskset, cpusets).
  static int CpusAllowed() {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1 << 30;  // unknown: assume enough
    return CPU_COUNT(&set);
  }

  static void Relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    __asm__ __volatile__("yield");
#endif
  }

  // Polls ready(), then sleeps on `wake` (counting itself in `sleepers`,
  // which the waking side reads after publishing: one of the two sees the
  // other, so no wake-up is lost).
  template <typename Ready>
  void Wait(const Ready& ready, std::condition_variable& wake, std::atomic<int>& sleepers) {
    for (int i = 0, polls = oversubscribed_ ? kOversubscribedPolls : kPolls; i < polls; ++i) {
      if (ready()) return;
    }
    if (oversubscribed_) {
      // A waiter that kept its core would hold it for a scheduler time slice
      // (milliseconds) while the thread it waits for cannot run.
      const auto until = std::chrono::steady_clock::now() + kYieldFor;
      do {
        std::this_thread::yield();
        if (ready()) return;
      } while (std::chrono::steady_clock::now() < until);
    } else {
      for (int i = 0; i < kSpins; ++i) {
        if (ready()) return;
        Relax();
      }
    }
    std::unique_lock<std::mutex> hold(lock_);
    sleepers.fetch_add(1);
    wake.wait(hold, ready);
    sleepers.fetch_sub(1);
  }

  void Work(int k) {
    CheckIn& mine = done_[static_cast<size_t>(k - 1)];
    uint64_t seen = 0;
    for (;;) {
      Wait([&] { return stop_.load() || call_.generation.load() != seen; }, start_, sleeping_);
      if (stop_.load()) return;
      seen = call_.generation.load(std::memory_order_acquire);
      // The call's fields were written before its generation, and stay until
      // every thread has checked in below.
      for (int32_t i = k; i < call_.n; i += threads_) call_.task(call_.arg, i);
      mine.generation.store(seen);  // seq_cst: ordered before the read of caller_sleeping_
      if (caller_sleeping_.load() > 0) {
        { const std::lock_guard<std::mutex> hold(lock_); }
        finished_.notify_all();
      }
    }
  }

  // The current call, written by the caller only (its own cache line).
  struct alignas(64) Call {
    std::atomic<uint64_t> generation{0};  // calls published so far
    ea_task_fn task = nullptr;
    void* arg = nullptr;
    int32_t n = 0;
  };
  // A thread's last finished call, written by that thread only.
  struct alignas(64) CheckIn {
    std::atomic<uint64_t> generation{0};
  };

  const int threads_;
  const bool oversubscribed_;  // more threads than CPUs allowed
  Call call_;
  std::vector<CheckIn> done_;  // threads 1 .. threads - 1
  std::vector<std::thread> others_;
  std::mutex lock_;
  std::condition_variable start_, finished_;
  std::atomic<int> sleeping_{0};         // threads asleep on start_
  std::atomic<int> caller_sleeping_{0};  // 1 while the caller sleeps on finished_
  std::atomic<bool> stop_{false};
};

}  // namespace edgeattn_linux

#endif  // EDGEATTN_TARGETS_LINUX_THREAD_POOL_HPP_
