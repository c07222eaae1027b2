// Stage boundaries of a layer's execution, for per-stage instruction counts
// (the Cortex-M bench's ea_cm_bench_stages). Only a build that defines
// EA_STAGE_PROFILE=1 calls the hooks, which that firmware defines; everywhere
// else the macros are empty, so production code is what it was.
#ifndef EDGEATTN_KERNELS_STAGE_PROFILE_H_
#define EDGEATTN_KERNELS_STAGE_PROFILE_H_

// EA_STAGE_GEMM is a projection's kernel call: the profiler counts it as a
// projection, or as the FFN's when it runs inside EA_STAGE_FFN.
enum ea_stage_id {
  EA_STAGE_OTHER = 0,
  EA_STAGE_GEMM,
  EA_STAGE_SCORES,
  EA_STAGE_SOFTMAX,
  EA_STAGE_WSUM,
  EA_STAGE_FFN,
  EA_STAGE_LAYERNORM,
};

#if defined(EA_STAGE_PROFILE) && EA_STAGE_PROFILE
extern "C" {
// Enters `stage` and returns the stage left, for EA_STAGE_LEAVE.
int ea_stage_enter(int stage);
// Multiply-adds of the GEMM call about to run.
void ea_stage_macs(long long macs);
}
#define EA_STAGE_ENTER(saved, stage) const int saved = ea_stage_enter(stage)
#define EA_STAGE_LEAVE(saved) ea_stage_enter(saved)
#define EA_STAGE_SET(stage) ea_stage_enter(stage)
#define EA_STAGE_MACS(macs) ea_stage_macs(macs)
#else
#define EA_STAGE_ENTER(saved, stage)
#define EA_STAGE_LEAVE(saved)
#define EA_STAGE_SET(stage)
#define EA_STAGE_MACS(macs)
#endif

#endif  // EDGEATTN_KERNELS_STAGE_PROFILE_H_
