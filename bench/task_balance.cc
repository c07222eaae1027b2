// task_balance: how the runtime's task split (kernels/include/edgeattn/
// kernels/task_split.h) spreads the MHA layer and the encoder block of the
// ONNX Runtime grid over T workers, so the scaling on a 4- or 8-core board can
// be predicted without one. Pure arithmetic, no timing: for each part
// (projection, attention core, row-wise step) the tasks it gets and the work
// of its largest task; a part takes as long as its largest task, so
//   predicted speed-up = total work / sum over parts of the largest task's work
// (perfect cores, no wake-up cost, memory bandwidth not shared).
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
}

void Attention(Tally* t, int L, int d, int heads, int workers) {
  const ek::HeadSplit s = ek::head_split(heads, L, workers);
  const int n = s.items();
  const int tasks = ek::task_count(ek::attention_work(L, L, d), ek::kDefaultMinTaskWork, workers, n);
  const double per_row = 2.0 * L * (d / heads);
  double largest = 0;
  for (int i = 0; i < tasks; ++i) {
    const ek::TaskRange items = ek::task_range(n, tasks, i);
    double w = 0;
    for (int it = items.begin; it < items.end; ++it) {
      const ek::TaskRange r = s.rows(L, it % s.chunks);
      w += per_row * (r.end - r.begin);
    }
    if (w > largest) largest = w;
  }
  t->work += per_row * L * heads;
  t->span += largest;
  t->parts += 1;
  t->tasks += tasks;
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
}

Tally Mha(int L, int d, int heads, int workers) {
  Tally t;
  Linear(&t, L, d, 3 * d, workers);  // Q, K and V in one pool call (run_linears_same_input)
  Attention(&t, L, d, heads, workers);
  Linear(&t, L, d, d, workers);
  return t;
}

Tally Block(int L, int d, int heads, int workers) {
  Tally t = Mha(L, d, heads, workers);
  Rows(&t, L, d, ek::kLayerNormWorkPerElement, workers);  // two LayerNorms
  Rows(&t, L, d, ek::kLayerNormWorkPerElement, workers);
  Rows(&t, L, d, ek::kAddWorkPerElement, workers);  // two residual adds
  Rows(&t, L, d, ek::kAddWorkPerElement, workers);
  Linear(&t, L, d, 4 * d, workers);  // fc1, GELU, fc2
  Rows(&t, L, 4 * d, ek::kTableWorkPerElement, workers);
  Linear(&t, L, 4 * d, d, workers);
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> workers;
  for (int i = 1; i < argc; ++i) workers.push_back(std::atoi(argv[i]));
  if (workers.empty()) workers = {2, 4, 8};
  std::printf("| layer | L | d | heads |");
  for (int w : workers) std::printf(" T=%d: tasks per part | largest tasks' share | predicted speed-up |", w);
  std::printf("\n|---|---:|---:|---:|");
  for (size_t i = 0; i < workers.size(); ++i) std::printf("---:|---:|---:|");
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
          std::printf(" %.1f | %.1f %% | %.2f |", double(t.tasks) / t.parts, 100.0 * t.span / t.work,
                      t.work / t.span);
        }
        std::printf("\n");
      }
    }
  }
  return 0;
}
