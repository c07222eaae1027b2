// A plain std::thread pool for Linux boards (Raspberry Pi, RK3588, x86
// gateways) as an edgeattn executor: the shape to copy when a program has no
// pool of its own. Threads are created in the constructor; ParallelFor
// allocates nothing (a mutex, two condition variables and an atomic counter).
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
      stop_ = true;
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
  // or callers that take turns).
  void ParallelFor(ea_task_fn task, void* arg, int32_t n) {
    {
      // A worker still inside the previous call's RunTasks would take this
      // call's indices with the previous task: wait until none is.
      std::unique_lock<std::mutex> hold(lock_);
      done_.wait(hold, [&] { return active_ == 0; });
      task_ = task;
      arg_ = arg;
      n_ = n;
      next_.store(0);
      finished_ = 0;
      ++generation_;
    }
    start_.notify_all();
    const int32_t mine = RunTasks(task, arg, n);
    std::unique_lock<std::mutex> hold(lock_);
    finished_ += mine;
    done_.wait(hold, [&] { return finished_ == n_ && active_ == 0; });
  }

 private:
  // Takes task indices until none are left; returns how many it ran.
  int32_t RunTasks(ea_task_fn task, void* arg, int32_t n) {
    int32_t ran = 0;
    for (int32_t i = next_.fetch_add(1); i < n; i = next_.fetch_add(1)) {
      task(arg, i);
      ++ran;
    }
    return ran;
  }

  void Work() {
    uint64_t seen = 0;
    for (;;) {
      ea_task_fn task;
      void* arg;
      int32_t n;
      {
        std::unique_lock<std::mutex> hold(lock_);
        start_.wait(hold, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        task = task_;
        arg = arg_;
        n = n_;
        ++active_;
      }
      const int32_t ran = RunTasks(task, arg, n);
      {
        const std::lock_guard<std::mutex> hold(lock_);
        finished_ += ran;
        --active_;
      }
      done_.notify_all();
    }
  }

  const int threads_;
  std::vector<std::thread> others_;
  std::mutex lock_;
  std::condition_variable start_, done_;
  ea_task_fn task_ = nullptr;
  void* arg_ = nullptr;
  int32_t n_ = 0;
  std::atomic<int32_t> next_{0};  // the next task index of the current call
  int32_t finished_ = 0;          // tasks of the current call done
  int active_ = 0;                // workers inside RunTasks
  uint64_t generation_ = 0;
  bool stop_ = false;
};

}  // namespace edgeattn_linux

#endif  // EDGEATTN_TARGETS_LINUX_THREAD_POOL_HPP_
