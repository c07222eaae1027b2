// task_balance: how the runtime's task split (kernels/include/edgeattn/
// kernels/task_split.h) spreads the MHA layer and the encoder block of the
// ONNX Runtime grid over T workers, so the scaling on a 4- or 8-core board can
// be predicted without one. Pure arithmetic, no timing: for each part
// (projection, attention core, row-wise step, or a chain of them in one
// pool call) the tasks it gets and the work of its largest task; a part
// takes as long as its largest task, so
//   predicted speed-up = total work / sum over parts of the largest task's work
// (perfect cores, no wake-up cost, memory bandwidth not shared). Work is in
// the time of one int8 GEMM multiply-add; the attention core's operations
// are weighted by their measured time against it (below), and every task
// that attends a head packs that head's keys and values itself.
//
//   task_balance [T ...]      (default: 2 4 8)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "edgeattn/kernels/task_split.h"

namespace ek = edgeattn::kernels;

namespace {

struct Tally {
  double work = 0, span = 0;  // all tasks; the largest task of each part, summed
  int parts = 0, tasks = 0;
  int calls = 0;  // parts of more than one task: pool calls (hand-overs)
};

void Linear(Tally* t, int rows, int in, int out, int workers) {
  const ek::LinearSplit s = ek::linear_split(rows, in, out, workers, ek::kDefaultMinTaskWork);
  double largest = 0;
  for (int i = 0; i < s.tasks; ++i) {
    const ek::TaskRange u = ek::task_range(s.units, s.tasks, i);
    const ek::TaskRange r = s.by_rows ? ek::linear_rows(u, rows) : ek::linear_channels(u, out);
    const double w = s.by_rows ? double(r.end - r.begin) * in * out : double(rows) * in * (r.end - r.begin);
    if (w > largest) largest = w;
  }
  t->work += double(rows) * in * out;
  t->span += largest;
  t->parts += 1;
  t->tasks += s.tasks;
  t->calls += s.tasks > 1;
}

// The attention core's time against one int8 GEMM multiply-add, measured on
// the avx512vnni path (Zen 5) at L 128, d 128, 4 heads: the stages of
// kernels_bench's mha_tile_stage_qs8 (pack 0.86 µs, Q.K^T 6.31, softmax
// 13.06, P.V 9.58) against the Q/K/V projection call on one worker
// (mha_qs8/.../workers:1/part:qkv, 6.29 M multiply-adds in 16.83 µs):
// a Q.K^T multiply-add costs 1.13, a P.V one 1.71, one score's softmax 75,
// one byte of keys or values packed 9.8 (docs/performance.md).
constexpr double kQkWork = 1.13;
constexpr double kPvWork = 1.71;
constexpr double kSoftmaxWorkPerScore = 75;
constexpr double kPackWorkPerByte = 9.8;

// One query row of one head against kv keys; packing one head's kv keys
// and values.
double AttentionRowWork(int kv, int head_dim) {
  return double(kv) * (head_dim * (kQkWork + kPvWork) + kSoftmaxWorkPerScore);
}
double PackWork(int kv, int head_dim) { return kPackWorkPerByte * 2.0 * kv * head_dim; }

// The head split (mha.cc, attend_heads): a task packs each head it runs
// once (for_each_head_range merges its consecutive chunks of a head).
void Attention(Tally* t, int L, int d, int heads, int workers) {
  const ek::HeadSplit s = ek::head_split(heads, L, workers);
  const int n = s.items();
  const int tasks = ek::task_count(ek::attention_work(L, L, d), ek::kDefaultMinTaskWork, workers, n);
  const int head_dim = d / heads;
  const double per_row = AttentionRowWork(L, head_dim);
  double largest = 0;
  for (int i = 0; i < tasks; ++i) {
    const ek::TaskRange items = ek::task_range(n, tasks, i);
    double w = 0;
    ek::for_each_head_range(s, L, items.begin, items.end,
                            [&](int, int r0, int r1) { w += per_row * (r1 - r0) + PackWork(L, head_dim); });
    if (w > largest) largest = w;
  }
  t->work += (per_row * L + PackWork(L, head_dim)) * heads;
  t->span += largest;
  t->parts += 1;
  t->tasks += tasks;
  t->calls += tasks > 1;
}

// A row-wise step of `ops` multiply-add equivalents per element
// (kLayerNormWorkPerElement, ...).
void Rows(Tally* t, int L, int width, uint64_t ops, int workers) {
  const uint64_t work = ops * L * width;
  const int tasks = ek::task_count(work, ek::kDefaultMinTaskWork, workers, L);
  int most = 0;
  for (int i = 0; i < tasks; ++i) {
    const ek::TaskRange r = ek::task_range(L, tasks, i);
    if (r.end - r.begin > most) most = r.end - r.begin;
  }
  t->work += double(work);
  t->span += double(most) * double(ops) * width;
  t->parts += 1;
  t->tasks += tasks;
  t->calls += tasks > 1;
}

// Row-wise steps chained in one pool call (ek::chain_split, as run_chain in
// runtime/src/layers/exec.h): steps are projections (in x out per row) or
// row-wise steps (ops per element over `in` elements, out = 0). Not chained
// (too few row tiles): each step on its own, as Linear and Rows.
struct Step {
  int in, out;
  uint64_t ops;
};
void Chain(Tally* t, int L, const std::vector<Step>& steps, int workers) {
  uint64_t per_row = 0;
  for (const Step& s : steps) per_row += s.out > 0 ? uint64_t(s.in) * s.out : s.ops * s.in;
  const ek::ChainSplit c =
      ek::chain_split(L, ek::kLinearRowUnit, per_row * L, workers, ek::kDefaultMinTaskWork);
  if (!c.chained) {
    for (const Step& s : steps) {
      if (s.out > 0) {
        Linear(t, L, s.in, s.out, workers);
      } else {
        Rows(t, L, s.in, s.ops, workers);
      }
    }
    return;
  }
  int most = 0;
  for (int i = 0; i < c.tasks; ++i) {
    const ek::TaskRange r = ek::chain_rows(ek::task_range(c.units, c.tasks, i), ek::kLinearRowUnit, L);
    if (r.end - r.begin > most) most = r.end - r.begin;
  }
  t->work += double(per_row) * L;
  t->span += double(per_row) * most;
  t->parts += 1;
  t->tasks += c.tasks;
  t->calls += c.tasks > 1;
}

// The MHA layer as run_mha runs it (non-causal): Q, K and V in one pool
// call (run_linears_same_input), then the attention core by rows of 8-row
// tiles with every head, chained with the out projection of those rows (so
// every task packs every head); with too few tiles or above
// kMaxChainedCoreWork, the head split and the out projection on their own.
Tally Mha(int L, int d, int heads, int workers) {
  Tally t;
  Linear(&t, L, d, 3 * d, workers);
  const int unit = 8;  // kQs8AttnTileRows
  // The runtime decides on multiply-adds; the tally weighs them by time.
  const uint64_t macs_per_row = ek::attention_work(1, L, d) + uint64_t(d) * d;
  const ek::ChainSplit c = ek::chain_split(L, unit, macs_per_row * L, workers, ek::kDefaultMinTaskWork);
  if (!c.chained || macs_per_row * L > ek::kMaxChainedCoreWork) {
    Attention(&t, L, d, heads, workers);
    Linear(&t, L, d, d, workers);
    return t;
  }
  int most = 0;
  for (int i = 0; i < c.tasks; ++i) {
    const ek::TaskRange r = ek::chain_rows(ek::task_range(c.units, c.tasks, i), unit, L);
    if (r.end - r.begin > most) most = r.end - r.begin;
  }
  const int head_dim = d / heads;
  const double per_row = heads * AttentionRowWork(L, head_dim) + double(d) * d;
  const double packs = heads * PackWork(L, head_dim);
  t.work += per_row * L + packs;
  t.span += per_row * most + packs;
  t.parts += 1;
  t.tasks += c.tasks;
  t.calls += c.tasks > 1;
  return t;
}

// The pre-norm block as the runtime runs it (encoder_block.cc): norm1 with
// Q, K and V in one chain, the attention core, every later step in another
// (the residual adds in out_proj's and fc2's epilogues, no steps of their own).
Tally Block(int L, int d, int heads, int workers) {
  Tally t;
  Chain(&t, L, {{d, 0, ek::kLayerNormWorkPerElement}, {d, 3 * d, 0}}, workers);
  Attention(&t, L, d, heads, workers);
  Chain(&t, L,
        {{d, d, 0},
         {d, 0, ek::kLayerNormWorkPerElement},
         {d, 4 * d, 0},
         {4 * d, 0, ek::kTableWorkPerElement},
         {4 * d, d, 0}},
        workers);
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> workers;
  for (int i = 1; i < argc; ++i) workers.push_back(std::atoi(argv[i]));
  if (workers.empty()) workers = {2, 4, 8};
  std::printf("| layer | L | d | heads |");
  for (int w : workers) std::printf(" T=%d: pool calls | tasks per part | largest tasks' share | predicted speed-up |", w);
  std::printf("\n|---|---:|---:|---:|");
  for (size_t i = 0; i < workers.size(); ++i) std::printf("---:|---:|---:|---:|");
  std::printf("\n");
  const int Ls[] = {16, 64, 128, 256}, ds[] = {64, 128, 256};
  for (int kind = 0; kind < 2; ++kind) {
    for (int L : Ls) {
      for (int d : ds) {
        const int heads = 4;
        std::printf("| %s | %d | %d | %d |", kind == 0 ? "mha" : "encoder block", L, d, heads);
        for (int w : workers) {
          const Tally t = kind == 0 ? Mha(L, d, heads, w) : Block(L, d, heads, w);
          // The largest tasks' share of the layer's work (each part's
          // largest task, summed; 1/T is perfect balance), and its inverse.
          std::printf(" %d | %.1f | %.1f %% | %.2f |", t.calls, double(t.tasks) / t.parts, 100.0 * t.span / t.work,
                      t.work / t.span);
        }
        std::printf("\n");
      }
    }
  }
  return 0;
}
