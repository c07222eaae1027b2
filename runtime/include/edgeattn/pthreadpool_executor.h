/* edgeattn on a pthreadpool (the thread pool XNNPACK and PyTorch use), as an
 * ea_executor. Header-only; the program links pthreadpool (Debian:
 * libpthreadpool-dev, -lpthreadpool). pthreadpool's workers exist from
 * pthreadpool_create on; running tasks allocates nothing.
 *
 *   pthreadpool_t pool = pthreadpool_create(4);        (4 threads, the caller included)
 *   ea_executor ex = ea_pthreadpool_executor(pool);
 *   static uint8_t arena[...];   (ea_model_arena_bytes_for_workers(&model, 4, 0, 0))
 *   ea_interpreter_init(&interp, &model, arena, sizeof(arena));
 *   ea_interpreter_use_executor(&interp, &ex);
 */
#ifndef EDGEATTN_PTHREADPOOL_EXECUTOR_H_
#define EDGEATTN_PTHREADPOOL_EXECUTOR_H_

#include <pthreadpool.h>
#include <stddef.h>
#include <stdint.h>

#include "edgeattn/edgeattn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What one parallel_for hands pthreadpool: edgeattn's task and its argument. */
typedef struct ea_pthreadpool_job {
  ea_task_fn task;
  void* arg;
} ea_pthreadpool_job;

static inline void ea_pthreadpool_run_task(void* job, size_t i) {
  const ea_pthreadpool_job* j = (const ea_pthreadpool_job*)job;
  j->task(j->arg, (int32_t)i);
}

static inline int32_t ea_pthreadpool_num_threads(void* pool) {
  return (int32_t)pthreadpool_get_threads_count((pthreadpool_t)pool);
}

static inline void ea_pthreadpool_parallel_for(void* pool, ea_task_fn task, void* arg, int32_t n_tasks) {
  ea_pthreadpool_job job;
  job.task = task;
  job.arg = arg;
  /* pthreadpool hands out indices dynamically; edgeattn's task i always does
   * the same work in worker i's scratch, so which thread runs it is free. */
  pthreadpool_parallelize_1d((pthreadpool_t)pool, ea_pthreadpool_run_task, &job, (size_t)n_tasks, 0);
}

/* An executor over `pool` (NULL: pthreadpool runs everything on the caller). */
static inline ea_executor ea_pthreadpool_executor(pthreadpool_t pool) {
  ea_executor e;
  e.context = (void*)pool;
  e.num_threads = ea_pthreadpool_num_threads;
  e.parallel_for = ea_pthreadpool_parallel_for;
  return e;
}

#ifdef __cplusplus
}
#endif

#endif /* EDGEATTN_PTHREADPOOL_EXECUTOR_H_ */
