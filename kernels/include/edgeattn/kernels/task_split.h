// How a run's parts are split into tasks for a thread pool: the arithmetic
// only (no threads), shared by the runtime (runtime/src/layers/exec.h, mha.cc)
// and kernels_bench's workers:N benchmarks, so both split the same way.
//
// Every split hands out independent outputs: a task owns whole rows, whole
// 16-channel blocks of a projection's outputs, or whole (head, query-row
// range) pieces of the attention core, and computes them exactly as one
// thread would (each output element is one integer dot product or one row
// operation). So the bytes never depend on the number of tasks, the thread
// count or the order tasks run in. Task t of n always gets the same range.
#ifndef EDGEATTN_KERNELS_TASK_SPLIT_H_
#define EDGEATTN_KERNELS_TASK_SPLIT_H_

#include <cstdint>

namespace edgeattn {
namespace kernels {

// Work below this many multiply-adds (or element operations) per task is not
// split further by default: waking a worker costs microseconds.
constexpr uint64_t kDefaultMinTaskWork = uint64_t{1} << 17;

// The row-wise steps' work per element in multiply-add equivalents (the
// time one element takes against one int8 GEMM multiply-add on the VNNI
// paths, measured at L 128, d 128: LayerNorm about 85, an activation-table
// lookup about 17), so that one threshold fits every part.
constexpr uint64_t kLayerNormWorkPerElement = 64;
constexpr uint64_t kTableWorkPerElement = 16;

// Items [begin, end) of task t when n items go to `tasks` contiguous ranges
// (sizes differ by at most one).
struct TaskRange {
  int begin, end;
};
inline TaskRange task_range(int n, int tasks, int t) {
  return TaskRange{static_cast<int>(int64_t{n} * t / tasks), static_cast<int>(int64_t{n} * (t + 1) / tasks)};
}

// Tasks worth running for `work` on `workers`: at most workers and
// max_tasks, at least min_work per task (0: no minimum), at least 1.
inline int task_count(uint64_t work, uint64_t min_work, int workers, int max_tasks) {
  uint64_t t = min_work > 0 ? work / min_work : UINT64_MAX;
  if (t > static_cast<uint64_t>(workers)) t = static_cast<uint64_t>(workers);
  if (t > static_cast<uint64_t>(max_tasks)) t = static_cast<uint64_t>(max_tasks);
  return t < 1 ? 1 : static_cast<int>(t);
}

// A projection y[rows][out] = x[rows][in] W: tiles of 4 rows when there are
// enough for every task, else blocks of 16 output channels (the packed K4N16
// block; a decoding step's single row).
constexpr int kLinearRowUnit = 4;
constexpr int kLinearChannelBlock = 16;
struct LinearSplit {
  bool by_rows;
  int units;  // row tiles or channel blocks
  int tasks;
};
inline LinearSplit linear_split(int rows, int in, int out, int workers, uint64_t min_work) {
  const int row_units = (rows + kLinearRowUnit - 1) / kLinearRowUnit;
  const int blocks = (out + kLinearChannelBlock - 1) / kLinearChannelBlock;
  const uint64_t macs = static_cast<uint64_t>(rows) * static_cast<uint64_t>(in) * static_cast<uint64_t>(out);
  const int tasks = task_count(macs, min_work, workers, row_units > blocks ? row_units : blocks);
  const bool by_rows = row_units >= tasks;
  return LinearSplit{by_rows, by_rows ? row_units : blocks, tasks};
}
// Rows [r0, r1) or output channels [c0, c1) of a unit range.
inline TaskRange linear_rows(const TaskRange& units, int rows) {
  const int r1 = units.end * kLinearRowUnit;
  return TaskRange{units.begin * kLinearRowUnit, r1 < rows ? r1 : rows};
}
inline TaskRange linear_channels(const TaskRange& units, int out) {
  const int c1 = units.end * kLinearChannelBlock;
  return TaskRange{units.begin * kLinearChannelBlock, c1 < out ? c1 : out};
}

// Row-wise steps chained in one pool call (runtime/src/layers/exec.h,
// run_chain): a LayerNorm, projections, residual adds and activation tables
// of the same rows, each step's row r computed from row r of the steps
// before it. Tiles of `unit` rows, the task count from the chain's summed
// work; chained only when there are at least as many tiles as that count
// (else each step runs on its own, split its own way, as for a decoding
// step's single row). One hand-over instead of one per step.
struct ChainSplit {
  bool chained;
  int units;  // row tiles
  int tasks;
};
inline ChainSplit chain_split(int rows, int unit, uint64_t work, int workers, uint64_t min_work) {
  const int units = (rows + unit - 1) / unit;
  const int tasks = task_count(work, min_work, workers, workers);
  return ChainSplit{units >= tasks, units, tasks < units ? tasks : (units > 0 ? units : 1)};
}
// Rows [r0, r1) of a chain's unit range.
inline TaskRange chain_rows(const TaskRange& units, int unit, int rows) {
  const int r1 = units.end * unit;
  return TaskRange{units.begin * unit, r1 < rows ? r1 : rows};
}

// The attention core: items are (head, query-row range) pairs, head-major,
// each head's q_len rows cut into `chunks` ranges of whole 8-row tiles.
// Enough chunks that each worker gets about two items, so a worker mostly
// runs whole heads (each head's keys and values are packed once per task).
struct HeadSplit {
  int heads, chunks, tiles;  // tiles: 8-row tiles per head
  int items() const { return heads * chunks; }
  // Query rows of chunk c of a head.
  TaskRange rows(int q_len, int c) const {
    const TaskRange t = task_range(tiles, chunks, c);
    return TaskRange{t.begin * 8, t.end * 8 < q_len ? t.end * 8 : q_len};
  }
};
// Calls run(head, row0, row1) for the items [begin, end) of one task,
// consecutive chunks of one head merged into one row range (one call per
// head, so its keys are packed once).
template <typename Run>
void for_each_head_range(const HeadSplit& s, int q_len, int begin, int end, const Run& run) {
  for (int i = begin; i < end;) {
    const int h = i / s.chunks;
    int j = i + 1;
    while (j < end && j / s.chunks == h) ++j;
    run(h, s.rows(q_len, i % s.chunks).begin, s.rows(q_len, (j - 1) % s.chunks).end);
    i = j;
  }
}
inline HeadSplit head_split(int heads, int q_len, int workers) {
  HeadSplit s = {heads, 1, (q_len + 7) / 8};
  if (workers > 1) {
    const int want = (2 * workers + heads - 1) / heads;
    s.chunks = want < s.tiles ? want : s.tiles;
  }
  if (s.chunks < 1) s.chunks = 1;
  return s;
}
// The MHA layer's non-causal attention core chained with its out projection
// (run_mha; each task runs every head of its query rows): each task packs
// every head's keys and values, where the head split packs each head's once.
// On two Zen 5 cores that cost more than the hand-over it saves from about
// 2^22 multiply-adds of core and out projection on (L 64, d 256 and L 256:
// 1-2 % slower; L 64, d 128 and L 128, d 128: even; L 16, d 128: 19 %
// faster), so larger layers keep the head split (docs/performance.md).
constexpr uint64_t kMaxChainedCoreWork = uint64_t{1} << 22;

// Attention work (scores and weighted values) of q_len rows against kv_len
// keys over all heads of width `width` = heads x head_dim.
inline uint64_t attention_work(int q_len, int kv_len, int width) {
  return 2 * static_cast<uint64_t>(q_len) * static_cast<uint64_t>(kv_len) * static_cast<uint64_t>(width);
}

}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_TASK_SPLIT_H_
