// What this runtime was built with. Firmware that runs one kind of model may
// compile paths out (CMake options, README "Build options"); the defaults keep
// them all. A model that needs a path compiled out is refused at load with
// EA_UNSUPPORTED and a message naming the option (Model::VerifyLayer,
// Checker::Stream16), so the code that runs a layer may assume it never
// comes: `kWithF32 && ...`, `kWithInt16Stream && ...` and
// `kWithBranchNorm && ...` let the compiler drop the other branch.
#ifndef EDGEATTN_RUNTIME_BUILD_OPTIONS_H_
#define EDGEATTN_RUNTIME_BUILD_OPTIONS_H_

// EA_INT8_ONLY (CMake option of the kernels, seen by the runtime too): no
// float layers, so no float kernels and no float paths in the layers.
#ifndef EA_INT8_ONLY
#define EA_INT8_ONLY 0
#endif
// EA_WITH_INT16_STREAM (CMake option, ON by default): the 16-bit residual
// stream (issue 37) of the blocks, positions, embedding, layernorm, row_pool.
#ifndef EA_WITH_INT16_STREAM
#define EA_WITH_INT16_STREAM 1
#endif

// EA_WITH_BRANCH_NORM (CMake option, ON by default): encoder blocks with
// their norms on the sub-layers' outputs (EncoderBlock.branch_norm,
// Torch-KWT's post-norm), about 5 KB of an M4 firmware with blocks.
#ifndef EA_WITH_BRANCH_NORM
#define EA_WITH_BRANCH_NORM 1
#endif

namespace edgeattn {

constexpr bool kWithF32 = !EA_INT8_ONLY;
constexpr bool kWithInt16Stream = EA_WITH_INT16_STREAM != 0;
constexpr bool kWithBranchNorm = EA_WITH_BRANCH_NORM != 0;

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_BUILD_OPTIONS_H_
