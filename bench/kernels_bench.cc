// Google Benchmark suite: every listed variant of the kernel families
// (kernels/lists/<family>.inc) and the attention layers built from each
// dispatch path's table, for every path this build and CPU support (ref,
// avx2, avxvnni, avx512vnni on x86; neon, neondot on Arm). Inputs are
// random in-memory tensors (no model file); the layer benchmarks mirror the
// layers' run functions in runtime/src/layers/ (mha.cc's run_mha,
// additive.cc, pooling.cc: projections, per-head attention, output
// projection) calling the table entries directly.
//
// The kernel benchmarks (one registered benchmark per listed variant) are
// per family in bench/kernels/<family>_bench.cc; this file holds the layers,
// the thread-pool hand-over and main.
//
// Grid (each for int8 "qs8" and float "f32", and for every supported path):
//   {qs8,f32}_linear       rows {1,16,64,128} x in = out {64,128,256}
//   qs8_linear_res         the residual in the epilogue (contract 5b), rows 64
//                          x in 512 x out 128 (a block's second FFN linear),
//                          with qs8_linear at the same shape
//   {qs8,f32}_attention    core SDPA, no projections: q = kv = L {16,64,128} x
//                          hd {16,32,64,128}, plus L 256 x hd {32,64};
//                          q 1 x kv {64,256,1024} x hd 64
//   mha_{qs8,f32}          self-attention with projections: L {16,64,128,256}
//                          x d {64,128,256} x heads {1,4,8}
//   mha_stage_qs8          the int8 MHA layer split by stage, L {64,128,256} x
//                          d 128 x heads 4 (and L 128 x d 256 x heads 8):
//                          stage:proj (the 4 projections), stage:qk,
//                          stage:softmax, stage:pv (every head, one query row at
//                          a time through the table's row primitives; the fused
//                          qs8_attention kernels may pair rows, so their stages
//                          sum to a little more than the fused time; the softmax
//                          stage includes restoring its kv scores per row; the
//                          tiling paths run the layer's attention as tiles
//                          instead, split in mha_tile_stage_qs8)
//   mha_tile_stage_qs8     the tiled int8 attention of the MHA layer split by
//                          stage, per tiling variant (kernels/lists/
//                          qs8_attention_tile.inc): L {64,128,256} x d 128 x
//                          heads 4, L 128 x d 128 x heads 8, L 128 x d 256 x
//                          heads 8; stage:pack (K and V of every head),
//                          stage:qk, stage:softmax (exp, normalization and the
//                          P.V operand), stage:pv, every tile of every head
//                          on the inputs the earlier stages gave it
//   mha_decoder_{qs8,f32}  1 query x kv {64,256,1024} cached K/V, d 256, 4 heads
//   additive_{qs8,f32}     1 query x kv {32,128}, query/key dim dq = dk = 256,
//                          attention dim da = 128, value dim dv = 256; keys:cached
//                          (key projection precomputed, not timed) or
//                          keys:projected (kv x dk -> da projection timed)
//   pooling_{qs8,f32}      attention pooling: learned query (1 row) over L
//                          {16,64,128,256} hidden states of d 128 (keys = values
//                          = the hidden states, 1 head, head_dim 128)
//   encoder_block_qs8      the pre-norm encoder block (see BM_Qs8EncoderBlock),
//                          L {16,64,128,256} x d {64,128,256} x heads 4;
//                          .../stream:int16 the same block on the 16-bit
//                          residual stream (BM_Qs8EncoderBlockStream16);
//                          encoder_block_stage_qs8 its stages alone at a few
//                          shapes: stage:norm, attn, ffn, table
//   qs8_{layernorm,lut}    the block's row-wise primitives alone, every listed
//                          variant by function name: 128 rows of d 128 (the
//                          table: 128 rows of 512)
//
// Counter GFLOPS = useful floating-point-equivalent operations per second
// (one multiply-add = 2), with these conventions:
//   linear              2 * rows * out * in                (also qs8_linear_res)
//   attention (head)    4 * q_len * kv * head_dim          (Q.K and P.V)
//   MHA self-attn       8 * L * d^2 + 4 * L^2 * d          (4 projections + attention)
//   MHA decoder step    4 * d^2 + 4 * kv * d               (q/out projections, cached K/V)
//   additive step       2 * dq * da + 4 * kv * da + 2 * kv * dv
//                                                          (query projection, scores, P.V)
//     keys:projected    + 2 * kv * dk * da                 (key projection, timed)
//   attention pooling   4 * L * d                          (Q.K and P.V of the learned query)
//
// Counter bytes_per_second (SetBytesProcessed) = the bytes one call must touch
// at least once, per second: every weight (int8 1 B, f32 4 B per element;
// biases 4 B per output feature; the learned pooling query; the additive v
// vector and, for int8, its 256-byte tanh table), every input and every output,
// each counted once. A tensor read several times counts once (x feeding the
// Q/K/V projections; the hidden states that are both keys and values of
// pooling); cached K/V and cached projected keys count as inputs. Not counted:
// per-tensor requantization constants, weight row padding, intermediates
// (projected Q/K/V, per-head context, scores, probabilities) and scratch.
//
// Run: build/host/bench/kernels_bench --benchmark_repetitions=5
//        --benchmark_report_aggregates_only=true [--benchmark_filter=mha]
// Plot: --benchmark_out=bench.json --benchmark_out_format=json, then
//        scripts/plot_bench.py bench.json --family mha_qs8 --x L --fix d=128 --fix heads=4 -o mha.svg
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "kernels_bench_util.h"
#include "thread_pool.hpp"
#if EA_BENCH_PTHREADPOOL
#include "edgeattn/pthreadpool_executor.h"
#endif

namespace {

using namespace kbench;  // NOLINT(build/namespaces)

// workers:N — a layer on N workers the way the runtime splits it
// (kernels/include/edgeattn/kernels/task_split.h: projections in row or
// 16-channel tiles, the attention core in (head, row range) items, row-wise
// steps by rows), on the std::thread pool of targets/linux (N - 1 threads
// plus the benchmark's own). Not Google Benchmark's threads:N, which runs N
// copies side by side. workers = 1: everything on the calling thread.
class Workers {
 public:
  explicit Workers(int n) : n_(n), pool_(n) {}
  int count() const { return n_; }
  // body(begin, end, worker) over `tasks` contiguous ranges of [0, n).
  template <typename Body>
  void For(int n, int tasks, const Body& body) {
    if (tasks > n) tasks = n;
    if (tasks <= 1) {
      if (n > 0) body(0, n, 0);
      return;
    }
    struct Job {
      const Body* body;
      int n, tasks;
    } job = {&body, n, tasks};
    pool_.ParallelFor(
        [](void* arg, int32_t t) {
          const Job& j = *static_cast<const Job*>(arg);
          const ek::TaskRange r = ek::task_range(j.n, j.tasks, t);
          if (r.begin < r.end) (*j.body)(r.begin, r.end, static_cast<int>(t));
        },
        &job, tasks);
  }
  int Tasks(uint64_t work, int max_tasks) const {
    return ek::task_count(work, ek::kDefaultMinTaskWork, n_, max_tasks);
  }

 private:
  int n_;
  edgeattn_linux::ThreadPool pool_;
};

void RunLinear(const ek::KernelTable& t, Workers& w, const Qs8Linear& l, int rows, const int8_t* x, int8_t* y) {
  const ek::LinearSplit split = ek::linear_split(rows, l.in, l.out, w.count(), ek::kDefaultMinTaskWork);
  const size_t block_bytes = static_cast<size_t>(ek::kLinearChannelBlock) * static_cast<size_t>((l.in + 3) / 4 * 4);
  w.For(split.units, split.tasks, [&](int begin, int end, int) {
    if (split.by_rows) {
      const ek::TaskRange r = ek::linear_rows({begin, end}, rows);
      l.Run(t, r.end - r.begin, x + static_cast<size_t>(r.begin) * l.in, l.in,
            y + static_cast<size_t>(r.begin) * l.out, l.out);
    } else {
      const ek::TaskRange c = ek::linear_channels({begin, end}, l.out);
      t.qs8_linear(rows, c.end - c.begin, l.in, x, l.in, l.w_packed.data() + static_cast<size_t>(begin) * block_bytes,
                   l.bias.data() + c.begin, l.mult.data(), l.shift.data(), 0, -3, y + c.begin, l.out);
    }
  });
}

// y = res + linear(x), split as RunLinear.
void RunLinearRes(const ek::KernelTable& t, Workers& w, const Qs8Linear& l, int rows, const int8_t* x,
                  const int8_t* res, const ek::ResidualTerm& term, int8_t* y) {
  const ek::LinearSplit split = ek::linear_split(rows, l.in, l.out, w.count(), ek::kDefaultMinTaskWork);
  const size_t block_bytes = static_cast<size_t>(ek::kLinearChannelBlock) * static_cast<size_t>((l.in + 3) / 4 * 4);
  w.For(split.units, split.tasks, [&](int begin, int end, int) {
    if (split.by_rows) {
      const ek::TaskRange r = ek::linear_rows({begin, end}, rows);
      const size_t at = static_cast<size_t>(r.begin) * l.out;
      l.RunRes(t, r.end - r.begin, x + static_cast<size_t>(r.begin) * l.in, res + at, term, y + at);
    } else {
      const ek::TaskRange c = ek::linear_channels({begin, end}, l.out);
      t.qs8_linear_res(rows, c.end - c.begin, l.in, x, l.in,
                       l.w_packed.data() + static_cast<size_t>(begin) * block_bytes, l.bias.data() + c.begin,
                       &l.res_mult, &l.res_shift, 0, {res + c.begin, l.out, term}, y + c.begin, l.out);
    }
  });
}

// Q, K and V of the same rows in one pool call (as the runtime's
// run_linears_same_input for self-attention): row tiles that run all three.
void RunQkv(const ek::KernelTable& t, Workers& w, const Qs8Linear* const ls[3], int rows, const int8_t* x,
            int8_t* const ys[3]) {
  const ek::LinearSplit split = ek::linear_split(rows, ls[0]->in, 3 * ls[0]->out, w.count(), ek::kDefaultMinTaskWork);
  if (!split.by_rows || split.tasks < 2) {
    for (int i = 0; i < 3; ++i) RunLinear(t, w, *ls[i], rows, x, ys[i]);
    return;
  }
  w.For(split.units, split.tasks, [&](int begin, int end, int) {
    const ek::TaskRange r = ek::linear_rows({begin, end}, rows);
    for (int i = 0; i < 3; ++i) {
      ls[i]->Run(t, r.end - r.begin, x + static_cast<size_t>(r.begin) * ls[i]->in, ls[i]->in,
                 ys[i] + static_cast<size_t>(r.begin) * ls[i]->out, ls[i]->out);
    }
  });
}

// Row scratch of each worker for the attention core.
struct HeadScratch {
  std::vector<int32_t> scores;
  std::vector<uint16_t> probs;
  std::vector<uint8_t> tile;
  HeadScratch(int kv, int hd) : scores(kv), probs(kv), tile(ek::qs8_attention_tile_bytes(kv, hd, hd)) {}
};

// Every head of q, kp, vp [L][d] into ctx, self-attention without masks.
void RunHeads(const ek::KernelTable& t, Workers& w, std::vector<HeadScratch>& scratch, int L, int kv, int d,
              int heads, const int8_t* q, const int8_t* kp, const int8_t* vp, int8_t* ctx) {
  const int hd = d / heads;
  const ek::HeadSplit split = ek::head_split(heads, L, w.count());
  const int n = split.items();
  w.For(n, w.Tasks(ek::attention_work(L, kv, d), n), [&](int begin, int end, int worker) {
    HeadScratch& s = scratch[static_cast<size_t>(worker)];
    ek::for_each_head_range(split, L, begin, end, [&](int h, int r0, int r1) {
      ek::QS8AttentionArgs a = Qs8Head(r1 - r0, kv, hd, d);
      a.causal_offset = kv - L + r0;
      a.q = q + static_cast<size_t>(r0) * d + h * hd; a.k = kp + h * hd; a.v = vp + h * hd;
      a.out = ctx + static_cast<size_t>(r0) * d + h * hd;
      a.scratch = s.scores.data(); a.prob_scratch = s.probs.data();
      a.tile_scratch = s.tile.data();  // as the runtime plans it (used when >= 4 rows)
      t.qs8_attention(a);
    });
  });
}

// The attention core by query-row ranges (every head of a range in one
// task) chained with the out projection of those rows, in one pool call (as
// the runtime's run_mha for non-causal attention: AttendRowsStep); too few
// row tiles for the tasks or more than kMaxChainedCoreWork: the head split,
// then the out projection.
void RunHeadsOut(const ek::KernelTable& t, Workers& w, std::vector<HeadScratch>& scratch, int L, int kv, int d,
                 int heads, const int8_t* q, const int8_t* kp, const int8_t* vp, int8_t* ctx, const Qs8Linear& wo,
                 int8_t* y) {
  const int hd = d / heads;
  const int unit = 8;
  const uint64_t work = ek::attention_work(L, kv, d) + static_cast<uint64_t>(L) * d * d;
  const ek::ChainSplit cs = ek::chain_split(L, unit, work, w.count(), ek::kDefaultMinTaskWork);
  if (!cs.chained || work > ek::kMaxChainedCoreWork) {
    RunHeads(t, w, scratch, L, kv, d, heads, q, kp, vp, ctx);
    RunLinear(t, w, wo, L, ctx, y);
    return;
  }
  w.For(cs.units, cs.tasks, [&](int begin, int end, int worker) {
    HeadScratch& s = scratch[static_cast<size_t>(worker)];
    const ek::TaskRange r = ek::chain_rows({begin, end}, unit, L);
    for (int h = 0; h < heads; ++h) {
      ek::QS8AttentionArgs a = Qs8Head(r.end - r.begin, kv, hd, d);
      a.causal_offset = kv - L + r.begin;
      a.q = q + static_cast<size_t>(r.begin) * d + h * hd; a.k = kp + h * hd; a.v = vp + h * hd;
      a.out = ctx + static_cast<size_t>(r.begin) * d + h * hd;
      a.scratch = s.scores.data(); a.prob_scratch = s.probs.data();
      a.tile_scratch = s.tile.data();
      t.qs8_attention(a);
    }
    wo.Run(t, r.end - r.begin, ctx + static_cast<size_t>(r.begin) * d, d, y + static_cast<size_t>(r.begin) * d, d);
  });
}

// ------------------------------------------------------------- layers ----

// Self-attention: 4 projections, x in, y out. Decoder step: q/out
// projections, the query row and the cached K/V in, one row out.
int64_t MhaBytes(int L, int kv, int d, bool decoder, int es) {
  const int64_t act = static_cast<int64_t>(d) * es;
  if (decoder) return 2 * LinearBytes(d, d, es) + act * (2 * static_cast<int64_t>(L) + 2 * kv);
  return 4 * LinearBytes(d, d, es) + act * 2 * L;
}

// One stage of the int8 MHA self-attention layer (see the grid above), every
// head; the same inputs and quantization as BM_Qs8Mha.
enum class MhaStage { kProj, kQk, kSoftmax, kPv };

void BM_Qs8MhaStage(benchmark::State& state, ek::KernelPath path, int L, int d, int heads,
                    MhaStage stage) {
  const ek::KernelTable& t = *ek::kernel_table(path);
  const int hd = d / heads;
  Qs8Linear wq(d, d, 11), wk(d, d, 12), wv(d, d, 13), wo(d, d, 14);
  const auto x = RandS8(static_cast<size_t>(L) * d, 15);
  std::vector<int8_t> q(static_cast<size_t>(L) * d), kp(q.size()), vp(q.size()), ctx(q.size()), y(q.size());
  wq.Run(t, L, x.data(), d, q.data(), d);
  wk.Run(t, L, x.data(), d, kp.data(), d);
  wv.Run(t, L, x.data(), d, vp.data(), d);
  const ek::QS8AttentionArgs a = Qs8Head(L, L, hd, d);
  // Per head and row: the scores Q.K gives and the probabilities softmax gives.
  std::vector<int32_t> scores(static_cast<size_t>(heads) * L * L), row(L);
  std::vector<uint16_t> probs(scores.size());
  for (int h = 0; h < heads; ++h) {
    for (int r = 0; r < L; ++r) {
      int32_t* s = scores.data() + (static_cast<size_t>(h) * L + r) * L;
      uint16_t* p = probs.data() + (static_cast<size_t>(h) * L + r) * L;
      ek::qs8_qk_row__ref(L, hd, q.data() + static_cast<size_t>(r) * d + h * hd, a.q_zp,
                          kp.data() + h * hd, d, a.k_zp, s);
      std::copy(s, s + L, row.begin());
      ek::qs8_softmax_row__ref(L, row.data(), a.score_mult, a.score_shift, p);
    }
  }
  double ops = 0;
  for (auto _ : state) {
    if (stage == MhaStage::kProj) {
      wq.Run(t, L, x.data(), d, q.data(), d);
      wk.Run(t, L, x.data(), d, kp.data(), d);
      wv.Run(t, L, x.data(), d, vp.data(), d);
      wo.Run(t, L, ctx.data(), d, y.data(), d);
    } else {
      for (int h = 0; h < heads; ++h) {
        for (int r = 0; r < L; ++r) {
          const size_t i = (static_cast<size_t>(h) * L + r) * L;
          if (stage == MhaStage::kQk) {
            t.qs8_qk_row(L, hd, q.data() + static_cast<size_t>(r) * d + h * hd, a.q_zp,
                         kp.data() + h * hd, d, a.k_zp, row.data());
          } else if (stage == MhaStage::kSoftmax) {
            std::copy(scores.begin() + i, scores.begin() + i + L, row.begin());
            t.qs8_softmax_row(L, row.data(), a.score_mult, a.score_shift, probs.data() + i);
          } else {
            t.qs8_pv_row(L, hd, probs.data() + i, vp.data() + h * hd, d, a.v_zp, a.pv_mult,
                         a.pv_shift, a.out_zp, ctx.data() + static_cast<size_t>(r) * d + h * hd);
          }
        }
      }
    }
    benchmark::DoNotOptimize(row.data());
    benchmark::DoNotOptimize(ctx.data());
    benchmark::DoNotOptimize(y.data());
  }
  // Useful ops as in the layer's GFLOPS convention; softmax has none (0).
  if (stage == MhaStage::kProj) ops = 8.0 * L * static_cast<double>(d) * d;
  if (stage == MhaStage::kQk || stage == MhaStage::kPv) ops = 2.0 * L * static_cast<double>(L) * d;
  SetFlops(state, ops);
}

// One stage of the tiled int8 attention (attention_tile.h) over every head
// and tile of the MHA layer, as the layer runs it: Q/K/V from the int8
// projections of the same inputs as BM_Qs8Mha, then per head the path's own
// pack, qk, softmax and pv stages. Each tile keeps its own scores and
// probabilities (the layer reuses one tile's), so a stage is timed alone on
// the inputs the earlier stages gave it; the working set is a little larger
// than the layer's.
enum class TileStage { kPack, kQk, kSoftmax, kPv };

void BM_Qs8MhaTileStage(benchmark::State& state, const ek::Qs8AttnTileStages& st, ek::KernelPath path, int L,
                        int d, int heads, TileStage stage) {
  const ek::KernelTable& t = *ek::kernel_table(path);
  const int hd = d / heads, tiles = (L + ek::kQs8AttnTileRows - 1) / ek::kQs8AttnTileRows;
  Qs8Linear wq(d, d, 11), wk(d, d, 12), wv(d, d, 13);
  const auto x = RandS8(static_cast<size_t>(L) * d, 15);
  std::vector<int8_t> q(static_cast<size_t>(L) * d), kp(q.size()), vp(q.size()), ctx(q.size());
  wq.Run(t, L, x.data(), d, q.data(), d);
  wk.Run(t, L, x.data(), d, kp.data(), d);
  wv.Run(t, L, x.data(), d, vp.data(), d);
  const size_t head_bytes = ek::qs8_attention_tile_bytes(L, hd, hd);
  std::vector<uint8_t> scratch(heads * head_bytes * static_cast<size_t>(tiles));
  std::vector<ek::QS8AttentionArgs> args(heads);
  std::vector<ek::Qs8AttnTile> tile(static_cast<size_t>(heads) * tiles);
  std::vector<ek::Qs8AttnTileRows> rows(tile.size());
  const ek::SoftmaxExpParams sx = [&] {
    const ek::QS8AttentionArgs a = Qs8Head(L, L, hd, d);
    return ek::softmax_exp_params(a.score_mult, a.score_shift);
  }();
  for (int h = 0; h < heads; ++h) {
    ek::QS8AttentionArgs& a = args[h];
    a = Qs8Head(L, L, hd, d);
    a.q = q.data() + h * hd; a.k = kp.data() + h * hd; a.v = vp.data() + h * hd; a.out = ctx.data() + h * hd;
    for (int i = 0; i < tiles; ++i) {
      // Tile 0 of each head holds the packed keys and values; every tile
      // its own rows of scores, probabilities and planes.
      ek::Qs8AttnTile& ti = tile[static_cast<size_t>(h) * tiles + i];
      ti = ek::carve_qs8_attention_tile(scratch.data() + (static_cast<size_t>(h) * tiles + i) * head_bytes, L, hd, hd);
      if (i == 0) st.pack(a, L, &ti);
      const ek::Qs8AttnTile& t0 = tile[static_cast<size_t>(h) * tiles];
      ti.keys = t0.keys; ti.key_terms = t0.key_terms; ti.values = t0.values; ti.value_keys = t0.value_keys;
      ek::qs8_attention_tile_rows(a, i * ek::kQs8AttnTileRows, &rows[static_cast<size_t>(h) * tiles + i]);
    }
  }
  auto each_tile = [&](auto fn) {
    for (int h = 0; h < heads; ++h) {
      for (int i = 0; i < tiles; ++i) fn(args[h], tile[static_cast<size_t>(h) * tiles + i], &rows[static_cast<size_t>(h) * tiles + i]);
    }
  };
  each_tile([&](const ek::QS8AttentionArgs& a, const ek::Qs8AttnTile& ti, ek::Qs8AttnTileRows* r) {
    const int keys = r->limit[r->n - 1];
    st.qk(a, ti, *r, keys);
    st.softmax(a, sx, ti, r, keys);
  });
  for (auto _ : state) {
    switch (stage) {
      case TileStage::kPack:
        for (int h = 0; h < heads; ++h) st.pack(args[h], L, &tile[static_cast<size_t>(h) * tiles]);
        break;
      case TileStage::kQk:
        each_tile([&](const ek::QS8AttentionArgs& a, const ek::Qs8AttnTile& ti, ek::Qs8AttnTileRows* r) {
          st.qk(a, ti, *r, r->limit[r->n - 1]);
        });
        break;
      case TileStage::kSoftmax:
        each_tile([&](const ek::QS8AttentionArgs& a, const ek::Qs8AttnTile& ti, ek::Qs8AttnTileRows* r) {
          st.softmax(a, sx, ti, r, r->limit[r->n - 1]);
        });
        break;
      case TileStage::kPv:
        each_tile([&](const ek::QS8AttentionArgs& a, const ek::Qs8AttnTile& ti, ek::Qs8AttnTileRows* r) {
          st.pv(a, ti, *r, r->limit[r->n - 1]);
        });
        break;
    }
    benchmark::DoNotOptimize(scratch.data());
    benchmark::DoNotOptimize(ctx.data());
  }
  SetFlops(state, stage == TileStage::kQk || stage == TileStage::kPv ? 2.0 * L * static_cast<double>(L) * d : 0.0);
}

// Multi-head attention, int8. decoder: q_len = 1 against kv cached keys (K/V
// projections not timed, like a cached decoder step); else self-attention.
// Which pool calls of the split MHA layer a benchmark times: all, the Q/K/V
// projection call alone, or the attention core and out projection alone
// (each alone reads inputs that no other core has just written).
enum class MhaPart { kAll, kQkv, kCore };

void BM_Qs8Mha(benchmark::State& state, ek::KernelPath path, int L, int kv, int d, int heads, bool decoder,
               int workers = 1, bool chained = true, MhaPart part = MhaPart::kAll) {
  const ek::KernelTable& t = *ek::kernel_table(path);
  if (workers > 1 || part != MhaPart::kAll) {  // the runtime's split (Workers), self-attention
    Workers w(workers);
    Qs8Linear wq(d, d, 11), wk(d, d, 12), wv(d, d, 13), wo(d, d, 14);
    const auto x = RandS8(static_cast<size_t>(L) * d, 15);
    std::vector<int8_t> q(x.size()), kp(x.size()), vp(x.size()), ctx(x.size()), y(x.size());
    std::vector<HeadScratch> scratch(static_cast<size_t>(workers), HeadScratch(L, d / heads));
    const Qs8Linear* qkv[3] = {&wq, &wk, &wv};
    int8_t* const out3[3] = {q.data(), kp.data(), vp.data()};
    if (part == MhaPart::kCore) RunQkv(t, w, qkv, L, x.data(), out3);  // the core's inputs, once
    for (auto _ : state) {
      if (part != MhaPart::kCore) RunQkv(t, w, qkv, L, x.data(), out3);
      if (part == MhaPart::kQkv) {
        benchmark::DoNotOptimize(vp.data());
      } else if (chained) {
        RunHeadsOut(t, w, scratch, L, L, d, heads, q.data(), kp.data(), vp.data(), ctx.data(), wo, y.data());
      } else {
        RunHeads(t, w, scratch, L, L, d, heads, q.data(), kp.data(), vp.data(), ctx.data());
        RunLinear(t, w, wo, L, ctx.data(), y.data());
      }
      benchmark::DoNotOptimize(y.data());
    }
    SetFlops(state, 8.0 * L * d * static_cast<double>(d) + 4.0 * L * static_cast<double>(L) * d);
    SetBytes(state, MhaBytes(L, kv, d, false, 1));
    return;
  }
  const int hd = d / heads;
  Qs8Linear wq(d, d, 11), wk(d, d, 12), wv(d, d, 13), wo(d, d, 14);
  const auto x = RandS8(static_cast<size_t>(std::max(L, kv)) * d, 15);
  std::vector<int8_t> q(static_cast<size_t>(L) * d), ctx(q.size()), y(q.size());
  std::vector<int8_t> kp(static_cast<size_t>(kv) * d), vp(kp.size());
  std::vector<int32_t> scratch(kv);
  std::vector<uint16_t> probs(kv);
  std::vector<uint8_t> tile(ek::qs8_attention_tile_bytes(kv, hd, hd));
  if (decoder) {
    wk.Run(t, kv, x.data(), d, kp.data(), d);
    wv.Run(t, kv, x.data(), d, vp.data(), d);
  }
  for (auto _ : state) {
    wq.Run(t, L, x.data(), d, q.data(), d);
    if (!decoder) {
      wk.Run(t, kv, x.data(), d, kp.data(), d);
      wv.Run(t, kv, x.data(), d, vp.data(), d);
    }
    for (int h = 0; h < heads; ++h) {
      ek::QS8AttentionArgs a = Qs8Head(L, kv, hd, d);
      a.q = q.data() + h * hd; a.k = kp.data() + h * hd; a.v = vp.data() + h * hd;
      a.out = ctx.data() + h * hd;
      a.scratch = scratch.data(); a.prob_scratch = probs.data();
      a.tile_scratch = tile.data();  // as the runtime plans it (used when L >= 4)
      t.qs8_attention(a);
    }
    wo.Run(t, L, ctx.data(), d, y.data(), d);
    benchmark::DoNotOptimize(y.data());
  }
  const double flops = decoder ? 4.0 * d * d + 4.0 * kv * d
                               : 8.0 * L * d * static_cast<double>(d) + 4.0 * L * static_cast<double>(L) * d;
  SetFlops(state, flops);
  SetBytes(state, MhaBytes(L, kv, d, decoder, 1));
}

// One decoding step of causal self-attention with a KV cache (what
// Interpreter::Step does): the new token's Q, K and V projections (K and V
// written at row kv - 1 of the cache), every head over the kv cached
// positions, the output projection. Compare with mha_decoder_qs8 (cross
// attention: keys cached once, only Q and the output projected per step).
void BM_Qs8MhaKvStep(benchmark::State& state, ek::KernelPath path, int kv, int d, int heads) {
  const ek::KernelTable& t = *ek::kernel_table(path);
  const int hd = d / heads;
  Qs8Linear wq(d, d, 11), wk(d, d, 12), wv(d, d, 13), wo(d, d, 14);
  const auto x = RandS8(static_cast<size_t>(kv) * d, 15);
  std::vector<int8_t> q(d), ctx(d), y(d), kp(static_cast<size_t>(kv) * d), vp(kp.size());
  wk.Run(t, kv, x.data(), d, kp.data(), d);  // the cache as a prefill left it
  wv.Run(t, kv, x.data(), d, vp.data(), d);
  std::vector<int32_t> scratch(kv);
  std::vector<uint16_t> probs(kv);
  const int8_t* token = x.data() + static_cast<size_t>(kv - 1) * d;
  for (auto _ : state) {
    wq.Run(t, 1, token, d, q.data(), d);
    wk.Run(t, 1, token, d, kp.data() + static_cast<size_t>(kv - 1) * d, d);
    wv.Run(t, 1, token, d, vp.data() + static_cast<size_t>(kv - 1) * d, d);
    for (int h = 0; h < heads; ++h) {
      ek::QS8AttentionArgs a = Qs8Head(1, kv, hd, d);
      a.q = q.data() + h * hd; a.k = kp.data() + h * hd; a.v = vp.data() + h * hd;
      a.out = ctx.data() + h * hd;
      a.scratch = scratch.data(); a.prob_scratch = probs.data();
      t.qs8_attention(a);
    }
    wo.Run(t, 1, ctx.data(), d, y.data(), d);
    benchmark::DoNotOptimize(y.data());
  }
  SetFlops(state, 8.0 * d * d + 4.0 * kv * d);
  SetBytes(state, 4 * LinearBytes(d, d, 1) + 2 * static_cast<int64_t>(kv) * d);
}

void BM_F32Mha(benchmark::State& state, ek::KernelPath path, int L, int kv, int d, int heads, bool decoder) {
  const ek::KernelTable& t = *ek::kernel_table(path);
  const int hd = d / heads;
  F32Linear wq(d, d, 11), wk(d, d, 12), wv(d, d, 13), wo(d, d, 14);
  const auto x = RandF32(static_cast<size_t>(std::max(L, kv)) * d, 15, 1.0f);
  std::vector<float> q(static_cast<size_t>(L) * d), ctx(q.size()), y(q.size());
  std::vector<float> kp(static_cast<size_t>(kv) * d), vp(kp.size()), scratch(kv);
  if (decoder) {
    wk.Run(t, kv, x.data(), d, kp.data(), d);
    wv.Run(t, kv, x.data(), d, vp.data(), d);
  }
  for (auto _ : state) {
    wq.Run(t, L, x.data(), d, q.data(), d);
    if (!decoder) {
      wk.Run(t, kv, x.data(), d, kp.data(), d);
      wv.Run(t, kv, x.data(), d, vp.data(), d);
    }
    for (int h = 0; h < heads; ++h) {
      ek::F32AttentionArgs a = {};
      a.q_len = L; a.kv_len = kv; a.head_dim = hd; a.v_dim = hd;
      a.q = q.data() + h * hd; a.k = kp.data() + h * hd; a.v = vp.data() + h * hd;
      a.out = ctx.data() + h * hd;
      a.q_stride = a.k_stride = a.v_stride = a.out_stride = d;
      a.scale = 1.0f / std::sqrt(static_cast<float>(hd));
      a.kv_valid_len = kv;
      a.scratch = scratch.data();
      t.f32_attention(a);
    }
    wo.Run(t, L, ctx.data(), d, y.data(), d);
    benchmark::DoNotOptimize(y.data());
  }
  const double flops = decoder ? 4.0 * d * d + 4.0 * kv * d
                               : 8.0 * L * d * static_cast<double>(d) + 4.0 * L * static_cast<double>(L) * d;
  SetFlops(state, flops);
  SetBytes(state, MhaBytes(L, kv, d, decoder, 4));
}

// Additive (Bahdanau) decoder step, one query: query projection (dq -> da),
// scores v . tanh(qp + kp_j) over kv keys, softmax, P.V over dv-wide values.
// projected: the keys come raw ([kv][dk]) and the key projection (dk -> da)
// runs inside the timed loop, as in an uncached run; else it ran once before
// the loop (keys cached, as in a decoder step with precomputed keys).
constexpr int kAddDq = 256, kAddDk = 256, kAddDa = 128, kAddDv = 256;

double AdditiveFlops(int kv, bool projected) {
  return 2.0 * kAddDq * kAddDa + 4.0 * kv * kAddDa + 2.0 * kv * kAddDv +
         (projected ? 2.0 * kv * kAddDk * kAddDa : 0.0);
}

// extra = weight bytes beyond the two projections (v vector, tanh table).
int64_t AdditiveBytes(int kv, bool projected, int es, int64_t extra) {
  const int64_t keys = projected ? LinearBytes(kAddDk, kAddDa, es) + static_cast<int64_t>(kv) * kAddDk * es
                                 : static_cast<int64_t>(kv) * kAddDa * es;
  return LinearBytes(kAddDq, kAddDa, es) + extra + kAddDq * es + keys +
         static_cast<int64_t>(kv) * kAddDv * es + kAddDv * es;
}

void BM_Qs8Additive(benchmark::State& state, ek::KernelPath path, int kv, bool projected) {
  const ek::KernelTable& t = *ek::kernel_table(path);
  const int dq = kAddDq, dk = kAddDk, ad = kAddDa, vd = kAddDv;
  Qs8Linear wq(dq, ad, 21), wk(dk, ad, 27);
  const auto x = RandS8(dq, 22);
  const auto keys = RandS8(static_cast<size_t>(kv) * dk, 23);
  const auto values = RandS8(static_cast<size_t>(kv) * vd, 24);
  const auto table = RandS8(256, 25);
  const auto v_w = RandS8(ad, 26);
  std::vector<int8_t> qp(ad), kp(static_cast<size_t>(kv) * ad), out(vd);
  std::vector<int32_t> scratch(kv);
  std::vector<uint16_t> probs(kv);
  ek::QS8AdditiveArgs a = {};
  a.q_len = 1; a.kv_len = kv; a.attn_dim = ad; a.v_dim = vd;
  a.qp = qp.data(); a.qp_stride = ad; a.qp_zp = 1;
  a.kp = kp.data(); a.kp_stride = ad; a.kp_zp = -2;
  Mult(0.5, &a.pre_mult, &a.pre_shift); a.pre_zp = 0;
  a.tanh_table = table.data(); a.v_w = v_w.data();
  Mult(1.0 / (std::sqrt(static_cast<double>(ad)) * 127.0 * 127.0) * 65536.0 * 4.0, &a.score_mult, &a.score_shift);
  Mult(1.0 / 32768.0, &a.pv_mult, &a.pv_shift);
  a.values = values.data(); a.values_stride = vd; a.values_zp = 0; a.out_zp = 0;
  a.kv_valid_len = kv;
  a.out = out.data(); a.out_stride = vd;
  a.scratch = scratch.data(); a.prob_scratch = probs.data();
  if (!projected) wk.Run(t, kv, keys.data(), dk, kp.data(), ad);
  for (auto _ : state) {
    wq.Run(t, 1, x.data(), dq, qp.data(), ad);
    if (projected) wk.Run(t, kv, keys.data(), dk, kp.data(), ad);
    t.qs8_additive(a);
    benchmark::DoNotOptimize(out.data());
  }
  SetFlops(state, AdditiveFlops(kv, projected));
  SetBytes(state, AdditiveBytes(kv, projected, 1, ad + 256));
}

void BM_F32Additive(benchmark::State& state, ek::KernelPath path, int kv, bool projected) {
  const ek::KernelTable& t = *ek::kernel_table(path);
  const int dq = kAddDq, dk = kAddDk, ad = kAddDa, vd = kAddDv;
  F32Linear wq(dq, ad, 21), wk(dk, ad, 27);
  const auto x = RandF32(dq, 22, 1.0f);
  const auto keys = RandF32(static_cast<size_t>(kv) * dk, 23, 1.0f);
  const auto values = RandF32(static_cast<size_t>(kv) * vd, 24, 1.0f);
  const auto v_w = RandF32(ad, 26, 0.1f);
  std::vector<float> qp(ad), kp(static_cast<size_t>(kv) * ad), out(vd), scratch(kv);
  ek::F32AdditiveArgs a = {};
  a.q_len = 1; a.kv_len = kv; a.attn_dim = ad; a.v_dim = vd;
  a.qp = qp.data(); a.qp_stride = ad; a.kp = kp.data(); a.kp_stride = ad;
  a.v_w = v_w.data(); a.values = values.data(); a.values_stride = vd;
  a.kv_valid_len = kv; a.out = out.data(); a.out_stride = vd; a.scratch = scratch.data();
  if (!projected) wk.Run(t, kv, keys.data(), dk, kp.data(), ad);
  for (auto _ : state) {
    wq.Run(t, 1, x.data(), dq, qp.data(), ad);
    if (projected) wk.Run(t, kv, keys.data(), dk, kp.data(), ad);
    t.f32_additive(a);
    benchmark::DoNotOptimize(out.data());
  }
  SetFlops(state, AdditiveFlops(kv, projected));
  SetBytes(state, AdditiveBytes(kv, projected, 4, static_cast<int64_t>(ad) * 4));
}

// Attention pooling: one learned query row over L hidden states of width d
// (keys = values = the hidden states, 1 head, head_dim d), as run_pooling:
// the query is a weight (symmetric for int8, unscaled for f32: scale 1).
int64_t PoolingBytes(int L, int d, int es) {
  return (static_cast<int64_t>(d) + static_cast<int64_t>(L) * d + d) * es;
}

void BM_Qs8Pooling(benchmark::State& state, ek::KernelPath path, int L, int d) {
  const ek::KernelTable& t = *ek::kernel_table(path);
  const auto query = RandS8(d, 31);
  const auto hidden = RandS8(static_cast<size_t>(L) * d, 32);
  std::vector<int8_t> out(d);
  std::vector<int32_t> scratch(L);
  std::vector<uint16_t> probs(L);
  ek::QS8AttentionArgs a = Qs8Head(1, L, d, d);
  a.q_zp = 0; a.v_zp = a.k_zp;
  a.q = query.data(); a.k = hidden.data(); a.v = hidden.data(); a.out = out.data();
  a.scratch = scratch.data(); a.prob_scratch = probs.data();
  for (auto _ : state) {
    t.qs8_attention(a);
    benchmark::DoNotOptimize(out.data());
  }
  SetFlops(state, 4.0 * L * d);
  SetBytes(state, PoolingBytes(L, d, 1));
}

void BM_F32Pooling(benchmark::State& state, ek::KernelPath path, int L, int d) {
  const ek::KernelTable& t = *ek::kernel_table(path);
  const auto query = RandF32(d, 31, 1.0f / std::sqrt(static_cast<float>(d)));
  const auto hidden = RandF32(static_cast<size_t>(L) * d, 32, 1.0f);
  std::vector<float> out(d), scratch(L);
  ek::F32AttentionArgs a = {};
  a.q_len = 1; a.kv_len = L; a.head_dim = d; a.v_dim = d;
  a.q = query.data(); a.k = hidden.data(); a.v = hidden.data(); a.out = out.data();
  a.q_stride = a.k_stride = a.v_stride = a.out_stride = d;
  a.scale = 1.0f;
  a.kv_valid_len = L;
  a.scratch = scratch.data();
  for (auto _ : state) {
    t.f32_attention(a);
    benchmark::DoNotOptimize(out.data());
  }
  SetFlops(state, 4.0 * L * d);
  SetBytes(state, PoolingBytes(L, d, 4));
}

// The int8 benchmarks with projections once more as ".../xnnpack": XNNPACK
// projections, the rest on the best kernel path.
// A pre-norm transformer encoder block, int8, as the encoder_block layer
// kind runs it (runtime/src/layers/encoder_block.cc): a = LN1(x);
// h = x + MHA(a); n = LN2(h); y = h + fc2(GELU(fc1(n))), FFN width 4 d,
// each residual added in the epilogue of the projection before it
// (qs8_linear_res; ONNX Runtime's QBlock in ../shared/peers computes the
// same block with separate adds). `stage` times one kind of step alone on
// the same buffers (stage split: norm = both LayerNorms, attn = the MHA
// layer with the first residual, ffn = fc1 + activation + fc2 with the
// second; table = the activation table alone, a part of ffn).
enum class BlockStage { kAll, kNorm, kAttn, kFfn, kTable };


// kAll runs the block as the runtime does (run_chain in
// runtime/src/layers/exec.h): norm1 with the Q, K and V projections of row
// tiles in one pool call, the attention core (its context into `a`), and
// every later step of a row tile in one more; sub_rows > 0 runs a task's
// chain over sub-tiles of that many rows (the runtime does not: on one
// thread that measured no faster, docs/performance.md). chained =
// false: every step in its own pool call (the runtime before chaining).
void BM_Qs8EncoderBlock(benchmark::State& state, ek::KernelPath path, int L, int d, int heads, BlockStage stage,
                        int workers = 1, bool chained = true, int sub_rows = 0) {
  const ek::KernelTable& t = *ek::kernel_table(path);
  Workers w(workers);
  const int hd = d / heads, f = 4 * d;
  Qs8Linear wq(d, d, 11), wk(d, d, 12), wv(d, d, 13), wo(d, d, 14), fc1(d, f, 16), fc2(f, d, 17);
  Qs8Norm n1(d), n2(d);
  std::vector<int8_t> gelu(256);
  for (int i = 0; i < 256; ++i) {
    const double x = (i - 128) * (8.0 / 128.0);
    gelu[i] = static_cast<int8_t>(std::lround(std::min(127.0, 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))) / (8.0 / 127.0))));
  }
  const auto x = RandS8(static_cast<size_t>(L) * d, 15);
  std::vector<int8_t> a(x.size()), q(x.size()), kp(x.size()), vp(x.size()), ctx(x.size()), o(x.size()), y(x.size());
  std::vector<int8_t> hidden(static_cast<size_t>(L) * f);
  std::vector<int32_t> scratch(L);
  std::vector<uint16_t> probs(L);
  std::vector<uint8_t> tile(ek::qs8_attention_tile_bytes(L, hd, hd));
  std::vector<HeadScratch> heads_scratch(static_cast<size_t>(workers), HeadScratch(L, hd));
  // x at zero point 0, every projection's output at -3 (Qs8Linear).
  const ek::ResidualTerm res1 = ResTerm(0, -3), res2 = ResTerm(-3, -3);
  const bool all = stage == BlockStage::kAll;
  // Row-wise steps (LayerNorm, the activation) by rows.
  auto by_rows = [&](uint64_t work_per_row, auto step) {
    w.For(L, w.Tasks(work_per_row * static_cast<uint64_t>(L), L), [&](int r0, int r1, int) { step(r0, r1 - r0); });
  };
  auto norm = [&](Qs8Norm& n, const int8_t* in, int8_t* out) {
    by_rows(ek::kLayerNormWorkPerElement * static_cast<uint64_t>(d), [&](int r0, int rows) {
      ek::QS8LayerNormArgs part = n.args;  // the same parameters, a row range
      part.rows = rows;
      part.x = in + static_cast<size_t>(r0) * d; part.x_stride = d;
      part.y = out + static_cast<size_t>(r0) * d; part.y_stride = d;
      t.qs8_layernorm(part);
    });
  };
  const Qs8Linear* qkv[3] = {&wq, &wk, &wv};
  // Steps of rows [r0, r1) on a copy of the kernels' arguments.
  auto norm_rows = [&](const Qs8Norm& n, const int8_t* in, int8_t* out, int r0, int r1) {
    ek::QS8LayerNormArgs part = n.args;
    part.rows = r1 - r0;
    part.x = in + static_cast<size_t>(r0) * d; part.x_stride = d;
    part.y = out + static_cast<size_t>(r0) * d; part.y_stride = d;
    t.qs8_layernorm(part);
  };
  auto linear_rows = [&](const Qs8Linear& l, const int8_t* in, int8_t* out, int r0, int r1) {
    l.Run(t, r1 - r0, in + static_cast<size_t>(r0) * l.in, l.in, out + static_cast<size_t>(r0) * l.out, l.out);
  };
  auto linear_res_rows = [&](const Qs8Linear& l, const int8_t* in, const int8_t* res, const ek::ResidualTerm& term,
                             int8_t* out, int r0, int r1) {
    const size_t at = static_cast<size_t>(r0) * l.out;
    l.RunRes(t, r1 - r0, in + static_cast<size_t>(r0) * l.in, res + at, term, out + at);
  };
  // One pool call over row tiles (ek::chain_split), or `alone` (each step its own).
  auto chain = [&](uint64_t work_per_row, auto alone, auto rows) {
    const int unit = ek::kLinearRowUnit;
    const ek::ChainSplit cs =
        ek::chain_split(L, unit, work_per_row * static_cast<uint64_t>(L), w.count(), ek::kDefaultMinTaskWork);
    if (!cs.chained) {
      alone();
      return;
    }
    w.For(cs.units, cs.tasks, [&](int begin, int end, int) {
      const ek::TaskRange r = ek::chain_rows({begin, end}, unit, L);
      const int sub = sub_rows > 0 ? sub_rows : r.end - r.begin;
      for (int r0 = r.begin; r0 < r.end; r0 += sub) rows(r0, std::min(r0 + sub, r.end));
    });
  };
  const uint64_t ud = static_cast<uint64_t>(d);
  for (auto _ : state) {
    if (all && chained) {
      chain(ek::kLayerNormWorkPerElement * ud + 3 * ud * ud,
            [&] {
              norm(n1, x.data(), a.data());
              int8_t* const out3[3] = {q.data(), kp.data(), vp.data()};
              RunQkv(t, w, qkv, L, a.data(), out3);
            },
            [&](int r0, int r1) {
              norm_rows(n1, x.data(), a.data(), r0, r1);
              linear_rows(wq, a.data(), q.data(), r0, r1);
              linear_rows(wk, a.data(), kp.data(), r0, r1);
              linear_rows(wv, a.data(), vp.data(), r0, r1);
            });
      RunHeads(t, w, heads_scratch, L, L, d, heads, q.data(), kp.data(), vp.data(), a.data());
      // h = x + out_proj(context) into o, LN2(h) into a (the context's
      // rows are done with), y = h + fc2(...).
      chain(ud * ud + ek::kLayerNormWorkPerElement * ud + 8 * ud * ud + ek::kTableWorkPerElement * 4 * ud,
            [&] {
              RunLinearRes(t, w, wo, L, a.data(), x.data(), res1, o.data());
              norm(n2, o.data(), a.data());
              RunLinear(t, w, fc1, L, a.data(), hidden.data());
              by_rows(ek::kTableWorkPerElement * static_cast<uint64_t>(f), [&](int r0, int rows) {
                int8_t* h = hidden.data() + static_cast<size_t>(r0) * f;
                t.qs8_lut(rows, f, h, f, gelu.data(), h, f);
              });
              RunLinearRes(t, w, fc2, L, hidden.data(), o.data(), res2, y.data());
            },
            [&](int r0, int r1) {
              linear_res_rows(wo, a.data(), x.data(), res1, o.data(), r0, r1);
              norm_rows(n2, o.data(), a.data(), r0, r1);
              linear_rows(fc1, a.data(), hidden.data(), r0, r1);
              int8_t* h = hidden.data() + static_cast<size_t>(r0) * f;
              t.qs8_lut(r1 - r0, f, h, f, gelu.data(), h, f);
              linear_res_rows(fc2, hidden.data(), o.data(), res2, y.data(), r0, r1);
            });
      benchmark::DoNotOptimize(y.data());
      continue;
    }
    if (all || stage == BlockStage::kNorm) norm(n1, x.data(), a.data());
    if (all || stage == BlockStage::kAttn) {
      int8_t* const out3[3] = {q.data(), kp.data(), vp.data()};
      RunQkv(t, w, qkv, L, a.data(), out3);
      RunHeads(t, w, heads_scratch, L, L, d, heads, q.data(), kp.data(), vp.data(), ctx.data());
      RunLinearRes(t, w, wo, L, ctx.data(), x.data(), res1, o.data());  // h = x + out_proj(ctx), into o
    }
    if (all || stage == BlockStage::kNorm) norm(n2, o.data(), q.data());
    if (all || stage == BlockStage::kFfn) RunLinear(t, w, fc1, L, q.data(), hidden.data());
    if (all || stage == BlockStage::kFfn || stage == BlockStage::kTable) {
      by_rows(ek::kTableWorkPerElement * static_cast<uint64_t>(f), [&](int r0, int rows) {
        int8_t* h = hidden.data() + static_cast<size_t>(r0) * f;
        t.qs8_lut(rows, f, h, f, gelu.data(), h, f);
      });
    }
    if (all || stage == BlockStage::kFfn) {
      RunLinearRes(t, w, fc2, L, hidden.data(), o.data(), res2, y.data());  // y = h + ffn
    }
    benchmark::DoNotOptimize(y.data());
  }
  // The peers' convention (../shared/peers/common.hpp): 24 L d^2 + 4 L^2 d.
  SetFlops(state, 24.0 * L * d * static_cast<double>(d) + 4.0 * L * static_cast<double>(L) * d);
  SetBytes(state, 4 * LinearBytes(d, d, 1) + LinearBytes(d, f, 1) + LinearBytes(f, d, 1) + 2 * static_cast<int64_t>(L) * d);
}

// The same pre-norm block on the 16-bit residual stream (issue 37), as the
// runtime runs it with EncoderBlock.residual16 on the caller's thread: x,
// h and y int16 (zero point 0), both LayerNorms qs16_layernorm (int16 in,
// the GEMM's int8 out), both residual adds qs8_linear_res16 (contract 5c,
// residual and output at one scale: A = 2^13, n = 13). The GEMMs, the
// attention core and the activation table are the int8 block's.
void BM_Qs8EncoderBlockStream16(benchmark::State& state, ek::KernelPath path, int L, int d, int heads) {
  const ek::KernelTable& t = *ek::kernel_table(path);
  Workers w(1);
  const int hd = d / heads, f = 4 * d;
  Qs8Linear wq(d, d, 11), wk(d, d, 12), wv(d, d, 13), wo(d, d, 14), fc1(d, f, 16), fc2(f, d, 17);
  Qs8Norm n1(d), n2(d);
  std::vector<int8_t> gelu(256);  // BM_Qs8EncoderBlock's table
  for (int i = 0; i < 256; ++i) {
    const double v = (i - 128) * (8.0 / 128.0);
    gelu[i] = static_cast<int8_t>(
        std::lround(std::min(127.0, 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))) / (8.0 / 127.0))));
  }
  std::vector<int16_t> x(static_cast<size_t>(L) * d), o(x.size()), y(x.size());
  {
    const auto r = RandS8(x.size(), 15);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int16_t>(r[i] * 200);
  }
  std::vector<int8_t> a(x.size()), q(x.size()), kp(x.size()), vp(x.size());
  std::vector<int8_t> hidden(static_cast<size_t>(L) * f);
  std::vector<HeadScratch> heads_scratch(1, HeadScratch(L, hd));
  auto norm16 = [&](const Qs8Norm& n, const int16_t* in, int8_t* out, int r0, int r1) {
    ek::QS16LayerNormArgs s = {};
    s.rows = r1 - r0;
    s.dim = d;
    s.x = in + static_cast<size_t>(r0) * d; s.x_stride = d;
    s.eps_term = int64_t{1} << 28;
    s.gain = n.args.gain; s.bias = n.args.bias;
    s.mult = n.args.mult; s.shift = n.args.shift; s.y_zp = 0;
    s.y8 = out + static_cast<size_t>(r0) * d; s.y8_stride = d;
    t.qs16_layernorm(s);
  };
  const ek::Residual16Term term = {int32_t{1} << 13, 13};
  auto linear_res16 = [&](const Qs8Linear& l, const int8_t* in, const int16_t* res, int16_t* out, int r0, int r1) {
    const int32_t shift = l.res_shift + 1;  // the epilogue's 2^13 (RunRes's multiplier carries 2^12)
    const size_t at = static_cast<size_t>(r0) * l.out;
    t.qs8_linear_res16(r1 - r0, l.out, l.in, in + static_cast<size_t>(r0) * l.in, l.in, l.w_packed.data(),
                       l.bias.data(), &l.res_mult, &shift, 0, {res + at, l.out, term}, out + at, l.out);
  };
  for (auto _ : state) {
    norm16(n1, x.data(), a.data(), 0, L);
    wq.Run(t, L, a.data(), d, q.data(), d);
    wk.Run(t, L, a.data(), d, kp.data(), d);
    wv.Run(t, L, a.data(), d, vp.data(), d);
    RunHeads(t, w, heads_scratch, L, L, d, heads, q.data(), kp.data(), vp.data(), a.data());
    linear_res16(wo, a.data(), x.data(), o.data(), 0, L);
    norm16(n2, o.data(), a.data(), 0, L);
    fc1.Run(t, L, a.data(), d, hidden.data(), f);
    t.qs8_lut(L, f, hidden.data(), f, gelu.data(), hidden.data(), f);
    linear_res16(fc2, hidden.data(), o.data(), y.data(), 0, L);
    benchmark::DoNotOptimize(y.data());
  }
  SetFlops(state, 24.0 * L * d * static_cast<double>(d) + 4.0 * L * static_cast<double>(L) * d);
  SetBytes(state,
           4 * LinearBytes(d, d, 1) + LinearBytes(d, f, 1) + LinearBytes(f, d, 1) + 4 * static_cast<int64_t>(L) * d);
}

void RegisterXnnpack() {
#if EA_HAVE_XNNPACK
  if (xnn_initialize(nullptr) != xnn_status_success) return;
  const ek::KernelPath p = ek::best_kernel_path();
  auto reg = [&](const std::string& name, auto fn) {
    benchmark::RegisterBenchmark((name + "/xnnpack").c_str(), [=](benchmark::State& st) {
      XnnpackScope on;
      fn(st);
    });
  };
  for (int rows : {1, 16, 64, 128}) {
    for (int d : {64, 128, 256}) {
      const std::string s = "/rows:" + std::to_string(rows) + "/in:" + std::to_string(d) + "/out:" + std::to_string(d);
      reg("qs8_linear" + s, [=](benchmark::State& st) { BM_Qs8Linear(st, *ek::kernel_table(p), rows, d, d); });
    }
  }
  for (int L : {16, 64, 128, 256}) {
    for (int d : {64, 128, 256}) {
      for (int h : {1, 4, 8}) {
        const std::string s = "/L:" + std::to_string(L) + "/d:" + std::to_string(d) + "/heads:" + std::to_string(h);
        reg("mha_qs8" + s, [=](benchmark::State& st) { BM_Qs8Mha(st, p, L, L, d, h, false); });
      }
    }
  }
  for (int kv : {64, 256, 1024}) {
    const std::string s = "/kv:" + std::to_string(kv) + "/d:256/heads:4";
    reg("mha_decoder_qs8" + s, [=](benchmark::State& st) { BM_Qs8Mha(st, p, 1, kv, 256, 4, true); });
  }
  for (int kv : {32, 128}) {
    for (bool proj : {false, true}) {
      const std::string s = "/q:1/kv:" + std::to_string(kv) + "/dq:" + std::to_string(kAddDq) +
                            "/da:" + std::to_string(kAddDa) + (proj ? "/keys:projected" : "/keys:cached");
      reg("additive_qs8" + s, [=](benchmark::State& st) { BM_Qs8Additive(st, p, kv, proj); });
    }
  }
#endif
}

void RegisterKernels() {
  // Per family (bench/kernels/<family>_bench.cc), every listed variant.
  RegisterQs8LinearBenchmarks();
  RegisterF32LinearBenchmarks();
  RegisterQs8LinearResBenchmarks();
  RegisterQs8LayerNormBenchmarks();
  RegisterQs8LinearRes16Benchmarks();
  RegisterQs16LayerNormBenchmarks();
  RegisterQs8LutBenchmarks();
  RegisterQs16NarrowBenchmarks();
  RegisterQs8AddBenchmarks();
  RegisterQs8Add16Benchmarks();
  RegisterQs8AttentionBenchmarks();
  RegisterF32AttentionBenchmarks();
  const ek::MicrokernelLists& l = ek::microkernel_lists();
  auto reg = [](const std::string& name, auto fn) { benchmark::RegisterBenchmark(name.c_str(), fn); };
  // The tiled attention's stages inside the MHA layer, per tiling variant
  // (the projections: mha_stage_qs8 .../stage:proj).
  for (const ek::Microkernel<ek::Qs8AttnTileStagesFn>* v = l.qs8_attention_tile; v->fn != nullptr; ++v) {
    if (!ek::kernel_path_supported(v->path)) continue;
    const ek::Qs8AttnTileStages* st = &v->fn();
    const ek::KernelPath path = v->path;
    for (const auto& shape : {std::array<int, 3>{64, 128, 4}, std::array<int, 3>{128, 128, 4},
                              std::array<int, 3>{256, 128, 4}, std::array<int, 3>{128, 128, 8},
                              std::array<int, 3>{128, 256, 8}}) {
      const std::pair<const char*, TileStage> stages[] = {
          {"pack", TileStage::kPack}, {"qk", TileStage::kQk}, {"softmax", TileStage::kSoftmax}, {"pv", TileStage::kPv}};
      for (const auto& stage : stages) {
        const int L = shape[0], d = shape[1], h = shape[2];
        const TileStage which = stage.second;
        reg("mha_tile_stage_qs8/L:" + std::to_string(L) + "/d:" + std::to_string(d) + "/heads:" + std::to_string(h) +
                "/stage:" + stage.first + "/" + ek::kernel_path_name(path),
            [=](benchmark::State& s) { BM_Qs8MhaTileStage(s, *st, path, L, d, h, which); });
      }
    }
  }
}

struct alignas(64) Hit {  // a cache line per task
  int count;
};
void CountHit(void* hits, int32_t task) { benchmark::DoNotOptimize(++static_cast<Hit*>(hits)[task].count); }

// One hand-over of the targets/linux pool: a parallel_for of one empty
// task per worker, what every pool call of a layer costs on top of its work.
void BM_PoolCall(benchmark::State& state, int workers) {
  Workers w(workers);
  std::vector<Hit> hits(static_cast<size_t>(workers));
  for (auto _ : state) {
    w.For(workers, workers, [&](int begin, int, int) { benchmark::DoNotOptimize(++hits[static_cast<size_t>(begin)].count); });
  }
}

#if EA_BENCH_PTHREADPOOL
// The same empty call through the pthreadpool adapter
// (runtime/include/edgeattn/pthreadpool_executor.h), as the runtime calls it.
void BM_PthreadpoolCall(benchmark::State& state, int threads) {
  pthreadpool_t pool = pthreadpool_create(static_cast<size_t>(threads));
  const ea_executor e = ea_pthreadpool_executor(pool);
  std::vector<Hit> hits(static_cast<size_t>(threads));
  for (auto _ : state) e.parallel_for(e.context, CountHit, hits.data(), threads);
  pthreadpool_destroy(pool);
}
#endif

void RegisterAll() {
  RegisterKernels();
  for (int n : {2, 4}) {  // 4: for boards with 4 cores (on fewer, threads wait for a core)
    benchmark::RegisterBenchmark(("pool_call/workers:" + std::to_string(n)).c_str(),
                                 [=](benchmark::State& st) { BM_PoolCall(st, n); });
#if EA_BENCH_PTHREADPOOL
    benchmark::RegisterBenchmark(("pthreadpool_call/threads:" + std::to_string(n)).c_str(),
                                 [=](benchmark::State& st) { BM_PthreadpoolCall(st, n); });
#endif
  }
  for (int i = 0; i < static_cast<int>(ek::KernelPath::kCount); ++i) {
    const auto p = static_cast<ek::KernelPath>(i);
    if (!ek::kernel_path_supported(p)) continue;
    const std::string pn = ek::kernel_path_name(p);
    auto reg = [&](const std::string& name, auto fn) {
      benchmark::RegisterBenchmark((name + "/" + pn).c_str(), fn);
    };
    // Layers.
    for (int L : {16, 64, 128, 256}) {
      for (int d : {64, 128, 256}) {
        for (int h : {1, 4, 8}) {
          const std::string s = "/L:" + std::to_string(L) + "/d:" + std::to_string(d) + "/heads:" + std::to_string(h);
          reg("mha_qs8" + s, [=](benchmark::State& st) { BM_Qs8Mha(st, p, L, L, d, h, false); });
          for (int n : {2, 4}) {
            benchmark::RegisterBenchmark(("mha_qs8" + s + "/" + pn + "/workers:" + std::to_string(n)).c_str(),
                                         [=](benchmark::State& st) { BM_Qs8Mha(st, p, L, L, d, h, false, n); });
            // The head split and the out projection in separate pool calls (before run_chain).
            benchmark::RegisterBenchmark(("mha_qs8" + s + "/" + pn + "/workers:" + std::to_string(n) + "/steps").c_str(),
                                         [=](benchmark::State& st) { BM_Qs8Mha(st, p, L, L, d, h, false, n, false); });
          }
          // Each pool call of the layer alone, on 1 and 2 workers (docs/performance.md, "A cheaper hand-over").
          for (int n : {1, 2}) {
            if (h != 4) break;
            for (const auto& part : {std::make_pair("qkv", MhaPart::kQkv), std::make_pair("core", MhaPart::kCore)}) {
              const MhaPart which = part.second;
              benchmark::RegisterBenchmark(
                  ("mha_qs8" + s + "/" + pn + "/workers:" + std::to_string(n) + "/part:" + part.first).c_str(),
                  [=](benchmark::State& st) { BM_Qs8Mha(st, p, L, L, d, h, false, n, true, which); });
            }
          }
          reg("mha_f32" + s, [=](benchmark::State& st) { BM_F32Mha(st, p, L, L, d, h, false); });
        }
      }
    }
    for (const auto& shape : {std::array<int, 3>{64, 128, 4}, std::array<int, 3>{128, 128, 4},
                              std::array<int, 3>{256, 128, 4}, std::array<int, 3>{128, 256, 8}}) {
      const std::pair<const char*, MhaStage> stages[] = {{"proj", MhaStage::kProj},
                                                         {"qk", MhaStage::kQk},
                                                         {"softmax", MhaStage::kSoftmax},
                                                         {"pv", MhaStage::kPv}};
      for (const auto& stage : stages) {
        const int L = shape[0], d = shape[1], h = shape[2];
        const std::string s = "/L:" + std::to_string(L) + "/d:" + std::to_string(d) + "/heads:" +
                              std::to_string(h) + "/stage:" + stage.first;
        const MhaStage which = stage.second;
        reg("mha_stage_qs8" + s, [=](benchmark::State& st) { BM_Qs8MhaStage(st, p, L, d, h, which); });
      }
    }
    for (int kv : {64, 256, 1024}) {
      const std::string s = "/kv:" + std::to_string(kv) + "/d:256/heads:4";
      reg("mha_decoder_qs8" + s, [=](benchmark::State& st) { BM_Qs8Mha(st, p, 1, kv, 256, 4, true); });
      reg("mha_decoder_f32" + s, [=](benchmark::State& st) { BM_F32Mha(st, p, 1, kv, 256, 4, true); });
    }
    for (int kv : {16, 64, 256, 1024}) {
      const std::string s = "/kv:" + std::to_string(kv) + "/d:256/heads:4";
      reg("mha_kv_step_qs8" + s, [=](benchmark::State& st) { BM_Qs8MhaKvStep(st, p, kv, 256, 4); });
    }
    for (int kv : {32, 128}) {
      for (bool proj : {false, true}) {
        const std::string s = "/q:1/kv:" + std::to_string(kv) + "/dq:" + std::to_string(kAddDq) +
                              "/da:" + std::to_string(kAddDa) + (proj ? "/keys:projected" : "/keys:cached");
        reg("additive_qs8" + s, [=](benchmark::State& st) { BM_Qs8Additive(st, p, kv, proj); });
        reg("additive_f32" + s, [=](benchmark::State& st) { BM_F32Additive(st, p, kv, proj); });
      }
    }
    // The encoder block grid of ../shared/peers (ort-grid.sh --only block),
    // and its stage split at a few shapes.
    for (int L : {16, 64, 128, 256}) {
      for (int d : {64, 128, 256}) {
        const std::string s = "/L:" + std::to_string(L) + "/d:" + std::to_string(d) + "/heads:4";
        reg("encoder_block_qs8" + s, [=](benchmark::State& st) { BM_Qs8EncoderBlock(st, p, L, d, 4, BlockStage::kAll); });
        reg("encoder_block_qs8" + s + "/stream:int16",
            [=](benchmark::State& st) { BM_Qs8EncoderBlockStream16(st, p, L, d, 4); });
        for (int n : {2, 4}) {
          const std::string wn = s + "/" + pn + "/workers:" + std::to_string(n);
          benchmark::RegisterBenchmark(("encoder_block_qs8" + wn).c_str(), [=](benchmark::State& st) {
            BM_Qs8EncoderBlock(st, p, L, d, 4, BlockStage::kAll, n);
          });
          // Every step in its own pool call (before run_chain), to compare in one run.
          benchmark::RegisterBenchmark(("encoder_block_qs8" + wn + "/steps").c_str(), [=](benchmark::State& st) {
            BM_Qs8EncoderBlock(st, p, L, d, 4, BlockStage::kAll, n, false);
          });
        }
        // One thread, the chain over sub-tiles of 8, 16 or 32 rows: does a tile's data
        // staying in L1 from step to step pay? (Issue 24's fusion measurement.)
        for (int sub : {8, 16, 32}) {
          if (sub >= L) continue;
          reg("encoder_block_qs8" + s + "/chain_rows:" + std::to_string(sub),
              [=](benchmark::State& st) { BM_Qs8EncoderBlock(st, p, L, d, 4, BlockStage::kAll, 1, true, sub); });
        }
      }
    }
    for (const auto& shape : {std::array<int, 2>{64, 128}, std::array<int, 2>{128, 128}, std::array<int, 2>{256, 256}}) {
      const std::pair<const char*, BlockStage> stages[] = {{"norm", BlockStage::kNorm},
                                                           {"attn", BlockStage::kAttn},
                                                           {"ffn", BlockStage::kFfn},
                                                           {"table", BlockStage::kTable}};
      for (const auto& stage : stages) {
        const int L = shape[0], d = shape[1];
        const BlockStage which = stage.second;
        reg("encoder_block_stage_qs8/L:" + std::to_string(L) + "/d:" + std::to_string(d) + "/heads:4/stage:" +
                stage.first,
            [=](benchmark::State& st) { BM_Qs8EncoderBlock(st, p, L, d, 4, which); });
      }
    }
    for (int L : {16, 64, 128, 256}) {
      const std::string s = "/L:" + std::to_string(L) + "/d:128";
      reg("pooling_qs8" + s, [=](benchmark::State& st) { BM_Qs8Pooling(st, p, L, 128); });
      reg("pooling_f32" + s, [=](benchmark::State& st) { BM_F32Pooling(st, p, L, 128); });
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  RegisterAll();
  RegisterXnnpack();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

